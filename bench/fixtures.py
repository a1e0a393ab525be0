"""What the dataset benchmarks set up the same way, in their child process once
``django.setup()`` has run (``bench.databases``): the throwaway database migrated, a curator
``bench`` of a dataset ``bench``, and transcripts written in batches (memory stays flat).

Django and the app are imported inside the functions: a benchmark's module is imported by
the parent process too, which has no settings."""

from __future__ import annotations

from collections.abc import Callable

BATCH = 1000  # transcripts written per create_transcripts call


def bench_dataset():
    """The database migrated, then ``(curator, dataset)``: user ``bench``, curating
    dataset ``bench``."""
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    from editor.models import Dataset, Membership, Role

    call_command("migrate", verbosity=0)
    user = get_user_model().objects.create_user("bench")
    dataset = Dataset.objects.create(name="Bench", slug="bench")
    Membership.objects.create(user=user, dataset=dataset, role=Role.CURATOR)
    return user, dataset


def add_transcripts(dataset, user, count: int, content: Callable[[int], object]) -> None:
    """``count`` transcripts titled ``t0``, ``t1``…, the n-th holding ``content(n)`` (a
    ``TranscriptContent``), written ``BATCH`` at a time."""
    from editor.storage.create import NewTranscript, create_transcripts

    for first in range(0, count, BATCH):
        last = min(first + BATCH, count)
        create_transcripts(
            dataset,
            [NewTranscript(content(n), title=f"t{n}") for n in range(first, last)],
            author=user,
        )


def same_content(messages: int, body: int):
    """A ``content`` for ``add_transcripts``: every transcript the same OpenChatML text of
    ``messages`` messages, bodies of about ``body`` characters (``bench_editor``)."""
    from bench.bench_editor import long_transcript
    from editor import formats
    from editor.storage.content import TranscriptContent

    content = TranscriptContent.from_text(
        long_transcript(formats, messages, body), "openchatml-2.2"
    )
    return lambda n: content
