"""Choices and sizes shared by the models' fields."""

from __future__ import annotations

from editor import formats

SPEC_CHOICES = [(spec, spec) for spec in formats.SPEC_IDS]


# Canonical message fields stored in CharFields; longer values are refused with a clear
# error by editor.storage rather than truncated (or rejected by PostgreSQL with a 500).
SHORT_FIELD_LENGTH = 255
