"""OpenChatML 2.0, OpenChatML 2.2 and Harmony (gpt-oss): one parser, three dialects.

    document   = [yaml-header] lead *(message gap)              ; header: 2.x only (header.py)
    message    = "<|start|>" head [channel] [constrain] ["<|message|>" body] [terminator]
    head       = ROLE *(WSP attribute) [WSP]                    ; 2.2 §6
    channel    = "<|channel|>" CHANNEL *(WSP attribute) [WSP]   ; HIP-1: to= may come here
    constrain  = "<|constrain|>" CTYPE [WSP]
    attribute  = KEY "=" VALUE                                  ; to, call_id, name, intent, content_type, …
    terminator = "<|end|>" / "<|call|>" / "<|return|>"
    body       = *(text / escape / literal)                     ; escape, literal: 2.2 only (scanner.py)

The scanner finds every control token once; the parser walks that token list and slices the
text between tokens, so no character is looked at twice by Python code. Problems become
diagnostics and parsing goes on: a message cut off by the next ``<|start|>`` is closed as
truncated, stray text and unknown tokens are kept (in ``Message.gap`` / the body) so that
``serialize(parse(x)) == x`` holds for malformed input too.

``Message.content`` is the body exactly as written, escapes and literal markers included;
``scanner.unescape(content, dialect.vocabulary)`` gives the logical text.
ChatML (chatml.py) is a dialect of the same engine with fewer tokens.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..diagnostics import Diagnostics, Edit, Fix
from ..model import CALL, END, RETURN, Message, Transcript, stamp_span
from ..specinfo import CUT_OFF, TERMINATOR_LABELS, SpecInfo, Vocabulary
from ..specs import Codec
from ..words import TRUNCATED, Badge, PartContext, optional_badges
from . import header as yaml_header
from .scanner import (
    ESCAPE,
    LITERAL,
    LITERAL_CLOSE,
    LITERAL_OPEN,
    UNKNOWN,
    UNTERMINATED_LITERAL,
    Token,
    TokenStream,
    token,
)

if TYPE_CHECKING:
    from ..render import RenderedItem

# Token names (the text between `<|` and `|>`).
START = "start"
CHANNEL = "channel"
CONSTRAIN = "constrain"
MESSAGE = "message"
END_TOKEN = "end"
CALL_TOKEN = "call"
RETURN_TOKEN = "return"
ENDLITERAL = "endliteral"
COT_MARKERS = frozenset({"start_reflect", "start_introspect", "start_reason"})  # 2.x §7: body text


# Header attributes with a Message field of their own, in the canonical order of 2.2 §6.
KNOWN_ATTRS = ("to", "call_id", "name", "intent", "content_type")
FIELD_OF = {"to": "recipient", "call_id": "call_id", "name": "name", "intent": "intent"}
FIELD_OF["content_type"] = "content_type"
# Every selection of KNOWN_ATTRS in canonical order, to check an order with one set lookup.
IN_ORDER = frozenset(
    tuple(k for i, k in enumerate(KNOWN_ATTRS) if mask >> i & 1)
    for mask in range(1 << len(KNOWN_ATTRS))
)

# Keys of Message.attrs this module reads and writes.
HEADER_ATTRS = "header_attrs"  # {key: value} of attributes without a field; value None: a bare word
CHANNEL_ATTRS = "channel_attrs"  # keys written after <|channel|> rather than in the start header
ATTR_ORDER = "attr_order"  # keys in written order, kept only when it is not the canonical order
HEADER_ONLY = "header_only"  # `<|start|>assistant` at the end: a completion prompt, no <|message|>
# A completion as inference engines return it: the first message starts at <|channel|>, its
# `<|start|>assistant` being the end of the prompt (harmony, ollama, llama.cpp, vLLM read so).
IMPLIED_START = "implied_start"
IMPLIED_ROLE = "assistant"
CRLF = "\r\n"
BARE_CONTENT_TYPE = "bare_content_type"  # Harmony `to=python code`: content type without `key=`

WORD_RE = re.compile(r"\S+")  # the words str.split() finds
KEY_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*")
WHITESPACE = " \t\r\n\f\v"

# Parser states while reading one message.
IN_HEAD = 0
IN_BODY = 1


@dataclass(frozen=True)
class Dialect:
    spec: str
    vocabulary: frozenset[str]
    terminators: dict[str, str]  # token name -> Message.end
    end_tokens: dict[str, str]  # Message.end -> token name written by the canonical form
    yaml_header: bool = False
    escapes: bool = False  # `<<|` escapes and <|literal|> blocks (2.2)
    channels: bool = True  # <|channel|> and <|constrain|> exist
    body_markers: frozenset[str] = frozenset()  # tokens that are ordinary text in a body
    open_body_is_prompt: bool = False  # ChatML: a partial last message is a completion request
    # Harmony: a space before <|constrain|> even right after the channel, as openai/harmony's
    # renderer writes it (`<|channel|>commentary <|constrain|>json`)
    space_before_constrain: bool = False
    bare_content_type: bool = False  # Harmony: a bare word after the channel is a content type
    default_gap: str = "\n"
    head_tokens: frozenset[str] = field(default=frozenset({CHANNEL, CONSTRAIN}))


OCM_TERMINATORS = {END_TOKEN: END, CALL_TOKEN: CALL, RETURN_TOKEN: RETURN}
OCM_END_TOKENS = {END: END_TOKEN, CALL: CALL_TOKEN, RETURN: RETURN_TOKEN}
OCM_TOKENS = frozenset({START, CHANNEL, CONSTRAIN, MESSAGE, END_TOKEN, CALL_TOKEN, RETURN_TOKEN})

OCM20 = Dialect(
    spec="openchatml-2.0",
    # 2.0 §3 lists six tokens; <|constrain|> is accepted too because HIP-1 producers emit it.
    vocabulary=OCM_TOKENS | COT_MARKERS,
    terminators=OCM_TERMINATORS,
    end_tokens=OCM_END_TOKENS,
    yaml_header=True,
    body_markers=COT_MARKERS,
)
OCM22 = Dialect(
    spec="openchatml-2.2",
    vocabulary=OCM_TOKENS | COT_MARKERS | {ENDLITERAL},
    terminators=OCM_TERMINATORS,
    end_tokens=OCM_END_TOKENS,
    yaml_header=True,
    escapes=True,
    body_markers=COT_MARKERS,
)
HARMONY = Dialect(
    spec="harmony",
    vocabulary=OCM_TOKENS,
    terminators=OCM_TERMINATORS,
    end_tokens=OCM_END_TOKENS,
    space_before_constrain=True,
    bare_content_type=True,
    default_gap="",
)
DIALECTS = {d.spec: d for d in (OCM20, OCM22, HARMONY)}


class _Part:
    """One header part: the text after <|start|>, <|channel|> or <|constrain|>."""

    __slots__ = ("end", "kind", "start")

    def __init__(self, kind: str, start: int):
        self.kind = kind
        self.start = start
        self.end = start


# --- parsing ---------------------------------------------------------------------------------


def parse_document(src: str, sink: Diagnostics, dialect: Dialect) -> Transcript:
    """document = [yaml-header] lead *(message gap)"""
    header: dict = {}
    pos = 0
    layout: dict = {"spec": dialect.spec}
    if dialect.yaml_header:
        head = yaml_header.read_header(src, sink)
        header = head.value
        pos = head.span.end
        layout["header_form"] = head.span.form
        layout["header_text"] = src[:pos]
        layout["header"] = _copy(header)
    stream = TokenStream(src, dialect.vocabulary, escapes=dialect.escapes, literals=dialect.escapes)
    first_item = len(sink.items)
    messages, lead_end = parse_messages(src, pos, stream, sink, dialect)
    layout["lead"] = src[pos:lead_end]
    first_newline = src.find("\n")
    if first_newline > 0 and src[first_newline - 1] == "\r":
        layout["newline"] = CRLF  # what an edited header and new messages' gaps use too
    if not messages:
        sink.add("E-PARSE-EMPTY", pos, "No message found: a message begins with <|start|>")
    # A message's header problems are found after its body's; report in document order.
    sink.items[first_item:] = sorted(sink.items[first_item:], key=lambda d: d.offset)
    return Transcript(spec=dialect.spec, header=header, messages=messages, layout=layout)


def parse_messages(
    src: str, pos: int, stream: TokenStream, sink: Diagnostics, dialect: Dialect
) -> tuple[list[Message], int]:
    """*(gap message) gap; returns the messages and where the first one starts.

    Blank gaps and well-formed messages are sliced with ``str.find`` (``_fast_message``);
    anything else goes through the token stream, which reports what is wrong.
    """
    messages: list[Message] = []
    lead_end = len(src)
    start_text = token(START)
    find = src.find
    first = len(src) - len(src[pos:].lstrip(WHITESPACE))
    if dialect.channels and src.startswith(token(CHANNEL), first):
        lead_end = first
        message, pos = _slow_message(src, first, stream, sink, dialect, 0, implied=True)
        messages.append(message)
    while True:
        at = find(start_text, pos)
        gap = src[pos:] if at == -1 else src[pos:at]
        if gap and not gap.isspace():
            at = _slow_gap(src, pos, stream, sink, dialect, len(messages))
            gap = src[pos:] if at == -1 else src[pos:at]
        if messages:
            messages[-1].gap = gap
        elif at != -1:
            lead_end = at
        if at == -1:
            return messages, lead_end
        fast = _fast_message(src, at, dialect)
        if fast is None:
            message, pos = _slow_message(src, at, stream, sink, dialect, len(messages))
        else:
            message, pos = fast
        messages.append(message)


def _slow_gap(src, pos, stream, sink, dialect, index) -> int:
    """Report what stands between messages; returns where the next message starts, or -1."""
    text_from = pos
    for tok in stream.tokens(pos):
        _stray_text(src, text_from, tok.start, sink, index)
        if tok.kind == START:
            return tok.start
        _stray_token(src, tok, sink, dialect, index)
        text_from = tok.end
    _stray_text(src, text_from, len(src), sink, index)
    return -1


def _stray_text(src: str, start: int, end: int, sink: Diagnostics, index: int) -> None:
    """Non-blank text outside messages: models never see it as part of a message."""
    if start >= end:
        return
    text = src[start:end]
    if text.isspace():
        return
    first = start + len(text) - len(text.lstrip(WHITESPACE))
    last = start + len(text.rstrip(WHITESPACE))
    sink.add(
        "W-PARSE-STRAY-TEXT",
        first,
        f"Text outside any message: {_preview(src[first:last])}",
        message_index=index - 1 if index else None,
        fix=Fix("Remove the stray text", (Edit(first, last, ""),)),
    )


def _stray_token(src: str, tok: Token, sink: Diagnostics, dialect: Dialect, index: int) -> None:
    if tok.kind in (ESCAPE, LITERAL, UNTERMINATED_LITERAL):
        sink.add(
            "W-PARSE-STRAY-TEXT",
            tok.start,
            f"Text outside any message: {_preview(src[tok.start : tok.end])}",
            message_index=index - 1 if index else None,
        )
    elif tok.kind == UNKNOWN:
        _unknown_token(src, tok, sink, index - 1 if index else None)
    else:
        sink.add(
            "E-PARSE-UNEXPECTED-TOKEN",
            tok.start,
            f"{src[tok.start : tok.end]} outside a message (a message begins with <|start|>)",
            message_index=index - 1 if index else None,
            fix=Fix("Remove the token", (Edit(tok.start, tok.end, ""),)),
        )


def _unknown_token(src: str, tok: Token, sink: Diagnostics, index: int | None) -> None:
    sink.add(
        "W-PARSE-UNKNOWN-TOKEN",
        tok.start,
        f"{src[tok.start : tok.end]} is not a token of this spec; it is kept as text",
        message_index=index,
    )


# The header of a well-formed message up to its body, in one match: no `<` inside (so no
# escape and no other token), the parts in grammar order. Possessive repeats: no backtracking.
FAST_HEAD_RE = re.compile(
    r"<\|start\|>([^<]*+)(?:<\|channel\|>([^<]*+))?(?:<\|constrain\|>([^<]*+))?<\|message\|>"
)


def _fast_message(src: str, at: int, dialect: Dialect) -> tuple[Message, int] | None:
    """A well-formed message at ``at``, or None when any part of it needs the full parser.

    Same result as ``_slow_message`` for the messages it accepts: the header holds only header
    tokens in their place, attributes known and single, and the first ``<|`` after
    ``<|message|>`` is a terminator.
    """
    head = FAST_HEAD_RE.match(src, at)
    if head is None:
        return None
    head_text, channel_text, constrain_text = head.groups()
    if not dialect.channels and (channel_text is not None or constrain_text is not None):
        return None
    body_start = head.end()
    # Both finds stop at the next `<|`, so a text of unclosed messages stays linear.
    stop = src.find("<|", body_start)
    if stop == -1 or (dialect.escapes and stop > body_start and src[stop - 1] == "<"):
        return None
    close = src.find("|>", stop + 2, stop + 20)
    end_kind = dialect.terminators.get(src[stop + 2 : close]) if close != -1 else None
    if end_kind is None:
        return None
    words = head_text.split()
    if not words or "=" in words[0]:
        return None
    role = words[0]
    fields: dict[str, str] = {}  # attribute -> value, in written order
    if len(words) > 1 and not _fast_attributes(words, fields):
        return None
    attrs: dict = {}
    channel = constrain = None
    if channel_text is not None:
        words = channel_text.split()
        if not words or "=" in words[0]:
            return None
        channel = words[0]
        if len(words) > 1:
            start_keys = len(fields)
            if not _fast_attributes(words, fields):
                return None
            attrs[CHANNEL_ATTRS] = list(fields)[start_keys:]
    if constrain_text is not None:
        words = constrain_text.split()
        if len(words) != 1:
            return None
        constrain = words[0]
    end = close + 2
    content = src[body_start:stop]
    if fields:
        if len(fields) > 1:
            written = list(fields)
            split = len(written) - len(attrs.get(CHANNEL_ATTRS, ()))
            if tuple(written[:split]) not in IN_ORDER or tuple(written[split:]) not in IN_ORDER:
                attrs[ATTR_ORDER] = written
        get = fields.get
        message = Message(
            role,
            content,
            channel,
            get("to"),
            get("name"),
            get("call_id"),
            get("intent"),
            get("content_type"),
            constrain,
            end_kind,
            attrs,
        )
    else:  # most messages: no attribute at all
        message = Message(
            role, content, channel, None, None, None, None, None, constrain, end_kind, attrs
        )
    return stamp_span(message, dialect.spec, src, at, end), end


def _fast_attributes(words: list[str], fields: dict[str, str]) -> bool:
    """Known attributes, each once: anything else is left to the full parser's diagnostics."""
    for word in words[1:]:
        key, _, value = word.partition("=")
        if not value or key not in FIELD_OF or key in fields:
            return False
        fields[key] = value
    return True


def _slow_message(
    src: str,
    at: int,
    stream: TokenStream,
    sink: Diagnostics,
    dialect: Dialect,
    index: int,
    *,
    implied: bool = False,
) -> tuple[Message, int]:
    """message = "<|start|>" head [channel] [constrain] ["<|message|>" body] [terminator]

    Walks the tokens from the <|start|> at ``at``; returns the message and where it ends.
    ``implied``: the message starts at its <|channel|> (a completion, ``IMPLIED_START``).
    """
    tokens = stream.tokens(at)
    start_tok = next(tokens)
    parts = [_Part(START, start_tok.end)]
    if implied:
        sink.add(
            "I-PARSE-IMPLIED-START",
            at,
            "The first message starts at <|channel|>: read as a completion, its "
            "<|start|>assistant implied (the prompt ended with it)",
            message_index=index,
        )
        parts = [_Part(START, at), _Part(CHANNEL, start_tok.end)]
    state = IN_HEAD
    body_start = -1
    no_message_token = False  # a terminator ended the header: its loose words are the body
    end_kind: str | None = None
    terminators = dialect.terminators
    for tok in tokens:
        kind = tok.kind
        if kind in terminators:
            end_kind = terminators[kind]
            if state == IN_HEAD:
                parts[-1].end = tok.start
                # <|message|> goes before the loose words, which are read as the body.
                loose_at = _loose_words_start(src, parts[-1], implied)
                insert_at = tok.start if loose_at is None else loose_at
                read = (
                    "the message has no body"
                    if loose_at is None
                    else ("the header's loose words are read as the body")
                )
                sink.add(
                    "E-PARSE-UNEXPECTED-TOKEN",
                    tok.start,
                    f"{src[tok.start : tok.end]} before <|message|>: {read}",
                    message_index=index,
                    fix=Fix("Insert <|message|>", (Edit(insert_at, insert_at, token(MESSAGE)),)),
                )
                body_start = tok.start
                no_message_token = True
            body_end = tok.start
            end = tok.end
            break
        if kind == START:
            end = tok.start
            if state == IN_HEAD:
                parts[-1].end = end
            body_end = end
            _unclosed(src, body_start, end, sink, dialect, index)
            break
        if state == IN_HEAD:
            if kind == MESSAGE:
                parts[-1].end = tok.start
                state = IN_BODY
                body_start = tok.end
            elif kind in dialect.head_tokens and dialect.channels:
                parts[-1].end = tok.start
                _check_head_order(src, parts, tok, sink, index)
                parts.append(_Part(kind, tok.end))
            else:
                _text_token(src, tok, sink, dialect, index, in_body=False)
        else:
            _text_token(src, tok, sink, dialect, index, in_body=True)
    else:
        end = len(src)
        if state == IN_HEAD:
            parts[-1].end = end
        body_end = end
        _open_at_end(src, body_start, end, sink, dialect, index)
    message = _build(
        src, parts, body_start, body_end, end_kind, sink, dialect, index, implied, no_message_token
    )
    return stamp_span(message, dialect.spec, src, at, end), end


def _loose_words_start(src: str, part: _Part, implied: bool) -> int | None:
    """Where the words of a header part that are neither its name nor attributes begin."""
    words = list(WORD_RE.finditer(src, part.start, part.end))
    named = 0 if part.kind == CONSTRAIN or (part.kind == START and implied) else 1
    loose = [m for m in words[named:] if "=" not in m.group()]
    return loose[0].start() if loose else None


def _check_head_order(src: str, parts: list[_Part], tok: Token, sink: Diagnostics, index: int):
    kinds = [p.kind for p in parts]
    if tok.kind in kinds or (tok.kind == CHANNEL and CONSTRAIN in kinds):
        sink.add(
            "E-PARSE-UNEXPECTED-TOKEN",
            tok.start,
            f"{src[tok.start : tok.end]} out of place: a header is "
            "<|start|>ROLE [<|channel|>CHANNEL] [<|constrain|>TYPE] <|message|>",
            message_index=index,
        )


def _text_token(
    src: str, tok: Token, sink: Diagnostics, dialect: Dialect, index: int, *, in_body: bool
) -> None:
    """A token kept as text inside a message; reported unless the grammar makes it text."""
    kind = tok.kind
    if kind in (ESCAPE, LITERAL) or (in_body and kind in dialect.body_markers):
        return
    if kind == UNTERMINATED_LITERAL:
        sink.add(
            "E-PARSE-UNTERMINATED-LITERAL",
            tok.start,
            "<|literal|> without a matching <|endliteral|>; the rest is read as ordinary text",
            message_index=index,
        )
    elif kind == UNKNOWN:
        _unknown_token(src, tok, sink, index)
    else:
        fix = None
        if dialect.escapes:
            fix = Fix("Escape it as text (<<|…|>)", (Edit(tok.start, tok.start, "<"),))
        where = "the message body" if in_body else "a message header"
        sink.add(
            "E-PARSE-UNEXPECTED-TOKEN",
            tok.start,
            f"{src[tok.start : tok.end]} is not allowed in {where}; it is kept as text",
            message_index=index,
            fix=fix,
        )


def _closing_fix(src: str, body_start: int, end: int, dialect: Dialect) -> Fix | None:
    if body_start < 0:
        return None
    at = body_start + len(src[body_start:end].rstrip(WHITESPACE))
    closer = token(dialect.end_tokens[END])
    return Fix(f"Insert {closer}", (Edit(at, at, closer),))


UNCLOSED_TEXT = "<|start|> before the previous message ended; that message is read as truncated"


def _unclosed(src, body_start, end, sink, dialect, index) -> None:
    sink.add(
        "E-PARSE-UNCLOSED-MESSAGE",
        end,
        UNCLOSED_TEXT,
        message_index=index,
        fix=_closing_fix(src, body_start, end, dialect),
    )


def _open_at_end(src, body_start, end, sink, dialect, index) -> None:
    if body_start < 0 or dialect.open_body_is_prompt:
        sink.add(
            "I-PARSE-COMPLETION-PROMPT",
            end,
            "The last message is open: a completion prompt for the model to continue",
            message_index=index,
            fix=_closing_fix(src, body_start, end, dialect),
        )
        return
    sink.add(
        "E-STREAM-TRUNCATED",
        end,
        "The input ends inside a message: no <|end|>, <|call|> or <|return|>",
        message_index=index,
        fix=_closing_fix(src, body_start, end, dialect),
    )


def _build(
    src, parts, body_start, body_end, end_kind, sink, dialect, index, implied, no_message_token
) -> Message:
    """The message of the header ``parts`` and the body. Without a <|message|> token before
    the terminator, the header's words that are neither its names nor attributes are the body,
    as openai/harmony's non-strict parser recovers (``<|channel|>commentary Hello<|end|>``)."""
    message = Message(role="", end=end_kind)
    attrs: dict = {IMPLIED_START: True} if implied else {}
    written: list[str] = []
    loose: list[str] = []
    for part in parts:
        words = [(m.start(), m.group()) for m in WORD_RE.finditer(src, part.start, part.end)]
        if no_message_token and part.kind != CONSTRAIN:
            named = words[:1] if part.kind != START or not implied else []
            loose += [w for _, w in words[len(named) :] if "=" not in w]
            words = named + [(o, w) for o, w in words[len(named) :] if "=" in w]
        if part.kind == CONSTRAIN:
            _read_constrain(message, words, part, sink, index)
            continue
        if part.kind == START and implied:
            message.role = IMPLIED_ROLE
        elif part.kind == START:
            first = _read_name(words, "role", part, sink, index)
            message.role = first
        else:
            message.channel = _read_name(words, "channel", part, sink, index)
        for offset, word in words:
            _read_attribute(message, attrs, written, part.kind, offset, word, sink, dialect, index)
    if body_start < 0:
        attrs[HEADER_ONLY] = True
    elif loose:
        message.content = " ".join(loose)
    else:
        message.content = src[body_start:body_end]
    canonical = _canonical_order(written, attrs.get(CHANNEL_ATTRS, ()))
    if written != canonical:
        attrs[ATTR_ORDER] = written
    message.attrs = attrs
    return message


def _read_name(words: list, what: str, part: _Part, sink: Diagnostics, index: int) -> str:
    """The first word of a part (the role, the channel); removed from ``words``."""
    if words and "=" not in words[0][1]:
        return words.pop(0)[1]
    code = "E-PARSE-ROLE-MISSING" if what == "role" else "E-PARSE-ATTRIBUTE"
    sink.add(code, part.start, f"The message header has no {what} name", message_index=index)
    return ""


def _read_constrain(message, words, part, sink, index) -> None:
    """constrain = "<|constrain|>" CTYPE [WSP]"""
    if len(words) == 1:
        message.constrain = words[0][1]
        return
    message.constrain = " ".join(w for _, w in words)
    sink.add(
        "E-PARSE-ATTRIBUTE",
        part.start,
        "<|constrain|> must be followed by exactly one content type (e.g. json)",
        message_index=index,
    )


def _read_attribute(message, attrs, written, part_kind, offset, word, sink, dialect, index):
    """attribute = KEY "=" VALUE"""
    key, eq, value = word.partition("=")
    if eq and value and KEY_RE.fullmatch(key):
        if key in written:
            sink.add(
                "W-PARSE-DUPLICATE-ATTRIBUTE",
                offset,
                f"{key}= given twice; the first value is used",
                message_index=index,
            )
            return
        field_name = FIELD_OF.get(key)
        if field_name is None:
            attrs.setdefault(HEADER_ATTRS, {})[key] = value
        else:
            setattr(message, field_name, value)
        _note_position(attrs, written, key, part_kind)
        return
    if (
        not eq
        and part_kind == CHANNEL
        and dialect.bare_content_type
        and message.content_type is None
    ):
        message.content_type = word
        attrs[BARE_CONTENT_TYPE] = True
        _note_position(attrs, written, "content_type", part_kind)
        return
    sink.add(
        "E-PARSE-ATTRIBUTE",
        offset,
        f"Malformed header attribute {word!r}: expected key=value with no spaces",
        message_index=index,
    )
    # Kept as a valueless attribute so that an edited message still writes it back.
    extra = attrs.setdefault(HEADER_ATTRS, {})
    if word not in extra:
        extra[word] = None
        _note_position(attrs, written, word, part_kind)


def _note_position(attrs: dict, written: list[str], key: str, part_kind: str) -> None:
    written.append(key)
    if part_kind == CHANNEL:
        attrs.setdefault(CHANNEL_ATTRS, []).append(key)


def _canonical_order(keys, channel_keys) -> list[str]:
    """Start-header keys in §6 order, unknown ones as written, then the channel keys."""
    start_keys = [k for k in keys if k not in channel_keys]
    ordered = [k for k in KNOWN_ATTRS if k in start_keys]
    ordered += [k for k in start_keys if k not in KNOWN_ATTRS]
    channel_ordered = [k for k in KNOWN_ATTRS if k in channel_keys]
    channel_ordered += [k for k in keys if k in channel_keys and k not in KNOWN_ATTRS]
    return ordered + channel_ordered


def _preview(text: str, limit: int = 40) -> str:
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")


def _copy(value):
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


# --- serialization ---------------------------------------------------------------------------


def serialize_document(transcript: Transcript, dialect: Dialect) -> str:
    """Unedited parts are written as they were read; edited ones in the dialect's canonical form."""
    layout = transcript.layout if transcript.layout.get("spec") == dialect.spec else {}
    newline = layout.get("newline", "\n")
    out: list[str] = []
    if dialect.yaml_header:
        if layout and layout.get("header") == transcript.header:
            out.append(layout["header_text"])
        else:
            header = yaml_header.dump_header(transcript.header, layout.get("header_form"))
            out.append(header.replace("\n", newline))
    out.append(layout.get("lead", ""))
    spec = dialect.spec
    new_gap = dialect.default_gap.replace("\n", newline)
    for message in transcript.messages:
        if message.is_unchanged_from(spec):
            out.append(message.source.raw)
        else:
            out.append(format_message(message, dialect))
        source = message.source
        out.append(message.gap if source is not None and source.spec == spec else new_gap)
    return "".join(out)


def format_message(message: Message, dialect: Dialect) -> str:
    """The canonical text of one message (2.2 §6): attributes in the start header, as
    openai/harmony's renderer writes Harmony too (`<|start|>assistant to=functions.f<|channel|>`)."""
    attrs = message.attrs
    values = {key: getattr(message, FIELD_OF[key]) for key in KNOWN_ATTRS}
    values.update(attrs.get(HEADER_ATTRS) or {})
    present = [k for k in values if values[k] is not None or k in (attrs.get(HEADER_ATTRS) or {})]
    channel_keys = _channel_keys(message, dialect, present)
    order = [k for k in attrs.get(ATTR_ORDER, ()) if k in present]
    order += [k for k in _canonical_order(present, channel_keys) if k not in order]
    bare = attrs.get(BARE_CONTENT_TYPE)
    out = [] if _implied(message, dialect) else [token(START), message.role]
    for key in order:
        if key not in channel_keys:
            out.append(_attribute(key, values[key], False))
    if message.channel is not None and dialect.channels:
        out += [token(CHANNEL), message.channel]
        for key in order:
            if key in channel_keys:
                out.append(_attribute(key, values[key], bare and key == "content_type"))
        if message.constrain is not None and (channel_keys or dialect.space_before_constrain):
            out.append(" ")  # as gpt-oss writes `to=functions.f <|constrain|>json`
    if message.constrain is not None and dialect.channels:
        out += [token(CONSTRAIN), message.constrain]
    if message.content or not attrs.get(HEADER_ONLY):
        out += [token(MESSAGE), _body(message.content, dialect)]
    if message.end is not None:
        out.append(token(dialect.end_tokens.get(message.end, dialect.end_tokens[END])))
    return "".join(out)


def _body(content: str, dialect: Dialect) -> str:
    """``content`` as written, unless a trailing `<` would join the terminator as an escape
    (`<<|end|>`): then that `<` run goes in a literal block, which reads back as the same
    logical text (``scanner.unescape``)."""
    if not dialect.escapes or not content.endswith("<"):
        return content
    kept = content.rstrip("<")
    return f"{kept}{LITERAL_OPEN}{content[len(kept) :]}{LITERAL_CLOSE}"


def _channel_keys(message: Message, dialect: Dialect, present: list[str]) -> list[str]:
    if message.channel is None or not dialect.channels:
        return []
    if CHANNEL_ATTRS in message.attrs:
        return [k for k in message.attrs[CHANNEL_ATTRS] if k in present]
    if _implied(message, dialect):
        return list(present)  # no start header to hold them: a completion starts at the channel
    return []


def _implied(message: Message, dialect: Dialect) -> bool:
    """Whether ``message`` is written without its start header (``IMPLIED_START``)."""
    return bool(
        message.attrs.get(IMPLIED_START) and message.role == IMPLIED_ROLE and dialect.channels
    )


def _attribute(key: str, value: str | None, bare: bool) -> str:
    if value is None:
        return f" {key}"
    return f" {value}" if bare else f" {key}={value}"


# --- what the app needs to know of the three dialects -------------------------------------

# The fields the editor shows first: what the dialect's header writes.
HARMONY_FORM_FIELDS = ("role", "channel", "recipient", "name", "constrain", "end")
OCM22_FORM_FIELDS = (
    "role",
    "channel",
    "recipient",
    "name",
    "call_id",
    "intent",
    "content_type",
    "constrain",
    "end",
)
# The fields in the tokens' words (the OpenChatML JSON projection says them so too).
TOKEN_LABELS = {
    "recipient": "to= (recipient)",
    "constrain": "<|constrain|>",
    "content_type": "content type",
    "call_id": "call_id",
    "end": "terminator",
}
TERMINATOR_TOKENS = {end: token(name) for end, name in OCM_END_TOKENS.items()}
NAMES = Vocabulary(
    roles=("system", "developer", "user", "assistant", "tool"),
    channels=("analysis", "commentary", "final"),
    recipients=("assistant", "python", "browser.search", "browser.open", "browser.find"),
)
NEW_ASSISTANT_CHANNEL = "final"


def part_badges(message: Message, item: RenderedItem, context: PartContext) -> list[Badge]:
    """The header as the tokens write it (``to=``, ``<|constrain|>``), and the terminator
    token when it is not the usual ``<|end|>``."""
    badges = optional_badges(
        ("channel", item.channel),
        ("to=", item.recipient),
        ("<|constrain|>", item.constrain),
        ("name", item.name),
        ("call_id", item.call_id),
        ("intent", item.intent),
        ("content_type", item.content_type),
    )
    if not context.end_user and item.end != END:
        badges.append(Badge(TERMINATOR_TOKENS.get(item.end, TRUNCATED)))
    return badges


def _info(form_fields: tuple[str, ...]) -> SpecInfo:
    return SpecInfo(
        family="openchatml-2",
        text=True,
        fields=form_fields,
        vocabulary=NAMES,
        part_badges=part_badges,
        field_labels=TOKEN_LABELS,
        end_labels={**TERMINATOR_TOKENS, CUT_OFF: TERMINATOR_LABELS[CUT_OFF]},
        default_channel=NEW_ASSISTANT_CHANNEL,
    )


def _codec(dialect: Dialect, info: SpecInfo) -> Codec:
    def parse(src: str, sink: Diagnostics) -> Transcript:
        return parse_document(src, sink, dialect)

    def serialize(transcript: Transcript) -> str:
        return serialize_document(transcript, dialect)

    parse.__doc__ = f"Parse {dialect.spec} text (see the module docstring)."
    serialize.__doc__ = f"Write a transcript as {dialect.spec} text."
    return Codec(dialect.spec, parse, serialize, message_start=token(START), info=info)


CODECS = (
    _codec(OCM20, _info(HARMONY_FORM_FIELDS)),
    _codec(OCM22, _info(OCM22_FORM_FIELDS)),
    _codec(HARMONY, _info(HARMONY_FORM_FIELDS)),
)
