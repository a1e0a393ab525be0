import logging

from django.conf import settings
from django.contrib.auth.middleware import LoginRequiredMiddleware
from django.db import InterfaceError, OperationalError
from django.shortcuts import render

from editor import throttling
from editor.views.errors import (
    API_PREFIX,
    database_unavailable,
    too_many_requests,
    upload_too_large,
)

logger = logging.getLogger(__name__)

# The database failing under a request (its connection dropped, a lock timed out, the server
# gone): not a bug in the request, so a 503 that says nothing was changed. Other database
# errors (IntegrityError, ProgrammingError, DataError...) stay 500s: they are bugs.
DATABASE_UNAVAILABLE = (OperationalError, InterfaceError)
DATABASE_UNAVAILABLE_TOAST = "The database is unavailable: your change was not saved. Try again."


class LoginRequiredForPagesMiddleware(LoginRequiredMiddleware):
    """Redirect anonymous users to the login page, except on the API.

    The API authenticates each request itself (session or bearer token) and answers 401 in
    JSON: a redirect to an HTML login form would mean nothing to a pipeline.
    """

    api_prefix = API_PREFIX

    def process_view(self, request, view_func, view_args, view_kwargs):
        if request.path.startswith(self.api_prefix):
            return None
        return super().process_view(request, view_func, view_args, view_kwargs)


class DatabaseUnavailableMiddleware:
    """A page request whose database failed midway gets a 503 page saying nothing was saved
    (each write is one transaction, rolled back), not the generic 500. Logged all the same."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        if not isinstance(exception, DATABASE_UNAVAILABLE):
            return None
        logger.error("Database unavailable: %s %s", request.method, request.path, exc_info=True)
        if getattr(request, "htmx", False):
            # An htmx request: the message goes to the page's toast (out of band), the part
            # of the page that asked stays as it was (base.html lets htmx swap a 503).
            response = render(
                request,
                "editor/transcript.html#toast",
                {"toast": DATABASE_UNAVAILABLE_TOAST, "oob": True},
                status=503,
            )
            response["HX-Reswap"] = "none"
            return response
        return database_unavailable(request)


class UploadSizeLimitMiddleware:
    """A request whose body is larger than ``OCM_MAX_UPLOAD_BYTES`` is answered 413 before
    any of it is read. Django bounds bodies read into memory (DATA_UPLOAD_MAX_MEMORY_SIZE) but
    not uploaded files, which it spools to disk: without this a client could fill the disk."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = 0  # Django reads no body from a request with an unreadable length
        if length > settings.OCM_MAX_UPLOAD_BYTES:
            return upload_too_large(request, settings.OCM_MAX_UPLOAD_BYTES)
        return self.get_response(request)


class ThrottleMiddleware:
    """The expensive routes answer 429 past a caller's budget (``editor.throttling``). After
    authentication, so that a session's user is counted as that user; an htmx request gets
    the message as a toast and leaves the page as it was."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        try:
            throttling.check(request)
        except throttling.Throttled as throttled:
            if getattr(request, "htmx", False):
                response = render(
                    request,
                    "editor/transcript.html#toast",
                    {"toast": throttled.message, "oob": True},
                    status=429,
                )
                response["HX-Reswap"] = "none"
                response["Retry-After"] = str(throttled.retry_after)
                return response
            return too_many_requests(request, throttled)
        return self.get_response(request)
