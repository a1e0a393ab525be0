"""The dataset page as the browser ends up showing it: the page, then each section below the
table (queues, members, import, export) fetched by its placeholder with htmx and put in its
place, as the placeholder's ``hx-get`` / ``hx-swap="outerHTML"`` do."""

import re

PLACEHOLDER = re.compile(
    r'<section class="card deferred-section[^"]*" id="[^"]+" data-deferred-section="[^"]+"'
    r'\s+hx-get="(?P<url>[^"]+)" hx-trigger="load, retry" hx-swap="outerHTML".*?</section>',
    re.S,
)


def whole_page(client, url: str) -> str:
    """The page at ``url`` with its sections in; each section must answer 200."""
    response = client.get(url)
    assert response.status_code == 200, response.status_code
    html = response.content.decode()

    def section(match: re.Match) -> str:
        answer = client.get(match["url"], headers={"HX-Request": "true"})
        assert answer.status_code == 200, (match["url"], answer.status_code)
        return answer.content.decode()

    return PLACEHOLDER.sub(section, html)
