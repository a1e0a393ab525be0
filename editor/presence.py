"""Who has a transcript open: each open page pings (``heartbeat``) every ``PING_SECONDS``,
and is taken to be closed once it has not pinged for ``STALE_SECONDS``.

Kept in the shared cache only (Redis in production, so every web worker sees every page; the
local-memory cache of a one-process setup sees its own): nothing is written to the database,
and what is lost with the cache is only who was there a few seconds ago. Per transcript, one
key per open page's user, expiring on its own, and a roster of who has pinged lately (ids
and names), rewritten only when someone new arrives: a ping is three cache operations
whoever is there. Two arrivals at once may overwrite each other's roster entry; each
page's next ping writes it again.
"""

from __future__ import annotations

import time

from django.core.cache import cache

PING_SECONDS = 10  # how often an open page pings (the template's hx-trigger says the same)
# A page not heard from for this long is closed: two pings missed, a slow answer allowed.
STALE_SECONDS = 25
# The roster outlives its pages a little: a user who comes back soon is known already.
ROSTER_SECONDS = 600


def heartbeat(transcript_id: int, user) -> list[str]:
    """``user`` has transcript ``transcript_id`` open now; who else has it open (their names,
    sorted)."""
    now = time.time()
    cache.set(_seen_key(transcript_id, user.pk), now, STALE_SECONDS)
    roster_key = _roster_key(transcript_id)
    roster: dict[int, str] = cache.get(roster_key) or {}
    if roster.get(user.pk) != user.get_username():
        roster = {**roster, user.pk: user.get_username()}
        cache.set(roster_key, roster, ROSTER_SECONDS)
    others = [pk for pk in roster if pk != user.pk]
    if not others:
        return []
    seen = cache.get_many([_seen_key(transcript_id, pk) for pk in others])
    return sorted(
        roster[pk]
        for pk in others
        if now - seen.get(_seen_key(transcript_id, pk), 0) <= STALE_SECONDS
    )


def _seen_key(transcript_id: int, user_id: int) -> str:
    return f"presence:{transcript_id}:{user_id}"


def _roster_key(transcript_id: int) -> str:
    return f"presence:{transcript_id}:roster"
