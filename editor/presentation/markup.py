"""Message bodies as safe HTML: Markdown for prose, indented text for JSON.

Transcripts are untrusted input (anyone can import a file), so a body never reaches the page
as its author's HTML. Two layers, each enough on its own for the common attacks:

1. markdown-it-py parses with raw HTML off: ``<script>`` in a message is text, not a tag.
2. nh3 (the Rust ``ammonia`` sanitizer) then keeps only the tags Markdown itself produces and
   only http, https and mailto links, so a parser quirk cannot let anything else through.

Libraries: markdown-it-py (CommonMark-compliant, no backtracking regexes) and nh3 (fast,
maintained, allow-list based).
"""

from __future__ import annotations

import json
import re
from functools import cache
from urllib.parse import urlsplit

import nh3
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe
from markdown_it import MarkdownIt

# Above this many characters a body is shown as escaped text. markdown-it-py is linear but
# slow on hostile input (runs of `[` or `*_`; docs/performance.md), so the limit keeps the
# worst body under a second.
MARKDOWN_SIZE_LIMIT = 100_000
# Above this, a JSON body is shown as written: re-indenting it only makes it longer.
JSON_SIZE_LIMIT = 1_000_000

ALLOWED_TAGS = frozenset(
    {
        "p", "em", "strong", "code", "pre", "ul", "ol", "li", "blockquote", "hr", "br",
        "h1", "h2", "h3", "h4", "h5", "h6", "a", "del", "s",
        "table", "thead", "tbody", "tr", "th", "td",
    }
)  # fmt: skip
ALLOWED_ATTRIBUTES = {"a": {"href", "title"}, "ol": {"start"}}
ALLOWED_URL_SCHEMES = frozenset({"http", "https", "mailto"})
LINK_REL = "noopener noreferrer nofollow"


def _image_as_link(self, tokens, idx, options, env) -> str:
    """An image is written as a link to it, never loaded.

    Loading a remote image from a transcript would tell its host who is reading the
    transcript and when (a tracking pixel), and a ``data:`` image can be made to look like
    part of the page. A link shows where the image is and leaves the choice to the reader.
    """
    token = tokens[idx]
    source = escape(token.attrGet("src") or "")
    text = self.renderInline(token.children or [], options, env) or source
    return f'<a href="{source}">{text}</a>'


@cache
def _markdown() -> MarkdownIt:
    # CommonMark, plus the two GFM extensions chat models use most; raw HTML is text.
    parser = MarkdownIt("commonmark", {"html": False, "linkify": False})
    parser.enable(["table", "strikethrough"])
    parser.add_render_rule("image", _image_as_link)
    return parser


def _without_relative_links(tag: str, attribute: str, value: str) -> str | None:
    """Drops relative and scheme-relative hrefs (``/logout``, ``//host``): a transcript's link
    must not pass for one of the workbench's own pages. Absolute ones are checked by nh3."""
    if attribute == "href" and not urlsplit(value).scheme:
        return None
    return value


def render_markdown(text: str) -> SafeString:
    """``text`` as sanitized HTML (see the module docstring); escaped paragraphs when huge."""
    if len(text) > MARKDOWN_SIZE_LIMIT:
        return plain_paragraphs(text)
    html = _markdown().render(text)
    clean = nh3.clean(
        html,
        tags=set(ALLOWED_TAGS),
        attributes={tag: set(names) for tag, names in ALLOWED_ATTRIBUTES.items()},
        url_schemes=set(ALLOWED_URL_SCHEMES),
        link_rel=LINK_REL,
        strip_comments=True,
        attribute_filter=_without_relative_links,
    )
    return mark_safe(clean)  # sanitized by nh3 just above


def plain_paragraphs(text: str) -> SafeString:
    """``text`` escaped, one ``<p>`` per blank-line-separated block, line breaks kept."""
    blocks = [block for block in text.replace("\r\n", "\n").split("\n\n") if block.strip()]
    paragraphs = (escape(block).replace("\n", "<br>") for block in blocks)
    return mark_safe("".join(f"<p>{paragraph}</p>" for paragraph in paragraphs))  # escaped


def pretty_json_body(text: str) -> str | None:
    """``text`` indented by two spaces when the whole body is one JSON object or array (and not
    huge); None otherwise, including JSON nested too deep for the parser.

    Only the whitespace between tokens changes: numbers, escapes and repeated keys stay as
    written (``1.10`` is not shown as ``1.1``, nor ``{"a": 1, "a": 2}`` as ``{"a": 2}``), since
    annotators judge what the model wrote, not what Python would make of it.
    """
    stripped = text.strip()
    if len(stripped) > JSON_SIZE_LIMIT or stripped[:1] not in ("{", "["):
        return None
    try:
        json.loads(stripped)
    except (ValueError, RecursionError):
        return None
    return _reindented(stripped)


# A JSON string (unrolled, so linear), one punctuation character, or a number/true/false/null.
JSON_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[{}\[\],:]|[^\s"{}\[\],:]+')
OPENERS, CLOSERS = ("{", "["), ("}", "]")
INDENT = "  "


def _reindented(valid_json: str) -> str:
    """``valid_json`` laid out as ``json.dumps(indent=2)`` lays it out, tokens copied verbatim."""
    tokens = JSON_TOKEN.findall(valid_json)
    out: list[str] = []
    depth = 0
    previous = None
    for token in tokens:
        if token in CLOSERS and previous in OPENERS:  # an empty container stays `{}` / `[]`
            depth -= 1
            out[-1] = previous + token
        elif token in OPENERS:
            depth += 1
            out.append(token + "\n" + INDENT * depth)
        elif token in CLOSERS:
            depth -= 1
            out.append("\n" + INDENT * depth + token)
        elif token == ",":
            out.append(",\n" + INDENT * depth)
        elif token == ":":
            out.append(": ")
        else:
            out.append(token)
        previous = token
    return "".join(out)
