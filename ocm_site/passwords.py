"""The password hasher: Argon2id in one lane.

Django's own Argon2 parameters (100 MiB, eight lanes) hash on every core at once: on a busy
two-core server a log-in then waited as long as with PBKDF2 (docs/performance.md). One lane of
64 MiB and two passes is three times the memory and time OWASP's Password Storage Cheat Sheet
asks of Argon2id at least, and a log-in takes one core for about a tenth of a second.
"""

from __future__ import annotations

from django.contrib.auth.hashers import Argon2PasswordHasher


class Argon2idPasswordHasher(Argon2PasswordHasher):
    """Argon2id, 64 MiB, two passes, one lane. Its hashes are ``argon2$argon2id$…`` like
    Django's and carry their parameters: one made with other parameters still verifies, and
    is made again with these at its owner's next log-in."""

    time_cost = 2
    memory_cost = 64 * 1024  # KiB
    parallelism = 1
