"""A JSONL record is validated first without positions (``json`` alone), and read again,
located, only when it has a diagnostic. That first reading is only a shortcut: whatever the
record, ``validate_record`` reports exactly what the located reading reports. And the blocks a
dataset is cut into for the workers keep every line, with its number."""

from __future__ import annotations

import io
import json
from functools import partial
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from editor.formats import jsonl
from tests.budget import examples

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
JSON_SPECS = ("openai-messages", "sharegpt", "openchatml-json", "chatml-json", "mms")


def located(line: bytes, spec: str | None = None, number: int = 7) -> jsonl.RecordReport:
    """What ``validate_record`` reports when every record is read with positions."""
    return jsonl._validated(jsonl.read_record(number, line, spec))


def same(a: jsonl.RecordReport, b: jsonl.RecordReport) -> bool:
    return (a.number, a.spec, a.messages, a.diagnostics) == (
        b.number,
        b.spec,
        b.messages,
        b.diagnostics,
    )


def fixture_documents() -> list[tuple[str, str]]:
    """Every JSON document of the fixture corpora, as (name, text)."""
    found = []
    for spec in JSON_SPECS:
        for path in sorted((FIXTURES / spec).glob("*/*.json")):
            if not path.name.endswith(".expected.json"):
                found.append((path.name, path.read_text("utf-8")))
    for path in sorted((FIXTURES / "validate").glob("*.json")):
        if not path.name.endswith(".expected.json"):
            found.append((path.name, path.read_text("utf-8")))
    for path in sorted((FIXTURES / "convert").glob("*.json")):
        case = json.loads(path.read_text("utf-8"))
        for side, spec in (("input", case["from"]), ("output", case["to"])):
            if spec in JSON_SPECS:
                found.append((f"{path.name}:{side}", case[side]))
    return found


def one_line(text: str) -> bytes:
    """The document on one line, as a dataset holds it (kept as written when it is not JSON)."""
    try:
        return json.dumps(json.loads(text), ensure_ascii=False).encode()
    except ValueError:
        return text.replace("\n", " ").encode()


@pytest.mark.parametrize(("name", "text"), fixture_documents(), ids=lambda v: v[:60])
def test_every_fixture_document_is_reported_as_the_located_reading_reports_it(name, text):
    line = one_line(text)
    assert same(jsonl.validate_record(7, line, None), located(line))


def test_a_record_with_a_diagnostic_has_its_position():
    line = json.dumps(
        {
            "messages": [
                {"role": "user", "content": "weather?"},
                {"role": "tool", "tool_call_id": "nope", "content": "20"},
            ]
        }
    ).encode()
    report = jsonl.validate_record(3, line, None)
    unknown = next(d for d in report.diagnostics if d.code == "E-CALL-REPLY-UNKNOWN")
    assert unknown.offset == line.index(b'{"role": "tool"')
    assert same(report, located(line, number=3))


ROLES = st.sampled_from(["user", "assistant", "system", "tool", "developer", "function", 3, None])
TEXT = st.sampled_from(["hi", "", "{", '{"city": "Oslo"}', '{"tool_calls": []}', "é\n"])
ARGUMENTS = st.sampled_from(['{"city": "Oslo"}', '{"city": 3}', "{", "", '{"x": NaN}', 7])
IDS = st.sampled_from(["c1", "c2", None, 5])


@st.composite
def tool_calls(draw):
    call = {"id": draw(IDS), "type": draw(st.sampled_from(["function", "web"]))}
    call["function"] = draw(
        st.sampled_from(
            [
                {"name": "get_weather", "arguments": draw(ARGUMENTS)},
                {"name": "unknown_tool", "arguments": draw(ARGUMENTS)},
                {"arguments": "{}"},
                "get_weather",
            ]
        )
    )
    return {k: v for k, v in call.items() if v is not None or draw(st.booleans())}


@st.composite
def chat_messages(draw):
    message = {"role": draw(ROLES)}
    if draw(st.booleans()):
        message["content"] = draw(
            st.one_of(TEXT, st.none(), st.just([{"type": "text"}]), st.just(5))
        )
    if draw(st.booleans()):
        message[draw(st.sampled_from(["reasoning", "reasoning_content", "thinking"]))] = draw(TEXT)
    if draw(st.booleans()):
        message["tool_calls"] = draw(st.one_of(st.lists(tool_calls(), max_size=2), st.just({})))
    if draw(st.booleans()):
        message["tool_call_id"] = draw(IDS)
    if draw(st.booleans()):
        message["name"] = draw(st.sampled_from(["get_weather", "bob", 1]))
    if draw(st.booleans()):
        message["extra"] = draw(TEXT)
    return message if draw(st.integers(0, 9)) else draw(st.sampled_from(["hi", 1, None, []]))


TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            },
        },
    }
]


@st.composite
def records(draw) -> bytes:
    messages = draw(st.lists(chat_messages(), max_size=6))
    shape = draw(st.sampled_from(["bare", "messages", "tools", "sharegpt", "envelope"]))
    if shape == "bare":
        document = messages
    elif shape == "sharegpt":
        turns = [{"from": draw(st.sampled_from(["human", "gpt", "x"])), "value": "hi"}]
        document = {"conversations": turns * draw(st.integers(0, 3))}
    else:
        document = {"messages": messages}
        if shape == "tools":
            document["tools"] = TOOLS
        if shape == "envelope":
            document = {"id": 1, "document": document}
    return (
        json.dumps(document, ensure_ascii=False, indent=draw(st.sampled_from([None, 1])))
        .replace("\n", " ")
        .encode()
    )


@settings(max_examples=examples(300), deadline=None)
@given(records(), st.sampled_from([None, "openai-messages", "sharegpt", "harmony"]))
def test_any_record_is_reported_as_the_located_reading_reports_it(line, spec):
    assert same(jsonl.validate_record(7, line, spec), located(line, spec))


# --- blocks --------------------------------------------------------------------------------


def numbers(source, monkeypatch, block_bytes: int) -> list[tuple[int, bytes]]:
    monkeypatch.setattr(jsonl, "BLOCK_BYTES", block_bytes)

    def echo(number: int, line: bytes) -> jsonl.RecordReport:
        return jsonl.RecordReport(number, line.decode(), 0, [])

    return [(r.number, r.spec.encode()) for r in jsonl.run(source, echo)]


LINES = [b'{"a": 1}', b"", b"  ", b'{"b": "' + b"x" * 300 + b'"}', b'{"c": 3}\r', b"", b'{"d": 4}']
EXPECTED = [
    (1, b'{"a": 1}'),
    (4, b'{"b": "' + b"x" * 300 + b'"}'),
    (5, b'{"c": 3}'),
    (7, b'{"d": 4}'),
]


@pytest.mark.parametrize("block_bytes", [1, 7, 64, 1 << 20])
@pytest.mark.parametrize("final_newline", [True, False])
def test_a_stream_is_cut_into_blocks_of_whole_numbered_lines(
    monkeypatch, block_bytes, final_newline
):
    data = b"\n".join(LINES) + (b"\n" if final_newline else b"")
    assert numbers(io.BytesIO(data), monkeypatch, block_bytes) == EXPECTED


def test_lines_given_one_by_one_are_numbered_the_same(monkeypatch):
    monkeypatch.setattr(jsonl, "BATCH_LINES", 2)
    given_lines = [line + b"\n" if i % 2 else line for i, line in enumerate(LINES)]
    assert numbers(given_lines, monkeypatch, 1 << 20) == EXPECTED


def test_workers_read_the_blocks_in_order(tmp_path, monkeypatch):
    monkeypatch.setattr(jsonl, "BLOCK_BYTES", 4096)
    path = tmp_path / "data.jsonl"
    good = json.dumps({"messages": [{"role": "user", "content": "hi"}]})
    path.write_text("\n".join([good, "", "{bad"] * 300) + "\n", encoding="utf-8")
    with path.open("rb") as stream:
        reports = list(jsonl.run(stream, partial(jsonl.validate_record, spec=None), jobs=2))
    assert [r.number for r in reports] == [n for k in range(300) for n in (3 * k + 1, 3 * k + 3)]
    assert [bool(r.diagnostics) for r in reports] == [False, True] * 300


def echo(number: int, line: bytes) -> jsonl.RecordReport:
    """A task the worker processes can unpickle (module level)."""
    return jsonl.RecordReport(number, line.decode(), 0, [])


@pytest.mark.parametrize("block_bytes", [1, 7, 64, 1 << 20])
@pytest.mark.parametrize("final_newline", [True, False])
def test_workers_read_ranges_of_a_file_numbered_as_a_stream(
    tmp_path, monkeypatch, block_bytes, final_newline
):
    path = tmp_path / "data.jsonl"
    path.write_bytes(b"\n".join(LINES) + (b"\n" if final_newline else b""))
    monkeypatch.setattr(jsonl, "BLOCK_BYTES", block_bytes)
    with path.open("rb") as stream:
        got = [(r.number, r.spec.encode()) for r in jsonl.run(stream, echo, jobs=2)]
    assert got == EXPECTED


@pytest.mark.parametrize("block_bytes", [1, 5, 300, 1 << 20])
def test_file_ranges_cover_the_file_in_whole_lines(tmp_path, monkeypatch, block_bytes):
    data = b"\n".join(LINES * 20)  # no final LF
    path = tmp_path / "data.jsonl"
    path.write_bytes(data)
    monkeypatch.setattr(jsonl, "BLOCK_BYTES", block_bytes)
    with path.open("rb") as stream:
        ranges = list(jsonl._file_ranges(stream))
    pieces = [data[offset : offset + length] for _, offset, length in ranges]
    assert b"".join(pieces) == data
    assert all(piece.endswith(b"\n") for piece in pieces[:-1])
    assert all(length > 0 for _, _, length in ranges)


def test_an_empty_file_has_no_records(tmp_path):
    path = tmp_path / "empty.jsonl"
    path.write_bytes(b"")
    with path.open("rb") as stream:
        assert list(jsonl.run(stream, echo, jobs=2)) == []


# --- the envelope: one reader for ``ocm`` and the importer (docs/formats.md) ----------------

MESSAGES = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
CHATML = "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\nhello<|im_end|>\n"


def line_of(value) -> bytes:
    """A dataset line: bytes as given, a str as the JSON text it is, anything else dumped."""
    if isinstance(value, bytes):
        return value
    return (value if isinstance(value, str) else json.dumps(value)).encode()


def read(value, spec: str | None = None) -> jsonl.Record:
    return jsonl.read_record(3, jsonl.record_line(line_of(value)), spec)


def test_an_envelope_gives_its_body_spec_and_fields():
    record = read(
        {
            "id": 7,
            "spec": "chatml",
            "text": CHATML,
            "title": "T",
            "metadata": {"lang": "en"},
            "status": "approved",
            "extra": 1,
        }
    )
    assert (record.text, record.spec, record.external_id, record.title) == (
        CHATML,
        "chatml",
        "7",
        "T",
    )
    assert (record.metadata, record.status, record.problem) == ({"lang": "en"}, "approved", None)
    assert record.envelope == {
        "id": 7,
        "title": "T",
        "metadata": {"lang": "en"},
        "status": "approved",
        "extra": 1,
    }


def test_the_envelopes_spec_wins_over_the_readers():
    # Was: ``ocm validate --spec`` read every envelope in its spec, the importer in the
    # envelope's own. The record says what it is written in; ``--spec`` is for the others.
    assert read({"spec": "chatml", "text": CHATML}, spec="harmony").spec == "chatml"
    assert read({"text": CHATML}, spec="chatml").spec == "chatml"
    assert read({"messages": MESSAGES}, spec="openchatml-json").spec == "openchatml-json"
    assert read({"messages": MESSAGES}).spec == "openai-messages"


def test_a_json_array_is_a_bare_document():
    # Was: the importer refused any line but an object; ``ocm`` read an array as a document.
    tokens = ["<|im_start|>", "user", "\n", "hi", "<|im_end|>"]
    assert read(tokens).spec == "chatml-json"
    record = read(MESSAGES)
    assert (record.spec, record.external_id, record.problem) == ("openai-messages", "", None)


def test_a_bare_document_is_named_by_its_top_level_id():
    assert read({"id": "d1", "messages": MESSAGES}).external_id == "d1"
    assert read({"id": ["not", "a", "name"], "messages": MESSAGES}).external_id == ""


@pytest.mark.parametrize(
    ("value", "reason", "message"),
    [
        ('"a string"', "invalid-envelope", "expected a JSON object or array"),
        ("3", "invalid-envelope", "expected a JSON object or array"),
        ({"text": CHATML, "document": MESSAGES}, "invalid-envelope", "not both"),
        ({"text": 3}, "invalid-envelope", '"text" must be a string'),
        ({"text": CHATML, "spec": 3}, "invalid-envelope", '"spec" must be a string'),
        ({"text": CHATML, "title": 3}, "invalid-envelope", '"title" must be a string'),
        ({"text": CHATML, "metadata": []}, "invalid-envelope", '"metadata" must be an object'),
        ({"text": CHATML, "status": True}, "invalid-envelope", '"status" must be a string'),
        ({"text": CHATML, "id": True}, "invalid-envelope", '"id" must be a string or an integer'),
        ({"text": CHATML, "id": 1.5}, "invalid-envelope", '"id" must be a string or an integer'),
        ({"text": CHATML, "spec": "nope"}, "unknown-spec", "Unknown spec id 'nope'"),
        ('{"text": ', "invalid-json", "The line is not valid JSON: Expecting value (column 10)"),
        (b"\xff{}", "not-utf8", "The line is not UTF-8 (invalid byte at column 1)"),
    ],
)
def test_a_record_that_is_not_a_transcript_says_why(value, reason, message):
    # Was: ``ocm`` took "text" when both bodies were given (the document lost), checked no
    # field but "text" and "spec", and tried to detect a spec in a JSON scalar.
    record = read(value)
    assert (record.text, record.reason) == (None, reason)
    assert message in record.problem.message
    expected = "E-PARSE-JSON" if reason in ("invalid-json", "not-utf8") else "E-PARSE-SHAPE"
    assert record.problem.code == expected
    assert jsonl.validate_record(3, jsonl.record_line(line_of(value)), None).diagnostics == [
        record.problem
    ]


def test_null_fields_are_absent():
    # Was: the importer refused "title": null (and an empty "id"); ``ocm`` did not look.
    line = {"id": None, "spec": None, "title": None, "metadata": None, "status": None}
    record = read({**line, "text": CHATML})
    assert (record.problem, record.spec, record.external_id, record.title) == (None, None, "", "")
    assert (record.metadata, record.status) == ({}, "")
    assert read({"id": "", "text": CHATML}).external_id == ""


def test_an_envelope_naming_its_spec_with_an_empty_body_is_an_empty_transcript():
    assert read({"spec": "chatml", "text": " \n"}).empty
    assert read({"spec": "chatml-json", "document": []}).empty
    assert not read({"text": ""}).empty  # no spec: nothing says what it is
    assert not read({"spec": "chatml", "text": CHATML}).empty


def test_a_byte_order_mark_starts_no_record():
    # Was: ``ocm`` failed a dataset's first line after a BOM as invalid JSON (the importer
    # skipped it on the first line only); a file joined with ``cat`` has one on any line.
    good = json.dumps({"messages": MESSAGES}).encode()
    data = b"\xef\xbb\xbf" + good + b"\n\xef\xbb\xbf" + good + b"\n\xef\xbb\xbf\n"
    reports = list(jsonl.run(io.BytesIO(data), partial(jsonl.validate_record, spec=None)))
    assert [(r.number, r.spec, r.diagnostics) for r in reports] == [
        (1, "openai-messages", []),
        (2, "openai-messages", []),
    ]
    assert jsonl.is_dataset(b"\xef\xbb\xbf" + good)
    assert not jsonl.is_dataset(b'\xef\xbb\xbf{"role": "user", "content": "hi"}')
