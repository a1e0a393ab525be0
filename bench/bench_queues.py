"""Review queues at work: claim-next throughput, and agreement over 10,000 items.

* claim and submit: 8 concurrent clients (threads, a connection each) work through 400 items
  with overlap 2 on PostgreSQL; on SQLite, whose writers take turns, one client does. Prints
  claims per second (each claim followed by its submit, as an annotator does) and checks that
  no item went over its overlap;
* one claim in a queue of 10,000 items whose first half is done (median of 5);
* agreement: Cohen's kappa and Krippendorff's alpha over 10,000 items (``editor.labels.agreement``);
* the keyboard flow: the requests the queue page makes per item when an annotator works with
  the keyboard alone (``tests/browser/test_annotator_day.py`` drives the same flow in
  Chromium), timed through the whole Django stack with the test client: 20 items, two
  annotators, then the reviewer's decisions; with the keystrokes the flow takes per item.

    .venv/bin/python -m bench.bench_queues          # or `make bench` (every benchmark)
    OCM_BENCH_QUEUES=keyboard .venv/bin/python -m bench.bench_queues   # the keyboard flow only
"""

from __future__ import annotations

import os
import random
import statistics
import threading
import time

from bench.databases import on_each_database
from bench.report import main

ITEMS = 400
OVERLAP = 2
CLIENTS = 8
LONG_QUEUE = 10_000
AGREEMENT_ITEMS = 10_000
KEYBOARD_ITEMS = 20
KEYBOARD_ONLY = os.environ.get("OCM_BENCH_QUEUES") == "keyboard"


def run() -> None:
    on_each_database("bench.bench_queues")
    if not KEYBOARD_ONLY:
        _agreement()


def _agreement() -> None:
    from editor.labels import agreement

    rng = random.Random(7)
    two = {
        item: {"a": rng.choice("xyz"), "b": rng.choice("xyz")} for item in range(AGREEMENT_ITEMS)
    }
    many = {item: {f"r{n}": rng.randint(1, 5) for n in range(5)} for item in range(AGREEMENT_ITEMS)}
    for label, answers, level in (
        ("Cohen's kappa, 2 annotators", two, "nominal"),
        ("Krippendorff's alpha, 5 annotators", many, "ordinal"),
    ):
        started = time.perf_counter()
        result = agreement.agreement(answers, level=level)
        print(
            f"agreement: {label:36} {AGREEMENT_ITEMS} items  "
            f"{(time.perf_counter() - started) * 1000:7.1f} ms  (value {result.value:.3f})",
            flush=True,
        )


def _child() -> None:
    import django

    django.setup()
    from collections import Counter

    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.db import connection, connections

    from editor import formats, queues
    from editor.models import Dataset, Membership, QueueAssignment, Role
    from editor.storage.content import TranscriptContent
    from editor.storage.create import NewTranscript, create_transcripts

    call_command("migrate", verbosity=0)
    users = get_user_model().objects
    curator = users.create_user("bench-curator")
    dataset = Dataset.objects.create(name="Bench", slug="bench")
    Membership.objects.create(user=curator, dataset=dataset, role=Role.CURATOR)
    if KEYBOARD_ONLY:
        _keyboard_flow(dataset, curator)
        connections.close_all()
        return
    text = formats.serialize(
        formats.Transcript(
            spec="openchatml-2.2",
            messages=[formats.Message(role="user", content="Hello?")],
        )
    )
    content = TranscriptContent.from_text(text, "openchatml-2.2")
    transcripts = create_transcripts(
        dataset, [NewTranscript(content) for _ in range(ITEMS)], author=curator
    )
    queue = queues.create_queue(dataset, transcripts, name="Bench", author=curator, overlap=OVERLAP)
    concurrent = connection.vendor == "postgresql"
    clients = CLIENTS if concurrent else 1
    workers = []
    for n in range(CLIENTS):
        user = users.create_user(f"bench-annotator-{n}")
        Membership.objects.create(user=user, dataset=dataset, role=Role.ANNOTATOR)
        workers.append(user)
    connections.close_all()

    done = Counter()

    def work(user):
        try:
            while (assignment := queues.claim_next(queue, user)) is not None:
                queues.submit(assignment, user)
                done[user.pk] += 1
        finally:
            connections.close_all()

    started = time.perf_counter()
    if concurrent:
        threads = [threading.Thread(target=work, args=(user,)) for user in workers]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    else:
        for user in workers[:OVERLAP]:  # one client at a time; overlap needs two of them
            work(user)
    seconds = time.perf_counter() - started
    claims = sum(done.values())
    per_item = Counter(
        QueueAssignment.objects.filter(item__queue=queue).values_list("item", flat=True)
    )
    assert max(per_item.values()) <= OVERLAP and len(per_item) == ITEMS, "overlap broken"
    print(
        f"  claim+submit, {clients} client{'s' if clients > 1 else ''}: {claims} claims "
        f"in {seconds:5.2f} s  {claims / seconds:7.1f} claims/s  (no item over its overlap)",
        flush=True,
    )
    _claims_in_a_long_queue(dataset, curator, content, workers)
    # Last: its label schema (a required question) would be asked by the queues above.
    _keyboard_flow(dataset, curator)
    connections.close_all()


def _claims_in_a_long_queue(dataset, curator, content, workers) -> None:
    """One claim in a queue of ``LONG_QUEUE`` items (overlap 2) whose first half an annotator
    has done: for that annotator (the claim walks past the items they worked on), for
    another (the first item has a free place), and for that other once a second annotator has
    done the first half too (the walk passes full items). Median of 5, each rolled back."""
    import statistics
    from datetime import timedelta

    from django.db import connection, transaction
    from django.utils import timezone

    from editor import queues
    from editor.models import AssignmentState, QueueAssignment, QueueItem
    from editor.storage.create import NewTranscript, create_transcripts

    transcripts = []
    for _ in range(0, LONG_QUEUE, 1000):
        batch = [NewTranscript(content) for _ in range(1000)]
        transcripts += create_transcripts(dataset, batch, author=curator)
    queue = queues.create_queue(dataset, transcripts, name="Long", author=curator, overlap=2)
    first_half = QueueItem.objects.filter(queue=queue).order_by("position")[: LONG_QUEUE // 2]
    done, other, second = workers[:3]
    now = timezone.now()

    def submitted(user, slot):
        QueueAssignment.objects.bulk_create(
            QueueAssignment(
                item=item,
                annotator=user,
                state=AssignmentState.SUBMITTED,
                slot=slot,
                claimed_at=now,
                expires_at=now + timedelta(hours=1),
                submitted_at=now,
            )
            for item in first_half
        )
        if connection.vendor == "postgresql":  # as autovacuum would after such a write
            with connection.cursor() as cursor:
                cursor.execute("ANALYZE")

    def timed(label, user):
        times = []
        for _ in range(5):
            with transaction.atomic():
                started = time.perf_counter()
                queues.claim_next(queue, user)
                times.append(time.perf_counter() - started)
                transaction.set_rollback(True)
        print(f"  {label:60} {statistics.median(times) * 1000:6.1f} ms", flush=True)

    submitted(done, 0)
    timed(f"claim in {LONG_QUEUE:,} items, past the {LONG_QUEUE // 2:,} I did", done)
    timed(f"claim in {LONG_QUEUE:,} items, the first one free", other)
    submitted(second, 1)
    timed(f"claim in {LONG_QUEUE:,} items, past {LONG_QUEUE // 2:,} full ones", other)


# What the annotators answer (tests/browser/test_annotator_day.py asks the same).
KEYBOARD_QUESTIONS = [
    {"key": "helpful", "kind": "rating", "prompt": "How helpful is this answer?",
     "applies_to": "message", "roles": ["assistant"], "scale": 5},
    {"key": "claims", "kind": "span", "prompt": "Tag wrong claims", "roles": ["assistant"],
     "tags": [{"value": "wrong", "label": "Wrong claim", "key": "w"}]},
    {"key": "overall", "kind": "choice", "prompt": "Overall, is the conversation good?",
     "required": True, "options": [{"value": "good", "label": "Good", "key": "1"},
                                   {"value": "bad", "label": "Bad", "key": "2"}]},
]  # fmt: skip
# The keys one item takes (the browser test counts the same): 1 (the required question),
# j 4 (rate message #1), j j 5 (rate message #3), w (tag the selected words), Ctrl+Enter.
# A reviewer's approval is one key (a), for each annotator's work on the item.
KEYSTROKES_PER_ITEM = 8


def _keyboard_flow(dataset, curator) -> None:
    """Server time per item of the keyboard flow, request by request (median over the items
    of both annotators, in ms), with the test client over the whole Django stack (middleware,
    views, templates; no network, no browser)."""
    from django.contrib.auth import get_user_model
    from django.test import Client

    from editor import formats, queues
    from editor.labels import create_label_schema
    from editor.models import AssignmentState, Membership, QueueAssignment, Role
    from editor.storage.content import TranscriptContent
    from editor.storage.create import NewTranscript, create_transcripts

    messages = []
    for turn in range(2):
        messages += [
            formats.Message(role="user", content=f"Question {turn}?"),
            formats.Message(role="assistant", channel="final", content=f"Answer {turn}."),
        ]
    text = formats.serialize(
        formats.Transcript(spec="openchatml-2.2", header={"version": "2.2"}, messages=messages)
    )
    content = TranscriptContent.from_text(text, "openchatml-2.2")
    transcripts = create_transcripts(
        dataset, [NewTranscript(content) for _ in range(KEYBOARD_ITEMS)], author=curator
    )
    schema = create_label_schema(
        dataset, author=curator, name="Keyboard", questions=KEYBOARD_QUESTIONS
    )
    queue = queues.create_queue(
        dataset, transcripts, name="Keyboard", author=curator, overlap=2, schemas=[schema]
    )
    hx = {"HX-Request": "true", "HX-Current-URL": f"https://testserver/queues/{queue.pk}/"}
    times: dict[str, list[float]] = {}

    def timed(label: str, client, method: str, path: str, data=None) -> None:
        started = time.perf_counter()
        response = getattr(client, method)(path, data or {}, headers=hx, secure=True)
        elapsed = (time.perf_counter() - started) * 1000
        assert response.status_code == 200, (label, response.status_code)
        times.setdefault(label, []).append(elapsed)

    for name in ("bench-keys-1", "bench-keys-2"):
        annotator = get_user_model().objects.create_user(name)
        Membership.objects.create(user=annotator, dataset=dataset, role=Role.ANNOTATOR)
        client = Client()
        client.force_login(annotator)
        # The first request of each annotator: its median of 2 includes the first rendering.
        timed("claim (Enter on Start)", client, "post", f"/queues/{queue.pk}/claim/")
        for _ in range(KEYBOARD_ITEMS):
            held = QueueAssignment.objects.get(
                item__queue=queue, annotator=annotator, state=AssignmentState.CLAIMED
            )
            answers = f"/transcripts/{held.item.transcript_id}/answers/"
            answer = {"schema": schema.pk}
            timed("answer: 1", client, "post", answers, {**answer, "question": "overall", "value": "good"})  # fmt: skip
            for index, value in ((1, 4), (3, 5)):
                timed("answer: a rating (j, 4)", client, "post", answers,
                      {**answer, "question": "helpful", "value": value, "message_index": index})  # fmt: skip
            timed("tag: w on the selected words", client, "post",
                  f"/transcripts/{held.item.transcript_id}/spans/",
                  {**answer, "question": "claims", "value": "wrong", "message_index": 3,
                   "start": 0, "end": 6})  # fmt: skip
            timed("submit (Ctrl+Enter) + the next item", client, "post",
                  f"/assignments/{held.pk}/submit/")  # fmt: skip

    reviewer = Client()
    reviewer.force_login(curator)
    hx["HX-Current-URL"] = f"https://testserver/queues/{queue.pk}/review/"
    timed("review page (the first item)", reviewer, "get", f"/queues/{queue.pk}/review/")
    while (
        pending := QueueAssignment.objects.filter(
            item__queue=queue, state=AssignmentState.SUBMITTED
        )
        .order_by("item__position", "annotator__username")
        .first()
    ):
        timed("decision (a) + the next", reviewer, "post",
              f"/assignments/{pending.pk}/review/", {"decision": "approve"})  # fmt: skip

    statuses = set(queue.items.values_list("transcript__status", flat=True))
    assert statuses == {"approved"}, statuses  # both submissions of each item approved

    per_item = {"annotating": 0.0, "reviewing": 0.0}
    for label, values in times.items():
        middle = statistics.median(values)
        print(f"  {label:44} {middle:7.1f} ms  (median of {len(values)})", flush=True)
        if label.startswith(("answer", "tag", "submit")):
            per_item["annotating"] += middle * (2 if "rating" in label else 1)
        elif label.startswith("decision"):
            per_item["reviewing"] += middle * 2  # two annotators' work on each item
    print(
        f"  per item, annotating: {KEYSTROKES_PER_ITEM} keystrokes, 5 requests, "
        f"{per_item['annotating']:.0f} ms of server time; reviewing (two submissions, "
        f"approved): 2 keystrokes, {per_item['reviewing']:.0f} ms",
        flush=True,
    )


if __name__ == "__main__":
    main(run, _child)
