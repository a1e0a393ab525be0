"""Semantic validation: the rules beyond syntax (DESIGN §2 "Validation beyond syntax").

``validate(transcript, text=…)`` runs every rule that applies to the transcript's spec and
returns the diagnostics in text order (rule order at equal offsets: header, channels and
roles, calls, then the v0.1 / MMS rules). The rules and their codes are tabled in the docstrings of ``validate_header``,
``validate_calls`` and ``validate_legacy``. Parse diagnostics are not repeated here.
"""

from __future__ import annotations

from . import validate_calls, validate_header, validate_legacy
from .diagnostics import Diagnostic
from .model import Transcript
from .validate_context import Context

V01 = "openchatml-0.1"
MMS_SPECS = frozenset({"mms", "mms-tokens"})


def validate(transcript: Transcript, *, text: str | None = None) -> list[Diagnostic]:
    """Every semantic diagnostic of ``transcript``; positions refer to ``text`` when given."""
    ctx = Context(transcript, text)
    validate_header.check(ctx)
    if transcript.spec == V01:
        validate_legacy.check_v01(ctx)
    elif transcript.spec in MMS_SPECS:
        # MMS calls are tool formats answered by context messages: their own pairing rule.
        validate_legacy.check_mms(ctx)
    else:
        validate_calls.check(ctx, hip1=validate_header.hip1_active(ctx))
    # In text order (stable: rule order among diagnostics at the same offset).
    return sorted(ctx.diagnostics, key=lambda d: d.offset)
