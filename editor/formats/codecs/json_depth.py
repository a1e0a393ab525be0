"""Bounds on JSON nesting and numbers, so that no input can exhaust the stack or escape
as a bare ValueError.

Python's ``json`` decoder, and every recursive reader after it (schema validation, the
canonical output, conversion), spends stack frames on each level of nesting: 100 000 times ``[``
raised RecursionError. The core's JSON readers decode through ``loads`` here, or ask
``excess_nesting`` first, and refuse a text nested deeper than ``MAX_DEPTH``: ``loads``
raises the ``json.JSONDecodeError`` the readers already turn into a diagnostic, positioned
at the bracket that goes one level too deep. The same error replaces the ValueError of an
integer longer than Python converts (``sys.get_int_max_str_digits()``, 4300 by default).

    depth = number of "[" and "{" open at a point of the text, brackets inside strings aside
"""

from __future__ import annotations

import json
import re
import sys
from itertools import accumulate

# serde_json's default recursion limit: Rust readers of the same data (openai/harmony among
# them) refuse deeper JSON too, and it leaves the recursive readers after the decoder room.
MAX_DEPTH = 128

OPENERS = "[{"
CLOSERS = "]}"
# Everything but brackets outside strings: strings (possibly unterminated) and other runs.
NOT_A_BRACKET = re.compile(r'"(?:[^"\\]++|\\.)*+"?|[^"\[\]{}]++', re.DOTALL)
STRING_OR_BRACKET = re.compile(r'"(?:[^"\\]++|\\.)*+"?|[\[\]{}]', re.DOTALL)
STEP = {"[": 1, "{": 1, "]": -1, "}": -1}

STRICT = json.JSONDecoder()


def excess_nesting(text: str, limit: int = MAX_DEPTH) -> int | None:
    """The offset of the first bracket that opens level ``limit + 1``, or None.

    Linear, and nearly free for ordinary JSON: a text with few brackets cannot nest deeply,
    and the others are reduced to their brackets by one regular expression before the
    running depth is summed in C; only a text that does go too deep is walked in Python.
    """
    if text.count("[") + text.count("{") <= limit:
        return None
    brackets = NOT_A_BRACKET.sub("", text)
    if max(accumulate(map(STEP.__getitem__, brackets)), default=0) <= limit:
        return None
    depth = 0
    for match in STRING_OR_BRACKET.finditer(text):
        char = text[match.start()]
        if char in OPENERS:
            depth += 1
            if depth > limit:
                return match.start()
        elif char in CLOSERS:
            depth -= 1
    return None  # unreachable: the sum above found the same depth


def loads(text: str, decoder: json.JSONDecoder = STRICT, *, limit: int = MAX_DEPTH):
    """``json.loads`` that refuses nesting deeper than ``limit``; every refusal is a
    JSONDecodeError."""
    offset = excess_nesting(text, limit)
    if offset is not None:
        raise json.JSONDecodeError(f"nested deeper than {limit} levels", text, offset)
    try:
        return decoder.decode(text)
    except ValueError as err:
        raise decoding_error(err, text) from None


def raw_decode(decoder: json.JSONDecoder, text: str, pos: int):
    """``decoder.raw_decode`` whose every refusal is a JSONDecodeError (the caller bounds
    the nesting: ``excess_nesting`` on the whole text, once)."""
    try:
        # The C scanner itself: raw_decode's Python wrapper costs as much as a short value.
        return decoder.scan_once(text, pos)
    except StopIteration as stop:
        raise json.JSONDecodeError("Expecting value", text, stop.value) from None
    except ValueError as err:
        raise decoding_error(err, text, pos) from None


def decoding_error(err: ValueError, text: str, pos: int = 0) -> json.JSONDecodeError:
    """``err`` as a JSONDecodeError: the decoder's own, or int()'s refusal of a long number."""
    if isinstance(err, json.JSONDecodeError):
        return err
    limit = sys.get_int_max_str_digits()
    long_number = re.compile(rf"[0-9]{{{limit + 1},}}").search(text, pos)
    offset = long_number.start() if long_number else pos
    return json.JSONDecodeError(f"a number longer than {limit} digits", text, offset)
