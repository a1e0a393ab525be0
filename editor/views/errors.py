"""The site's error answers: pages that look like the app (never a traceback), JSON on the API.

Django calls these for errors no view handled: a 404 or 403 raised anywhere, a request it
could not read (400, or 413 when the body is over DATA_UPLOAD_MAX_MEMORY_SIZE, which the CSRF
check meets before any view runs), and a crash (500). Under /api/ the answer is the API's
``{code, message, details}``: a client of the API never has to parse an HTML page.
"""

from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent, TooManyFilesSent
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.template import loader

# The API answers its own errors in JSON (api/errors.py), whatever the request accepts.
API_PREFIX = "/api/"
TOO_BIG = (RequestDataTooBig, TooManyFieldsSent, TooManyFilesSent)

MESSAGES = {
    400: ("bad-request", "The request could not be read."),
    403: ("forbidden", "You may not see this page."),
    404: ("not-found", "There is nothing at this address."),
    413: ("payload-too-large", "The request is too large."),
    500: ("server-error", "Something went wrong on our side; it has been logged."),
    503: (
        "database-unavailable",
        "The database could not complete the request: nothing was changed. Try again.",
    ),
}


def _answer(request: HttpRequest, status: int) -> HttpResponse:
    code, message = MESSAGES[status]
    if request.path.startswith(API_PREFIX):
        return JsonResponse({"code": code, "message": message, "details": None}, status=status)
    # Rendered without the request's context: whatever broke may be what the context needs.
    return HttpResponse(loader.get_template(f"{status}.html").render(), status=status)


def bad_request(request, exception=None):
    return _answer(request, 413 if isinstance(exception, TOO_BIG) else 400)


def permission_denied(request, exception=None):
    return _answer(request, 403)


def page_not_found(request, exception=None):
    return _answer(request, 404)


def server_error(request):
    return _answer(request, 500)


def database_unavailable(request):
    return _answer(request, 503)


def upload_too_large(request, limit: int):
    message = f"The request is larger than the {limit >> 20} MB an upload may be; split the file."
    if request.path.startswith(API_PREFIX):
        return JsonResponse(
            {"code": "payload-too-large", "message": message, "details": {"max_bytes": limit}},
            status=413,
        )
    return HttpResponse(loader.get_template("413.html").render(), status=413)


def too_many_requests(request, throttled) -> HttpResponse:
    """429 for a caller past an expensive route's budget (``editor.throttling``), with the
    seconds to wait in ``Retry-After``."""
    details = {
        "kind": throttled.kind,
        "limit": throttled.limit,
        "window_seconds": throttled.window,
        "retry_after": throttled.retry_after,
    }
    if request.path.startswith(API_PREFIX):
        response = JsonResponse(
            {"code": "too-many-requests", "message": throttled.message, "details": details},
            status=429,
        )
    else:
        page = loader.get_template("429.html").render({"message": throttled.message})
        response = HttpResponse(page, status=429)
    response["Retry-After"] = str(throttled.retry_after)
    return response
