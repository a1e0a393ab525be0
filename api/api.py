"""The HTTP API at /api/v1/: one router per area in api/routers/, mounted here."""

from csp.decorators import csp_update
from ninja import NinjaAPI

from .auth import API_AUTH
from .errors import install_error_handlers
from .parser import BoundedJSONParser
from .routers import (
    alternatives,
    bulk,
    datasets,
    exports,
    formats,
    imports,
    judges,
    labels,
    messages,
    models,
    pairs,
    queues,
    tokenizers,
    transcripts,
    versions,
    webhooks,
    workflow,
)

api = NinjaAPI(
    title="OCM transcript workbench API",
    version="1",
    description="Everything an annotator can do in the browser. Authenticate with a bearer "
    "token (`Authorization: Bearer <token>`, from `manage.py api_token USERNAME`) or the "
    "browser session (plus `X-CSRFToken` on unsafe methods). Errors are JSON "
    "`{code, message, details}` with a fitting HTTP status. Lists take `limit` (1-200, "
    "default 50) and `offset` and answer `{items, count}`.",
    auth=API_AUTH,
    urls_namespace="api",
    parser=BoundedJSONParser(),
    # Swagger UI's stylesheet draws its icons as data: images; only this page may show them
    # (the site-wide policy has img-src 'self'). Its scripts are static files: no inline code.
    docs_decorator=csp_update({"img-src": ["data:"]}),
)
install_error_handlers(api)
api.add_router("/formats", formats.router)
api.add_router("/", formats.verbs)
api.add_router("/", datasets.router)
api.add_router("/", transcripts.router)
api.add_router("/", messages.router)
api.add_router("/", workflow.router)
api.add_router("/", queues.router)
api.add_router("/", imports.router)
api.add_router("/", exports.router)
api.add_router("/", bulk.router)
api.add_router("/", labels.router)
api.add_router("/", alternatives.router)
api.add_router("/", pairs.router)
api.add_router("/", judges.router)
api.add_router("/", models.router)
api.add_router("/", webhooks.router)
api.add_router("/", versions.router)
api.add_router("/", tokenizers.router)
