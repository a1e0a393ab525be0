"""Lists page by ``limit`` (1-200, default 50) and ``offset``; answers ``{items, count}``.

ninja's LimitOffsetPagination silently caps an oversized ``limit``; here it is a 422, so a
client never mistakes a capped page for the end of the list. So is an ``offset`` the
database cannot take.
"""

from ninja import Field, Schema
from ninja.pagination import LimitOffsetPagination

DEFAULT_LIMIT = 50
MAX_LIMIT = 200
# Databases take OFFSET as a signed 64-bit integer: past it SQLite and PostgreSQL fail.
MAX_OFFSET = 2**63 - 1


class LimitOffset(LimitOffsetPagination):
    class Input(Schema):
        limit: int = Field(DEFAULT_LIMIT, ge=1, le=MAX_LIMIT)
        offset: int = Field(0, ge=0, le=MAX_OFFSET)

    def __init__(self, **kwargs):
        super().__init__(max_limit=MAX_LIMIT, **kwargs)


def next_page_url(request, page: dict) -> str | None:
    """The URL of the page after ``page`` (a page of a rendering: ``offset``, ``limit``,
    ``total``): the same path and query with the next offset; None after the last page. A
    POST route's next page is the same body posted to it."""
    following = page["offset"] + page["limit"]
    if following >= page["total"]:
        return None
    query = request.GET.copy()
    query["offset"] = str(following)
    query["limit"] = str(page["limit"])
    return f"{request.path}?{query.urlencode()}"
