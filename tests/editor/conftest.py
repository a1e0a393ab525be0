"""Fixtures of the editor's tests, beside those of tests/conftest.py."""

from tests.support.turns import chat  # noqa: F401 (a fixture: a chat with two assistant turns)
