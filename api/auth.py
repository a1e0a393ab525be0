"""Who is calling: a bearer token (``Authorization: Bearer <token>``) or the browser session.

The bearer check runs first. A request that sends a bearer token is judged by that token
alone: a wrong or revoked one is a 401, never a fall-back to whatever session cookie came
along. Session requests must carry the CSRF token on unsafe methods (``X-CSRFToken``).
"""

from ninja.errors import AuthenticationError, HttpError
from ninja.security import HttpBearer
from ninja.security import SessionAuth as NinjaSessionAuth

from editor.models import ApiToken


class InvalidToken(AuthenticationError):
    def __init__(self):
        super().__init__(message="The bearer token is not valid (unknown or revoked).")


class BearerTokenAuth(HttpBearer):
    def authenticate(self, request, token):
        user = ApiToken.user_for(token)
        if user is None:
            raise InvalidToken
        return user


class CsrfFailed(HttpError):
    code = "csrf-failed"

    def __init__(self):
        super().__init__(
            403, "CSRF check failed: send the csrftoken cookie's value in X-CSRFToken."
        )


class SessionAuth(NinjaSessionAuth):
    def __call__(self, request):
        # Anonymous requests are a 401 (log in or send a token), not a CSRF failure.
        if not request.user.is_authenticated:
            return None
        try:
            return super().__call__(request)
        except HttpError:  # ninja's CSRF refusal
            raise CsrfFailed from None


API_AUTH = [BearerTokenAuth(), SessionAuth()]
