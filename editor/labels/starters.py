"""Starting points for a new label schema: the questions curators ask most, ready to adjust
in the schema builder (``templates/editor/label_schemas.html``). Each is a list of questions
as ``labels.parse_definition`` takes them; a test parses every one."""

from __future__ import annotations

STARTERS: dict[str, dict] = {
    "helpfulness": {
        "title": "Helpfulness rating",
        "description": "How helpful the assistant was, 1 to 5, with a note on why.",
        "questions": [
            {
                "key": "helpfulness",
                "kind": "rating",
                "prompt": "How helpful was the assistant? (1: not at all, 5: fully)",
                "required": True,
                "scale": 5,
            },
            {
                "key": "helpfulness_note",
                "kind": "text",
                "prompt": "What made it more or less helpful?",
                "max_length": 2000,
            },
        ],
    },
    "hallucination": {
        "title": "Hallucination spans",
        "description": "Tag the claims in final answers that are not supported.",
        "questions": [
            {
                "key": "hallucination",
                "kind": "span",
                "prompt": "Tag unsupported claims in the assistant's final answers",
                "roles": ["assistant"],
                "channels": ["final"],
                "tags": [
                    {"value": "fabricated", "label": "Fabricated fact", "key": "f"},
                    {"value": "unsupported", "label": "Not supported by the sources", "key": "u"},
                ],
            },
            {
                "key": "has_hallucination",
                "kind": "choice",
                "prompt": "Does the transcript contain a hallucination?",
                "required": True,
                "options": [
                    {"value": "yes", "label": "Yes", "key": "1"},
                    {"value": "no", "label": "No", "key": "2"},
                ],
            },
        ],
    },
    "tool_use": {
        "title": "Tool-use correctness",
        "description": "Whether the assistant called the right tools with the right arguments.",
        "questions": [
            {
                "key": "tool_choice",
                "kind": "choice",
                "prompt": "Were the right tools called?",
                "required": True,
                "options": [
                    {"value": "correct", "label": "Correct", "key": "1"},
                    {"value": "partly", "label": "Partly", "key": "2"},
                    {"value": "wrong", "label": "Wrong", "key": "3"},
                    {"value": "none_needed", "label": "No tool was needed", "key": "4"},
                ],
            },
            {
                "key": "tool_errors",
                "kind": "multi_choice",
                "prompt": "What went wrong with the calls?",
                "options": [
                    {"value": "wrong_tool", "label": "Wrong tool", "key": "1"},
                    {"value": "bad_arguments", "label": "Bad arguments", "key": "2"},
                    {"value": "ignored_result", "label": "Result ignored", "key": "3"},
                    {"value": "needless_call", "label": "Needless call", "key": "4"},
                ],
            },
        ],
    },
    "training": {
        "title": "Usable for training",
        "description": "Whether the transcript can go into a training set as it is.",
        "questions": [
            {
                "key": "usable",
                "kind": "choice",
                "prompt": "Can this transcript be used for training?",
                "required": True,
                "options": [
                    {"value": "yes", "label": "Yes, as it is", "key": "1"},
                    {"value": "after_fix", "label": "After the fixes I made", "key": "2"},
                    {"value": "no", "label": "No", "key": "3"},
                ],
            },
            {
                "key": "unusable_reason",
                "kind": "text",
                "prompt": "If not, why?",
            },
        ],
    },
}
