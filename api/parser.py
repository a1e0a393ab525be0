"""Request bodies are read with the core's bound on JSON nesting, and must be objects.

ninja's own parser is ``json.loads``: a body of 100,000 ``[`` raised RecursionError, and one
nested a few hundred levels was read and then failed deeper in (validation, storage). Here a
body nested deeper than ``MAX_BODY_DEPTH`` is a ``JSONDecodeError`` like any unreadable body:
422 ``invalid-request`` (api/errors.py). Every body the API takes is an object; ninja's
schemas read attributes (``from_attributes``), so without the second check ``[null, null]``
or ``true`` passed for a request whose fields are all optional (found by the fuzz tests).
"""

from __future__ import annotations

import json

from ninja.parser import Parser

from editor import formats

# A body holds its JSON values (metadata, a document, answers) one or two levels down, and
# those may be nested as deep as the core reads (formats.MAX_JSON_DEPTH).
MAX_BODY_DEPTH = formats.MAX_JSON_DEPTH + 2


class BoundedJSONParser(Parser):
    def parse_body(self, request):
        body = request.body
        value = formats.load_json(body.decode(json.detect_encoding(body)), limit=MAX_BODY_DEPTH)
        if not isinstance(value, dict):
            raise ValueError(f"The body must be a JSON object, not {type(value).__name__}.")
        return value
