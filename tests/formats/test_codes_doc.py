"""docs/diagnostics.md lists every registered code, with an example, as the registry says."""

from pathlib import Path

from editor.formats import codes_doc
from editor.formats.diagnostics import CODES, SEVERITIES

DOC = Path(__file__).resolve().parents[2] / "docs" / "diagnostics.md"


def test_every_code_is_well_formed():
    prefix = {"error": "E-", "warning": "W-", "info": "I-"}
    for code, info in CODES.items():
        assert info.code == code
        assert info.severity in SEVERITIES
        assert code.startswith(prefix[info.severity]), code
        assert info.title


def test_committed_doc_matches_the_registry():
    assert DOC.read_text("utf-8") == codes_doc.render(), (
        "regenerate: python -m editor.formats.codes_doc > docs/diagnostics.md"
    )
