"""Labels in exports: each transcript's annotations, placed in the exported spec's own
messages and content.

A message label goes where its message went: to the message of the export written from it
(``ExportedTranscript.origins``), numbered as the exported file numbers its messages (an
OpenAI assistant message with reasoning and tool calls is one message, its parts numbered
``part``). A span keeps its offsets when the exported message's logical text has its text
there, moves to where the text stands when it is there exactly once (a merged v0.1 body, an
escaped 2.2 body), and otherwise is a loss. A label whose message the export does not carry
(dropped by the target spec, hidden from the end user) is a loss too: never moved elsewhere.
"""

from __future__ import annotations

from collections.abc import Iterable

from editor import formats
from editor.formats import as_written
from editor.models import AnchorState, Annotation

ANNOTATION_FIELD = "annotation"


def placed_annotations(
    annotations: Iterable[Annotation], *, text: str, spec: str, origins
) -> tuple[list[dict], list[dict]]:
    """``annotations`` of one transcript as export rows, and the losses of those that cannot
    follow into ``text`` (the export, in ``spec``). ``origins``: for each exported message,
    the stored messages it comes from (None: the stored messages as they are)."""
    exported = formats.parse(text, spec).transcript
    if origins is None:
        origins = [(index,) for index in range(len(exported.messages))]
    files = as_written.file_messages(exported)
    place = {
        part: (number, k, len(group))
        for number, group in enumerate(files)
        for k, part in enumerate(group)
    }
    rows, losses = [], []
    for annotation in annotations:
        row = {
            "schema": annotation.schema_version.schema.name,
            "schema_version": annotation.schema_version.number,
            "question": annotation.question,
            "annotator": annotation.annotator.get_username(),
            "state": annotation.state,
            "value": annotation.value,
        }
        if annotation.message_index is None:
            rows.append(row)
            continue
        problem = _place(row, annotation, exported, origins, place, spec)
        if problem is None:
            rows.append(row)
        else:
            losses.append(
                {
                    "message_index": annotation.message_index,
                    "field": ANNOTATION_FIELD,
                    "detail": f"{annotation.question} by {row['annotator']}: {problem}",
                }
            )
    return rows, losses


def _place(row, annotation, exported, origins, place, spec) -> str | None:
    """Fill ``row``'s message index (and span offsets); or say why the label cannot follow."""
    if annotation.anchor_state == AnchorState.ORPHANED:
        return "its message was deleted"
    if len(origins) != len(exported.messages):
        return f"the {spec} text does not read back message for message"
    targets = [t for t, origin in enumerate(origins) if annotation.message_index in origin]
    if not targets:
        return f"its message is not in the {spec} export"
    target = targets[0]
    number, part, parts = place.get(target, (target, 0, 1))
    row["message_index"] = number
    if parts > 1:
        row["part"] = part
    if annotation.start is None:
        return None
    body = formats.logical_text(spec, exported.messages[target].content)
    covered = annotation.text
    if body[annotation.start : annotation.end] == covered:
        start = annotation.start
    elif body.count(covered) == 1:
        start = body.index(covered)
    else:
        return f"the text it tags ({covered!r}) is not in the {spec} message exactly once"
    row.update(start=start, end=start + len(covered), text=covered)
    if annotation.anchor_state != AnchorState.OK:
        row["anchor_state"] = annotation.anchor_state
    return None
