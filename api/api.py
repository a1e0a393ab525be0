"""The HTTP API at /api/v1/: one router per area in api/routers/, mounted here."""

from typing import Any

from csp.decorators import csp_update
from ninja import NinjaAPI
from ninja.openapi.schema import OpenAPISchema

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


class WorkbenchAPI(NinjaAPI):
    """The API, its OpenAPI document built once per process (per path prefix). It depends
    only on the code, and django-ninja builds it again on each request for ``openapi.json``,
    walking every route's schemas: 0.5 s of a web worker a request (and the docs page
    requests it each time it is opened). Callers must not change the document they get."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self._schemas: dict[str, OpenAPISchema] = {}

    def get_openapi_schema(
        self, *, path_prefix: str | None = None, path_params: dict[str, Any] | None = None
    ) -> OpenAPISchema:
        if path_prefix is None:
            path_prefix = self.get_root_path(path_params or {})
        if path_prefix not in self._schemas:
            self._schemas[path_prefix] = super().get_openapi_schema(path_prefix=path_prefix)
        return self._schemas[path_prefix]


api = WorkbenchAPI(
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
