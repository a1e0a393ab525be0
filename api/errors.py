"""One shape for every API error: `{"code", "message", "details"}` with a fitting status.

The domain's refusals are ``DomainError``s, each with its own code and status: one
handler maps them all. There is no catch-all: a bug stays a 500 and is logged as one.
"""

import logging

from django.conf import settings
from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent, TooManyFilesSent
from django.db import InterfaceError, OperationalError
from django.http import Http404, HttpRequest
from django.http.multipartparser import MultiPartParserError
from ninja import NinjaAPI, Schema
from ninja.errors import AuthenticationError, HttpError, ValidationError

from editor.errors import DomainError

from .auth import InvalidToken

logger = logging.getLogger(__name__)


class ErrorOut(Schema):
    code: str
    message: str
    details: dict | list | None = None


def errors(*statuses: int) -> dict[int, type[ErrorOut]]:
    """A route's error responses for its ``response=``: those named, plus 401 (every route
    needs a login or a token)."""
    return {status: ErrorOut for status in sorted({401, *statuses})}


def error_response(
    api: NinjaAPI, request: HttpRequest, status: int, code: str, message: str, details=None
):
    return api.create_response(
        request, {"code": code, "message": message, "details": details}, status=status
    )


def install_error_handlers(api: NinjaAPI) -> None:
    @api.exception_handler(DomainError)
    def on_storage_error(request, exc: DomainError):
        return error_response(api, request, exc.status, exc.code, exc.message, exc.details)

    # The database failing midway (connection dropped, lock timeout, server gone): each write
    # is one transaction, so nothing was changed; the client may retry. Only these two:
    # IntegrityError, ProgrammingError, DataError... are bugs and stay 500s.
    @api.exception_handler(OperationalError)
    @api.exception_handler(InterfaceError)
    def on_database_unavailable(request, exc: OperationalError | InterfaceError):
        logger.error("Database unavailable: %s %s", request.method, request.path, exc_info=exc)
        return error_response(
            api,
            request,
            503,
            "database-unavailable",
            "The database could not complete the request: nothing was changed. Try again.",
        )

    @api.exception_handler(Http404)
    def on_not_found(request, exc: Http404):
        return error_response(api, request, 404, "not-found", str(exc) or "Not found.")

    @api.exception_handler(ValidationError)
    def on_validation_error(request, exc: ValidationError):
        return error_response(
            api, request, 422, "invalid-request", "The request is not valid.", exc.errors
        )

    @api.exception_handler(AuthenticationError)
    def on_authentication_error(request, exc: AuthenticationError):
        message = str(exc) if isinstance(exc, InvalidToken) else "Log in or send a bearer token."
        return error_response(api, request, 401, "unauthenticated", message)

    # Django raises these while reading the body, before any route code runs; without a
    # handler they would reach ninja's catch-all (a 500 with a traceback in DEBUG).
    @api.exception_handler(RequestDataTooBig)
    def on_body_too_big(request, exc: RequestDataTooBig):
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        return error_response(
            api,
            request,
            413,
            "payload-too-large",
            f"The request body is larger than {limit} bytes; upload big files through "
            "POST /datasets/{slug}/imports.",
            {"max_bytes": limit},
        )

    @api.exception_handler(TooManyFieldsSent)
    @api.exception_handler(TooManyFilesSent)
    def on_too_many_parts(request, exc: TooManyFieldsSent | TooManyFilesSent):
        return error_response(api, request, 413, "payload-too-large", str(exc))

    @api.exception_handler(MultiPartParserError)
    def on_unreadable_form(request, exc: MultiPartParserError):
        return error_response(
            api,
            request,
            400,
            "invalid-multipart",
            f"The multipart body cannot be read: {exc}.",
        )

    @api.exception_handler(HttpError)
    def on_http_error(request, exc: HttpError):
        if exc.status_code == 400 and isinstance(exc.__cause__, ValueError):
            # django-ninja answers a body it cannot read (not JSON, not UTF-8) with a bare 400;
            # to a client it is one more request that does not fit the schema.
            details = [{"loc": ["body"], "msg": str(exc.__cause__), "type": "json_invalid"}]
            return error_response(
                api, request, 422, "invalid-request", "The request body is not JSON.", details
            )
        code = getattr(exc, "code", "http-error")
        return error_response(api, request, exc.status_code, code, str(exc))
