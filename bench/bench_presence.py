"""The transcript page's heartbeat (``editor.presence``): what one open page costs the server
every 10 seconds.

* a ping while nothing changed, with 20 others having the transcript open (server time
  through the whole Django stack, test client, HTTPS; and the SQL statements it runs);
* a ping after someone saved (the History panel comes back out of band);
* a ping of a 10,000-message transcript (nothing in a ping reads the messages).

The cache is the settings' own: local memory here, Redis in production (one more round trip
a cache operation; three a ping).

    .venv/bin/python -m bench.bench_presence        # or `make bench` (every benchmark)
"""

from __future__ import annotations

from bench.bench_editor import long_transcript
from bench.databases import on_each_database
from bench.report import main, timed

OTHERS = 20


def run() -> None:
    on_each_database("bench.bench_presence")


def _child() -> None:
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.db import connection, connections
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from editor import editing, formats, presence
    from editor.models import Dataset, Membership, Role, Transcript
    from editor.storage.create import create_transcript

    call_command("migrate", verbosity=0)
    users = get_user_model().objects
    dataset = Dataset.objects.create(name="Bench", slug="bench")
    me = users.create_user("me")
    Membership.objects.create(user=me, dataset=dataset, role=Role.ANNOTATOR)
    small = create_transcript(
        dataset, text=long_transcript(formats, 20, 100), spec="openchatml-2.2", author=me
    )
    big = create_transcript(
        dataset, text=long_transcript(formats, 10_000, 500), spec="openchatml-2.2", author=me
    )
    for n in range(OTHERS):
        other = users.create_user(f"other{n}")
        for transcript in (small, big):
            presence.heartbeat(transcript.pk, other)
    client = Client()
    client.force_login(me)

    def ping(transcript, seen):
        response = client.post(
            f"/transcripts/{transcript.pk}/presence/", {"seen": seen}, secure=True
        )
        assert response.status_code == 200, response.status_code
        return response

    def statements(transcript, seen) -> int:
        ping(transcript, seen)
        with CaptureQueriesContext(connection) as captured:
            ping(transcript, seen)
        return len(captured.captured_queries)

    print(f"  ({OTHERS} others have each transcript open)")
    timed("ping, nothing saved", lambda n: ping(small, 1))
    print(f"    SQL statements a ping: {statements(small, 1)}")
    editing.edit_message(
        Transcript.objects.select_related("dataset").get(pk=small.pk),
        1,
        {"content": "changed"},
        expected_version=1,
        author=me,
    )
    timed("ping after a save (History panel out of band)", lambda n: ping(small, 1))
    print(f"    SQL statements a ping: {statements(small, 1)}")
    timed("ping, a 10,000-message transcript", lambda n: ping(big, 1))
    connections.close_all()


if __name__ == "__main__":
    main(run, _child)
