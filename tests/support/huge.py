"""A very long Harmony transcript for the tests and the benchmark of bounded requests
(docs/performance.md, "Huge transcripts"): turns of a user question, the assistant's
analysis, a tool call, the tool's reply and a final answer, so that every page has hidden
channels, calls and visible messages."""

from __future__ import annotations

SYSTEM = "<|start|>system<|message|>You are a helpful assistant.\nReasoning: medium<|end|>"
TURN = (
    "<|start|>user<|message|>What is the weather in city {i}, and should I take a coat?<|end|>"
    "<|start|>assistant<|channel|>analysis<|message|>Need get_weather for city {i}; then "
    "advise on the coat.<|end|>"
    "<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json"
    '<|message|>{{"location":"city {i}"}}<|call|>'
    "<|start|>functions.get_weather to=assistant<|channel|>commentary<|message|>"
    '{{"temp": {t}, "rain": false}}<|end|>'
    "<|start|>assistant<|channel|>final<|message|>It is {t} °C in city {i}: "
    "{advice}.<|end|>"
)


def huge_harmony(messages: int) -> str:
    """A Harmony text of ``messages`` messages (one system message, then five per turn)."""
    parts = [SYSTEM]
    i = 0
    while 1 + 5 * i < messages:
        t = i % 40 - 5
        parts.append(TURN.format(i=i, t=t, advice="take a coat" if t < 12 else "no coat"))
        i += 1
    text = "".join(parts)
    cut = _start_of(text, messages)
    return text[:cut] if cut is not None else text


def _start_of(text: str, index: int) -> int | None:
    """Where message ``index`` begins (None: there are not that many)."""
    at = -1
    for _ in range(index + 1):
        at = text.find("<|start|>", at + 1)
        if at == -1:
            return None
    return at
