"""Property tests for the token-text family (chatml, openchatml-2.0, openchatml-2.2, harmony)."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from editor import formats
from editor.formats.codecs.openchatml2 import DIALECTS, OCM22
from editor.formats.codecs.scanner import escape
from editor.formats.model import CALL, END, RETURN, Message, Transcript
from editor.formats.stream import iter_messages
from tests.budget import examples

SPECS = ("chatml", "openchatml-2.0", "openchatml-2.2", "harmony")
FAST = settings(
    max_examples=examples(120), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)

names = st.from_regex(r"[a-z][a-z0-9_.:-]{0,12}", fullmatch=True)
values = st.from_regex(r"[A-Za-z0-9_.:/-]{1,12}", fullmatch=True)
plain_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40).filter(
    lambda t: "<|" not in t
)
TOKENS = [
    "<|start|>", "<|message|>", "<|channel|>", "<|constrain|>", "<|end|>", "<|call|>", "<|return|>",
    "<|end_message|>", "<|literal|>", "<|endliteral|>", "<<|end|>", "<|foo|>", "<", "|>", "<|",
]  # fmt: skip
soup = st.lists(
    st.one_of(st.sampled_from(TOKENS), names, st.sampled_from([" ", "\n", "=", "to=x"])),
    max_size=30,
).map("".join)


@st.composite
def messages(draw, spec):
    dialect = DIALECTS.get(spec)
    # 2.2 bodies may hold any text, control tokens escaped; the others cannot hold `<|`.
    content = (
        escape(draw(st.text(max_size=40)), OCM22.vocabulary)
        if spec == "openchatml-2.2"
        else draw(plain_text)
    )
    message = Message(role=draw(names.filter(lambda n: "=" not in n)), content=content)
    if spec == "chatml":
        return message
    message.channel = draw(st.none() | st.sampled_from(["analysis", "commentary", "final"]))
    message.recipient = draw(st.none() | values)
    message.end = draw(st.sampled_from([END, CALL, RETURN]))
    if spec == "openchatml-2.2":
        message.call_id = draw(st.none() | values)
        message.name = draw(st.none() | values)
        message.intent = draw(st.none() | st.sampled_from(["preamble", "status"]))
        message.constrain = draw(st.none() | st.just("json"))
    if (
        dialect is not None
        and message.channel is not None
        and draw(st.booleans())
        and message.recipient
    ):
        message.attrs = {"channel_attrs": ["to"]}
    return message


@st.composite
def transcripts(draw):
    spec = draw(st.sampled_from(SPECS))
    header = {}
    if spec in ("openchatml-2.0", "openchatml-2.2") and draw(st.booleans()):
        header = {"version": spec[-3:], "model": draw(values)}
    items = draw(st.lists(messages(spec), min_size=1, max_size=6))
    return Transcript(spec=spec, header=header, messages=items)


@FAST
@given(transcripts())
def test_serialize_then_parse_gives_the_same_transcript(transcript):
    text = formats.serialize(transcript)
    again, diagnostics = formats.parse(text, spec=transcript.spec)
    assert again == transcript, diagnostics
    assert not formats.has_errors(diagnostics)
    assert formats.serialize(again) == text


@FAST
@given(st.sampled_from(SPECS), st.one_of(st.text(max_size=200), soup))
def test_parse_never_raises_and_round_trips_malformed_text(spec, text):
    transcript, diagnostics = formats.parse(text, spec=spec)
    assert formats.serialize(transcript) == text
    for d in diagnostics:
        assert 0 <= d.offset <= len(text) and d.line >= 1 and d.column >= 1


@FAST
@given(transcripts(), st.lists(st.integers(1, 12), min_size=1, max_size=50))
def test_every_chunking_streams_to_the_same_messages(transcript, sizes):
    text = formats.serialize(transcript)
    whole, _ = formats.parse(text, spec=transcript.spec)
    chunks, pos = [], 0
    for size in sizes * (len(text) // max(1, sum(sizes)) + 1):
        chunks.append(text[pos : pos + size])
        pos += size
    assert "".join(chunks) == text
    assert list(iter_messages(chunks, transcript.spec)) == whole.messages


@FAST
@given(st.sampled_from(SPECS), soup, st.integers(1, 7))
def test_streaming_malformed_text_gives_the_same_messages(spec, text, size):
    whole, _ = formats.parse(text, spec=spec)
    chunks = [text[i : i + size] for i in range(0, len(text), size)]
    assert list(iter_messages(chunks, spec)) == whole.messages


@FAST
@given(transcripts(), st.data())
def test_editing_one_message_changes_only_its_bytes(transcript, data):
    text = formats.serialize(transcript)
    parsed, _ = formats.parse(text, spec=transcript.spec)
    index = data.draw(st.integers(0, len(parsed.messages) - 1))
    target = parsed.messages[index]
    before = text[: target.source.start]
    after = text[target.source.start + len(target.source.raw) :]
    target.content += "edited"
    out = formats.serialize(parsed)
    assert out.startswith(before) and out.endswith(after)
    assert formats.parse(out, spec=transcript.spec)[0].messages[index].content == target.content
