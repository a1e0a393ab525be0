"""One shape for every API error: `{"code", "message", "details"}` with a fitting status."""

from django.http import HttpRequest
from ninja import NinjaAPI, Schema
from ninja.errors import AuthenticationError, HttpError, ValidationError


class ErrorOut(Schema):
    code: str
    message: str
    details: dict | list | None = None


def error_response(
    api: NinjaAPI, request: HttpRequest, status: int, code: str, message: str, details=None
):
    return api.create_response(
        request, {"code": code, "message": message, "details": details}, status=status
    )


def install_error_handlers(api: NinjaAPI) -> None:
    @api.exception_handler(ValidationError)
    def on_validation_error(request, exc: ValidationError):
        return error_response(
            api, request, 422, "invalid-request", "The request is not valid.", exc.errors
        )

    @api.exception_handler(AuthenticationError)
    def on_authentication_error(request, exc):
        return error_response(
            api, request, 401, "unauthenticated", "Log in or send a bearer token."
        )

    @api.exception_handler(HttpError)
    def on_http_error(request, exc: HttpError):
        return error_response(api, request, exc.status_code, "http-error", str(exc))
