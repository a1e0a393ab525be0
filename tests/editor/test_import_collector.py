"""``editor.importing.collector``: the cyclic garbage collector held off while an import runs,
its memory still bounded, the process's settings given back."""

from __future__ import annotations

import gc
import json

import pytest

from editor.importing import import_transcripts
from editor.importing.collector import YOUNG_OBJECTS, collector_spared
from editor.importing.report import ImportReport
from tests.editor.samples import conversation


class Node:
    """One half of a reference cycle, counting how many halves are alive."""

    alive = 0

    def __init__(self):
        Node.alive += 1
        self.other = None
        self.payload = bytearray(1_000)

    def __del__(self):
        Node.alive -= 1


def test_the_collector_is_held_off_while_an_import_runs_and_given_back(db, dataset):
    thresholds = gc.get_threshold()
    seen = []

    def progress(report: ImportReport) -> None:
        seen.append((gc.get_threshold()[0], gc.get_freeze_count() > 0))

    lines = "".join(
        json.dumps({"id": f"t{n}", "spec": "openchatml-2.2", "text": conversation()}) + "\n"
        for n in range(3)
    )
    import_transcripts(lines.encode(), dataset=dataset, name="c.jsonl", progress=progress)

    assert seen[0] == (YOUNG_OBJECTS, True)
    assert gc.get_threshold() == thresholds and gc.get_freeze_count() == 0


def test_garbage_cycles_are_still_collected_so_memory_stays_bounded():
    Node.alive = 0
    most = 0
    with collector_spared():
        for n in range(10 * YOUNG_OBJECTS):
            a, b = Node(), Node()
            a.other, b.other = b, a
            if n % 1000 == 0:
                most = max(most, Node.alive)
    # Never collected, 1,000,000 halves (1 GB) would be alive at the end.
    assert most < 4 * YOUNG_OBJECTS
    del a, b
    gc.collect()
    assert Node.alive == 0


def test_overlapping_imports_give_the_settings_back_when_the_last_one_ends():
    thresholds = gc.get_threshold()
    first, second = collector_spared(), collector_spared()
    first.__enter__()
    second.__enter__()
    first.__exit__(None, None, None)
    assert gc.get_threshold()[0] == YOUNG_OBJECTS and gc.get_freeze_count() > 0
    second.__exit__(None, None, None)
    assert gc.get_threshold() == thresholds and gc.get_freeze_count() == 0


def test_the_settings_are_given_back_when_the_import_fails():
    thresholds = gc.get_threshold()
    with pytest.raises(RuntimeError), collector_spared():
        raise RuntimeError("the import failed")
    assert gc.get_threshold() == thresholds and gc.get_freeze_count() == 0
