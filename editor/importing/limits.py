"""How much an import reads and holds at once (docs/security.md lists them with the others).

The readers look these up here when they run (``limits.MAX_LINE_BYTES``), so that one
setting, or a test patching it, holds everywhere.
"""

from __future__ import annotations

# One transcript is read whole; anything bigger than this is not one transcript.
MAX_TRANSCRIPT_BYTES = 64 * 1024 * 1024
# A JSONL line is one transcript too. A longer line is skipped piece by piece, never held whole.
MAX_LINE_BYTES = MAX_TRANSCRIPT_BYTES
# A zip is refused before anything is read from it when its members would inflate to more
# than this in all, or when it has more members than a dataset has transcripts; one member is
# refused unread when it inflates more than MAX_COMPRESSION_RATIO times (text deflates 3 to
# 20 times; a zip bomb 1000 times), unless it is small enough not to matter. What a zip
# declares may lie: the same bounds hold on the bytes as they actually inflate, and reading
# stops as soon as one is passed.
MAX_ARCHIVE_BYTES = 4 * 1024**3
MAX_ARCHIVE_MEMBERS = 200_000
MAX_COMPRESSION_RATIO = 200
RATIO_FREE_BYTES = 1024 * 1024
# The zip's central directory (what ``zipfile`` reads whole, and turns into an object per
# member) is refused past this size, read from its end record before ``zipfile`` opens it:
# 200,000 members with names of 280 characters fit.
MAX_DIRECTORY_BYTES = 64 * 1024 * 1024
# A batch is written, and its prepared transcripts let go, after this many characters of source
# text even when it has fewer than ``batch_size`` items: a few huge items must not all be
# held at once.
BATCH_BYTES = 32 * 1024 * 1024
# In all-or-nothing mode reading goes on after a failure (nothing more is written) so that
# the report names every bad item, up to this many.
MAX_REPORTED_FAILURES = 1000


def amount(size: int) -> str:
    """``64 MB``, ``64 KB``: a limit as people read it."""
    for unit, scale in (("GB", 1024**3), ("MB", 1024**2), ("KB", 1024)):
        if size >= scale:
            return f"{size / scale:.3g} {unit}"
    return f"{size} bytes"
