"""Write docs/diagnostics.md from the code registry, so the two never disagree.

    python -m editor.formats.codes_doc > docs/diagnostics.md

A test fails when the committed file differs from what this prints.
"""

from __future__ import annotations

import sys

from .diagnostics import CODES

PREAMBLE = """\
# Diagnostics

Every diagnostic the spec core reports, generated from the registry in
`editor/formats/diagnostics.py` (`python -m editor.formats.codes_doc > docs/diagnostics.md`).

Each diagnostic carries a stable `code`, a `severity` (`error`, `warning`, `info`; the
code's first letter gives its default), a human `message`, a 1-based `line` and `column`,
a 0-based `offset` (all counted in Unicode code points), the index of the message it is
about (`message_index`, null for the document) and, where the fix is mechanical, a quick
`fix`: a title and a list of edits `{start, end, replacement}` on the source text that the
editor and the API can apply.

Codes from the OpenChatML 2.2 error taxonomy (§14) keep their names; the others follow
their style. `ocm parse` and `ocm validate` exit 1 when any error is reported.

Limits, so that no input exhausts the stack: JSON nested deeper than 128 levels of `[` and
`{` (serde_json's default limit) is refused with `E-PARSE-JSON` ("nested deeper than 128
levels", at the bracket that goes too deep) when it is the document, and is treated as not
JSON when it is a body, call arguments or a tool list (`E-BODY-CONSTRAINT-VIOLATION` where
the body must be JSON); a YAML header nested deeper than Python's recursion limit is an
`E-PARSE-HEADER`; a TypeScript tool signature reads types 64 levels deep and leaves deeper
ones unconstrained (`{}`). An integer longer than Python converts (4300 digits) is an
`E-PARSE-JSON` as well.

| code | severity | meaning |
|---|---|---|
"""


def render() -> str:
    rows = [f"| `{c.code}` | {c.severity} | {c.title} |" for c in CODES.values()]
    sections = []
    for c in CODES.values():
        sections.append(f"## {c.code}\n\n{c.title} ({c.severity}).\n")
        if c.example:
            fence = "~~~~" if "```" in c.example else "```"
            sections.append(f"Example:\n\n{fence}\n{c.example}\n{fence}\n")
        else:
            sections.append("Example: an empty input.\n")
    return PREAMBLE + "\n".join(rows) + "\n\n" + "\n".join(sections)


def main() -> None:
    sys.stdout.write(render())


if __name__ == "__main__":
    main()
