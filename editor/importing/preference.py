"""Importing preference data: a TRL or HH-RLHF row becomes a transcript and its pair.

A row (``editor.formats.preference.read_row``) becomes one transcript: the prompt and the
chosen completion as its own turn, written in the row's spec (``openai-messages`` for plain
text and HH rows, with the row's ``tools``). Once the transcript is created, the turn gets
two alternatives, the chosen one (``source="transcript"``: it is the turn as it stands) and
the rejected one (``source="import"``), and the transcript a ``PreferencePair``
(``source="import"``). Only created transcripts get them: a row whose id names an existing
transcript updates it like any import, without a second pair.

Rows are recognised by their keys (``chosen`` and ``rejected``, ``is_preference_row``) on
JSONL lines and in JSON arrays, or read as such whatever their keys with the import's
``shape`` (``preference``; ``hh`` also reads strings as HH-RLHF turns).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from editor import formats
from editor.formats import preference
from editor.formats.canonical import message_dict
from editor.importing.candidates import Candidate, unreadable
from editor.models import Alternative, AlternativeSource, PairSource, PreferencePair, Transcript
from editor.storage.create import NewTranscript
from editor.turns import content_hash

TRANSCRIPTS, PREFERENCE, HH = preference.IMPORT_SHAPES
SHAPES = preference.IMPORT_SHAPES
ROW_CODE = "invalid-preference-row"
ROW_MARKERS = (b'"chosen"', b'"rejected"')  # both in a line: worth decoding to look closer


@dataclass
class PairedTranscript(NewTranscript):
    """A transcript to create with the pair it was imported with: ``preference`` is
    ``{"message_index", "chosen", "rejected"}`` (canonical message dicts)."""

    preference: dict | None = None


def is_row_line(raw: bytes, shape: str | None) -> bool:
    """A JSONL line to read as a preference row: any line with ``shape`` preference or hh;
    with no shape, a line that names both ``chosen`` and ``rejected`` (decoded to be sure
    by ``row_value``)."""
    if shape in (PREFERENCE, HH):
        return True
    return shape is None and all(marker in raw for marker in ROW_MARKERS)


def row_value(raw: bytes) -> Any:
    """The JSON value of a line, or None when it is not JSON (the transcript reader then
    says why)."""
    try:
        return formats.load_json(raw.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError):
        return None


def wants_rows(value: Any, shape: str | None) -> bool:
    """Whether ``value`` (a decoded line or array item) is read as a preference row."""
    if shape in (PREFERENCE, HH):
        return True
    return shape is None and preference.is_preference_row(value)


def row_candidate(
    value: Any, location: str, number: int, spec: str | None, shape: str | None
) -> Candidate:
    """The candidate one preference row is (a transcript with its pair), or the row's
    problems as an unreadable item."""
    read = preference.read_row(
        value, row=number, spec=spec, shape=preference.HH if shape == HH else None
    )
    if read.row is None:
        said = "; ".join(
            f"{p.code} at {p.field or 'the row'}: {p.message}"
            + (f" ({p.detail})" if p.detail else "")
            for p in read.problems
        )
        return unreadable(location, ROW_CODE, said)
    row = read.row
    attrs = {"tools": row.tools} if row.tools and row.spec == formats.CHAT_DATASET_SPEC else {}
    transcript = formats.Transcript(spec=row.spec, messages=[*row.prompt, *row.chosen], attrs=attrs)
    candidate = Candidate(
        location,
        text=formats.serialize(transcript, row.spec),
        spec=row.spec,
        external_id=_text(value.get("id")),
        title=_text(value.get("title")),
        metadata=value["metadata"] if isinstance(value.get("metadata"), dict) else {},
    )
    candidate.preference = {
        "message_index": len(row.prompt),
        "chosen": [message_dict(m, row.spec) for m in row.chosen],
        "rejected": [message_dict(m, row.spec) for m in row.rejected],
    }
    return candidate


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def paired(new: NewTranscript, pair: dict | None) -> NewTranscript:
    """``new`` carrying ``pair`` when the candidate came with one."""
    if pair is None:
        return new
    return PairedTranscript(**new.__dict__, preference=pair)


def is_pair(new: NewTranscript) -> bool:
    """Whether ``new`` came from a preference row, with its pair (``paired``)."""
    return getattr(new, "preference", None) is not None


def record_imported_pair(transcript: Transcript, new: NewTranscript, author) -> None:
    """The alternatives and the pair of a transcript created from a preference row."""
    if not is_pair(new):
        return
    pair = new.preference
    index = pair["message_index"]
    prompt = [message_dict(m, transcript.spec) for m in new.parsed().canonical.messages[:index]]
    Alternative.objects.bulk_create(
        [
            Alternative(
                transcript=transcript,
                message_index=index,
                messages=messages,
                content_hash=content_hash(messages),
                source=source,
                created_by=author,
            )
            for messages, source in (
                (pair["chosen"], AlternativeSource.TRANSCRIPT),
                (pair["rejected"], AlternativeSource.IMPORT),
            )
        ],
        ignore_conflicts=True,  # chosen == rejected: one alternative, still a (silly) pair
    )
    PreferencePair.objects.create(
        transcript=transcript,
        message_index=index,
        source=PairSource.IMPORT,
        prompt=prompt,
        chosen=pair["chosen"],
        rejected=pair["rejected"],
        author=author,
    )


def array_candidates(
    data: bytes, location: str, spec: str | None, shape: str | None
) -> list[Candidate] | None:
    """The candidates of a JSON array file of preference rows (every item one, or any
    array with ``shape`` preference or hh); None when the file is not such an array."""
    if shape == TRANSCRIPTS or not data.lstrip().startswith(b"["):
        return None
    value = row_value(data)
    if not isinstance(value, list) or not value:
        return None
    if not all(wants_rows(item, shape) for item in value):
        return None
    return [
        row_candidate(item, f"{location}[{n}]", n + 1, spec, shape) for n, item in enumerate(value)
    ]
