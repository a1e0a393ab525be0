"""The HTTP API at /api/v1/: one router per area in api/routers/, mounted here."""

from ninja import NinjaAPI
from ninja.security import django_auth

from .errors import install_error_handlers
from .routers import formats

api = NinjaAPI(
    title="OCM transcript workbench API",
    version="1",
    description="Everything an annotator can do in the browser. Errors are JSON "
    "`{code, message, details}` with a fitting HTTP status.",
    auth=django_auth,
    urls_namespace="api",
)
install_error_handlers(api)
api.add_router("/formats", formats.router)
