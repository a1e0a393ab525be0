"""Property tests: generated transcripts survive serialize → parse; parsing never raises."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from editor import formats
from editor.formats.model import CALL, END, RETURN, Message, Transcript
from tests.budget import examples

SETTINGS = settings(
    max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
JSON_SPECS = ["mms", "openai-messages", "sharegpt", "chatml-json", "openchatml-json"]
ALL_MINE = [*JSON_SPECS, "openchatml-0.1", "mms-tokens"]

# Text that cannot contain a control token or the v0.1 [EOS] marker.
plain = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="<|[]"), max_size=30
)
word = st.text(
    st.characters(whitelist_categories=("Ll", "Lu", "Nd"), whitelist_characters="_"),
    min_size=1,
    max_size=8,
)


def roundtrip(transcript: Transcript) -> Transcript:
    text = formats.serialize(transcript)
    again, diagnostics = formats.parse(text, spec=transcript.spec)
    # A generated open last message is reported as truncated, and nothing else is.
    errors = [d.code for d in diagnostics if d.severity == "error"]
    assert errors in ([], ["E-STREAM-TRUNCATED"]), (text, diagnostics)
    return again


@st.composite
def v01_transcripts(draw):
    messages = [
        Message(
            role=draw(st.sampled_from(["system", "user", "assistant", "tool"])),
            name=draw(st.none() | word),
            content=draw(plain),
        )
        for _ in range(draw(st.integers(1, 4)))
    ]
    return Transcript(
        spec="openchatml-0.1",
        messages=messages,
        attrs={k: True for k in draw(st.sets(st.sampled_from(["bos", "eos"])))},
    )


@st.composite
def fim_transcripts(draw):
    roles = draw(
        st.lists(
            st.sampled_from(["fim_prefix", "fim_middle", "fim_suffix"]), min_size=1, max_size=3
        )
    )
    return Transcript(
        spec="openchatml-0.1", messages=[Message(role=r, content=draw(plain)) for r in roles]
    )


@st.composite
def mms_messages(draw, tokens: bool):
    count = draw(st.integers(1, 4))
    out = []
    for i in range(count):
        role = draw(st.sampled_from(["platform", "developer", "user", "assistant", "context"]))
        fmt = draw(st.none() | st.sampled_from(["markdown", "json", "browser:js", "weather:json"]))
        end_turn = draw(st.booleans())
        recipient, _, kind = (
            (fmt or "").rpartition(":") if fmt and ":" in fmt else (None, None, fmt)
        )
        if end_turn:
            end = RETURN
        elif role == "assistant" and recipient:
            end = CALL
        elif tokens and role == "assistant" and i == count - 1:
            end = None  # the token form cannot close it without <|end_turn|>
        else:
            end = END
        attrs = {"format": fmt} if fmt else {}
        out.append(
            Message(
                role=role,
                content=draw(plain),
                name=draw(st.none() | word) if role == "context" else None,
                recipient=recipient or None,
                content_type=kind,
                end=end,
                attrs=attrs,
            )
        )
    return out


@st.composite
def openai_messages(draw):
    out = []
    for n in range(draw(st.integers(1, 4))):
        role = draw(st.sampled_from(["system", "user", "assistant", "tool"]))
        if role == "assistant" and draw(st.booleans()):
            out.append(Message(role=role, content=draw(plain), channel="analysis"))
        # Empty content beside tool calls is not a message of its own (documented).
        content = draw(plain.filter(bool) if role == "assistant" else plain)
        out.append(Message(role=role, content=content, call_id=f"c{n}" if role == "tool" else None))
        if role == "assistant" and draw(st.booleans()):
            out.append(
                Message(
                    role=role,
                    content="{}",
                    channel="commentary",
                    recipient="functions." + draw(word),
                    call_id=f"x{n}",
                    constrain="json",
                    end=CALL,
                )
            )
    return out


@SETTINGS
@given(v01_transcripts())
def test_v01_round_trip(transcript):
    assert roundtrip(transcript) == transcript


@SETTINGS
@given(fim_transcripts())
def test_v01_fim_round_trip(transcript):
    assert roundtrip(transcript) == transcript


@SETTINGS
@given(mms_messages(tokens=False))
def test_mms_json_round_trip(messages):
    transcript = Transcript(spec="mms", messages=messages)
    assert roundtrip(transcript) == transcript


@SETTINGS
@given(mms_messages(tokens=True))
def test_mms_tokens_round_trip(messages):
    transcript = Transcript(spec="mms-tokens", messages=messages)
    assert roundtrip(transcript) == transcript


@SETTINGS
@given(openai_messages())
def test_openai_round_trip(messages):
    transcript = Transcript(spec="openai-messages", messages=messages)
    assert roundtrip(transcript) == transcript


@SETTINGS
@given(
    st.lists(
        st.tuples(st.sampled_from(["user", "assistant", "system"]), plain), min_size=1, max_size=4
    )
)
def test_sharegpt_and_chatml_json_round_trip(pairs):
    for spec in ("sharegpt", "chatml-json"):
        transcript = Transcript(spec=spec, messages=[Message(role=r, content=c) for r, c in pairs])
        assert roundtrip(transcript) == transcript


@SETTINGS
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["user", "assistant", "tool"]),
            st.sampled_from([None, "analysis", "commentary", "final"]),
            plain,
            st.sampled_from([END, RETURN]),
        ),
        min_size=1,
        max_size=4,
    )
)
def test_openchatml_json_round_trip(rows):
    messages = [Message(role=r, channel=ch, content=c, end=e) for r, ch, c, e in rows]
    transcript = Transcript(spec="openchatml-json", messages=messages)
    assert roundtrip(transcript) == transcript


@SETTINGS
@given(st.text(max_size=200), st.sampled_from(ALL_MINE))
def test_parse_never_raises_on_text(text, spec):
    formats.parse(text, spec=spec)
    formats.detect(text)


token_soup = st.lists(
    st.sampled_from(
        [
            "<|im_start|>",
            "<|im_end|>",
            "<|fim_prefix|>",
            "<|fim_middle|>",
            "<|file_separator|>",
            "<|function_call|>",
            "<|start_reason|>",
            "[BOS]",
            "[EOS]",
            "\n",
            "user name=x",
            "{",
            "}",
            "<|role|>",
            "<|format|>",
            "<|content|>",
            "<|end_turn|>",
            "<|name|>",
            "a:b",
            " ",
        ]
    ),
    max_size=25,
).map("".join)


@SETTINGS
@given(token_soup, st.sampled_from(["openchatml-0.1", "mms-tokens"]))
def test_token_soup_parses_and_round_trips(text, spec):
    transcript, _ = formats.parse(text, spec=spec)
    assert formats.serialize(transcript) == text


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=10),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                [
                    "role",
                    "content",
                    "from",
                    "value",
                    "token",
                    "messages",
                    "conversations",
                    "format",
                    "end_turn",
                    "tool_calls",
                    "tool_call",
                    "thinking",
                    "channel",
                    "name",
                    "x",
                ]
            ),
            inner,
            max_size=5,
        )
    ),
    max_leaves=15,
)


@SETTINGS
@given(json_values, st.sampled_from(JSON_SPECS))
def test_parse_never_raises_on_json_values(value, spec):
    text = json.dumps(value)
    transcript, _ = formats.parse(text, spec=spec)
    formats.serialize(transcript)
    formats.detect(text)
