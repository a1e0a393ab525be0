"""Message bodies as HTML: Markdown that cannot run code, JSON bodies indented."""

import json

import pytest
from django.template import Context, Template
from django.utils.safestring import SafeString

from editor.presentation.markup import MARKDOWN_SIZE_LIMIT, pretty_json_body, render_markdown


@pytest.mark.parametrize(
    ("hostile", "shown_as_text"),
    [
        ("<script>alert(1)</script>", "&lt;script&gt;alert(1)&lt;/script&gt;"),
        ("<img src=x onerror=alert(1)>", "&lt;img src=x onerror=alert(1)&gt;"),
        ("<style>body{display:none}</style>", "&lt;style&gt;body{display:none}&lt;/style&gt;"),
        ("<!-- hidden -->", "&lt;!-- hidden --&gt;"),
        ('<a href="javascript:alert(1)">x</a>', '&lt;a href="javascript:alert(1)"&gt;x&lt;/a&gt;'),
        ("<iframe src=https://evil.example>", "&lt;iframe src=https://evil.example&gt;"),
    ],
)
def test_raw_html_in_a_body_is_shown_as_text(hostile, shown_as_text):
    html = render_markdown(hostile)
    assert shown_as_text in html
    assert "<script" not in html and "<img" not in html and "<style" not in html
    assert "<iframe" not in html and "<!--" not in html


@pytest.mark.parametrize(
    "link",
    [
        "[x](javascript:alert(1))",
        "[x](JAVASCRIPT:alert(1))",
        "[x](vbscript:msgbox(1))",
        "[x](data:text/html;base64,PHNjcmlwdD4=)",
        "![x](data:image/png;base64,iVBORw0KGgo=)",
        "[x](/transcripts/1/delete/)",
        "[x](//evil.example/page)",
    ],
)
def test_links_other_than_absolute_http_https_mailto_lose_their_target(link):
    html = render_markdown(link)
    for scheme in ("javascript:", "JAVASCRIPT:", "vbscript:", "data:"):
        assert f'href="{scheme}' not in html
    assert 'href="/' not in html


@pytest.mark.parametrize(
    ("markdown", "href"),
    [
        ("[docs](https://example.com/a?b=1)", "https://example.com/a?b=1"),
        ("[plain](http://example.com)", "http://example.com"),
        ("[mail](mailto:someone@example.com)", "mailto:someone@example.com"),
        ("<https://example.com/auto>", "https://example.com/auto"),
    ],
)
def test_absolute_links_are_kept_and_marked_nofollow(markdown, href):
    html = render_markdown(markdown)
    assert f'href="{href}"' in html
    assert 'rel="noopener noreferrer nofollow"' in html


def test_an_image_becomes_a_link_and_is_never_loaded():
    html = render_markdown("![a cat](https://example.com/cat.png)")
    assert "<img" not in html
    assert '<a href="https://example.com/cat.png" rel="noopener noreferrer nofollow">a cat</a>' in (
        html
    )


@pytest.mark.parametrize(
    ("markdown", "expected"),
    [
        ("**Plan:** check the weather", "<strong>Plan:</strong> check the weather"),
        ("*why*", "<em>why</em>"),
        ("~~old~~", "<s>old</s>"),
        ("# Title", "<h1>Title</h1>"),
        ("> quoted", "<blockquote>"),
        ("- a\n- b", "<ul>\n<li>a</li>"),
        ("3. three", '<ol start="3">'),
        ("a\n\n---\n\nb", "<hr>"),
        ("`x < y`", "<code>x &lt; y</code>"),
    ],
)
def test_markdown_structure_is_rendered(markdown, expected):
    assert expected in render_markdown(markdown)


def test_tables_are_rendered_without_inline_styles():
    html = render_markdown("| city | °C |\n|:-----|---:|\n| Paris | 14 |")
    assert "<table>" in html and "<th>city</th>" in html and "<td>14</td>" in html
    assert "style=" not in html


def test_code_blocks_are_escaped():
    html = render_markdown('```html\n<script>alert("x")</script>\n```')
    assert '<pre><code>&lt;script&gt;alert("x")&lt;/script&gt;\n</code></pre>' in html


@pytest.mark.parametrize("invisible", ["\u202e", "\u200b", "\u2066", "\ufeff"])
def test_bidi_overrides_and_zero_width_characters_stay_as_text(invisible):
    assert f"<p>before{invisible}after</p>" in render_markdown(f"before{invisible}after")


def test_the_result_is_marked_safe_for_templates():
    assert isinstance(render_markdown("hi"), SafeString)


def test_a_huge_body_is_escaped_paragraphs_without_markdown():
    body = ("**not bold** <script>x</script>\nline two\n\n" * (MARKDOWN_SIZE_LIMIT // 20))[
        : MARKDOWN_SIZE_LIMIT + 1
    ]
    html = render_markdown(body)
    assert html.startswith("<p>**not bold** &lt;script&gt;x&lt;/script&gt;<br>line two</p><p>")
    assert "<strong>" not in html and "<script>" not in html


def test_a_one_megabyte_line_returns():
    assert render_markdown("[" * 1_000_000).startswith("<p>[[[")


def test_the_markdown_filter_renders_safe_html():
    html = Template("{% load workbench %}{{ body|markdown }}").render(
        Context({"body": "**hi** <b>x</b>"})
    )
    assert html == "<p><strong>hi</strong> &lt;b&gt;x&lt;/b&gt;</p>\n"


# --- JSON bodies -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (
            '{"city":"Zürich","temp":[1,2]}',
            '{\n  "city": "Zürich",\n  "temp": [\n    1,\n    2\n  ]\n}',
        ),
        ("  [1]\n", "[\n  1\n]"),
        ("{}", "{}"),
    ],
)
def test_a_json_object_or_array_body_is_indented(body, expected):
    assert pretty_json_body(body) == expected


@pytest.mark.parametrize(
    "body",
    ['"just a string"', "42", "null", "{not json}", '{"a": 1} trailing', "Hello {world}", "", "["],
)
def test_other_bodies_are_not_json(body):
    assert pretty_json_body(body) is None


@pytest.mark.parametrize(
    "body",
    [
        '{"a": [1, "é", {}, [], {"b": null}], "c": "q\\"uote\\\\", "d": [[]], "e": {"f": []}}',
        '{"s": "a,b:{c}[d]", "t": true, "f": false, "n": -0.5}',
        "[[[[1]]]]",
    ],
)
def test_the_layout_is_the_one_json_dumps_gives(body):
    assert pretty_json_body(body) == json.dumps(json.loads(body), indent=2, ensure_ascii=False)


def test_numbers_escapes_and_repeated_keys_stay_as_written():
    assert pretty_json_body('{"n":1.10,"big":1e400,"a":1,"a":2,"u":"\\u00e9"}') == (
        '{\n  "n": 1.10,\n  "big": 1e400,\n  "a": 1,\n  "a": 2,\n  "u": "\\u00e9"\n}'
    )


def test_deeply_nested_json_is_not_json_rather_than_an_error():
    assert pretty_json_body("[" * 100_000 + "]" * 100_000) is None


def test_the_json_body_filter_gives_none_for_prose():
    template = Template(
        "{% load workbench %}{% with pretty=body|json_body %}{{ pretty }}{% endwith %}"
    )
    assert template.render(Context({"body": "prose"})) == "None"
    assert json.loads(template.render(Context({"body": '{"a":1}'})).replace("&quot;", '"')) == {
        "a": 1
    }
