"""A dataset's model connections: validated, created, changed and deleted by its curators, read
by its editors (who regenerate turns with them), with the tokens each has used.

The API key never passes through here: a connection names the environment variable that
holds it (``api_key_env``). A field named ``api_key`` in any input is refused, and an
``api_key_env`` that does not look like a variable's name is refused without being repeated
(it may be a key pasted in the wrong field).
"""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import urlsplit

from django.db import IntegrityError, transaction
from django.db.models import Count, ProtectedError, Q, Sum
from django.db.models.functions import Coalesce

from editor.assist.client import RESERVED_OPTIONS, api_key_set
from editor.errors import (
    InvalidModelConnection,
    ModelConnectionInUse,
    ModelConnectionNameTaken,
    ModelConnectionNotFound,
    NotAllowed,
)
from editor.models import Dataset, ModelConnection, ModelRequest, ModelRequestPurpose

ENV_NAME = re.compile(r"[A-Z_][A-Z0-9_]{0,99}")
FIELDS = (
    "name",
    "base_url",
    "model",
    "api_key_env",
    "options",
    "timeout_seconds",
    "max_concurrency",
    "requests_per_minute",
)
# Names under which a key's value might be offered; refused wherever they appear.
KEY_FIELDS = frozenset({"api_key", "apikey", "key", "secret", "token", "authorization"})
MAX_OPTIONS_BYTES = 4000
DEFAULTS = {
    "api_key_env": "",
    "options": {},
    "timeout_seconds": 60.0,
    "max_concurrency": 4,
    "requests_per_minute": None,
}


def require_curator(dataset: Dataset, user) -> None:
    if not dataset.can_curate(user):
        raise NotAllowed(f"Only curators of {dataset.name} manage its model connections.")


def require_reader(dataset: Dataset, user) -> None:
    """Editors read the connections (they regenerate with them); viewers do not."""
    if not dataset.can_edit(user):
        raise NotAllowed(f"Your role in {dataset.name} does not use model connections.")


def connections_of(dataset: Dataset):
    """The dataset's connections by name, each with ``requests_count``, ``tokens_in`` and
    ``tokens_out`` summed over every request made through it."""
    return (
        ModelConnection.objects.filter(dataset=dataset)
        .annotate(
            requests_count=Count("requests"),
            failed_count=Count("requests", filter=Q(requests__ok=False)),
            tokens_in=Coalesce(Sum("requests__tokens_in"), 0),
            tokens_out=Coalesce(Sum("requests__tokens_out"), 0),
        )
        .order_by("name")
    )


def dataset_usage(dataset: Dataset) -> dict:
    """What ``dataset``'s model requests cost, every connection and purpose together:
    {"by_purpose": [{"purpose", "label", "requests", "failed", "tokens_in", "tokens_out"}]
    (test, regenerate, judge: those with requests), "total": the same figures summed}. One
    query."""
    rows = (
        ModelRequest.objects.filter(dataset=dataset)
        .values("purpose")
        .annotate(
            requests=Count("pk"),
            failed=Count("pk", filter=Q(ok=False)),
            tokens_in=Coalesce(Sum("tokens_in"), 0),
            tokens_out=Coalesce(Sum("tokens_out"), 0),
        )
        .order_by()
    )
    found = {row["purpose"]: row for row in rows}
    by_purpose = [
        {**found[purpose], "label": label}
        for purpose, label in ModelRequestPurpose.choices
        if purpose in found
    ]
    figures = ("requests", "failed", "tokens_in", "tokens_out")
    total = {name: sum(row[name] for row in by_purpose) for name in figures}
    return {"by_purpose": by_purpose, "total": total}


def connection_of(dataset: Dataset, pk: int) -> ModelConnection:
    found = connections_of(dataset).filter(pk=pk).first()
    if found is None:
        raise ModelConnectionNotFound(f"No model connection {pk} in {dataset.name}.")
    return found


def connection_dict(connection: ModelConnection) -> dict:
    """What may be shown of a connection: never the key, only whether its variable is set
    in this server's environment."""
    return {
        "id": connection.pk,
        "name": connection.name,
        "base_url": connection.base_url,
        "model": connection.model,
        "api_key_env": connection.api_key_env,
        "api_key_set": api_key_set(connection),
        "options": connection.options or {},
        "timeout_seconds": connection.timeout_seconds,
        "max_concurrency": connection.max_concurrency,
        "requests_per_minute": connection.requests_per_minute,
        "requests_count": getattr(connection, "requests_count", 0),
        "failed_count": getattr(connection, "failed_count", 0),
        "tokens_in": getattr(connection, "tokens_in", 0),
        "tokens_out": getattr(connection, "tokens_out", 0),
        "created_at": connection.created_at,
        "updated_at": connection.updated_at,
    }


def clean(data: dict[str, Any], *, partial: bool = False) -> dict[str, Any]:
    """The fields of ``data`` checked and normalised; every problem found at once in
    ``InvalidModelConnection.details["fields"]`` ({field: message}). ``partial``: absent
    fields are left out (an update) instead of required or defaulted."""
    offered = {name for name in data if name.lower() in KEY_FIELDS}
    if offered:
        raise InvalidModelConnection(
            "An API key is never accepted, stored or shown: set it in an environment variable "
            "of the server and give that variable's name as api_key_env.",
            details={"fields": {name: "refused: give api_key_env instead" for name in offered}},
        )
    unknown = sorted(set(data) - set(FIELDS))
    if unknown:
        raise InvalidModelConnection(
            f"Unknown fields: {', '.join(unknown)}.", details={"fields": dict.fromkeys(unknown)}
        )
    problems: dict[str, str] = {}
    cleaned: dict[str, Any] = {}
    for name in FIELDS:
        if name not in data:
            if partial:
                continue
            if name not in DEFAULTS:
                problems[name] = "required"
                continue
            value = DEFAULTS[name]
        else:
            value = data[name]
        try:
            cleaned[name] = CHECKS[name](value)
        except ValueError as problem:
            problems[name] = str(problem)
    if problems:
        listed = "; ".join(f"{name}: {message}" for name, message in problems.items())
        raise InvalidModelConnection(
            f"The connection was not saved: {listed}.", details={"fields": problems}
        )
    return cleaned


def create_connection(dataset: Dataset, user, data: dict[str, Any]) -> ModelConnection:
    require_curator(dataset, user)
    fields = clean(data)
    connection = ModelConnection(dataset=dataset, created_by=user, **fields)
    _save(connection)
    return connection_of(dataset, connection.pk)


def update_connection(connection: ModelConnection, user, data: dict[str, Any]) -> ModelConnection:
    require_curator(connection.dataset, user)
    for name, value in clean(data, partial=True).items():
        setattr(connection, name, value)
    _save(connection)
    return connection_of(connection.dataset, connection.pk)


def delete_connection(connection: ModelConnection, user) -> None:
    """Delete ``connection`` and the record of its requests. A judge that uses it keeps it:
    ``ModelConnectionInUse``."""
    require_curator(connection.dataset, user)
    try:
        with transaction.atomic():
            connection.delete()
    except ProtectedError:
        raise ModelConnectionInUse(
            f"A judge uses the connection {connection.name!r}: give the judge another "
            "connection (or delete it) first.",
            details={"judges": connection.judges.count()},
        ) from None


def _save(connection: ModelConnection) -> None:
    try:
        with transaction.atomic():
            connection.save()
    except IntegrityError:
        raise ModelConnectionNameTaken(
            f"The dataset already has a model connection named {connection.name!r}.",
            details={"name": connection.name},
        ) from None


# -- field checks: each returns the value to store or raises ValueError with the problem --


def _text(value: Any, limit: int) -> str:
    if not isinstance(value, str):
        raise ValueError("must be text")
    value = value.strip()
    if not value:
        raise ValueError("required")
    if len(value) > limit:
        raise ValueError(f"at most {limit} characters")
    return value


def _base_url(value: Any) -> str:
    value = _text(value, 500)
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError("must be an http:// or https:// URL, such as http://localhost:8000/v1")
    if parts.username or parts.password:
        raise ValueError("must not carry a user or password: give the key's variable instead")
    return value.rstrip("/")


def _api_key_env(value: Any) -> str:
    if value is None or value == "":
        return ""
    if not isinstance(value, str) or not ENV_NAME.fullmatch(value.strip()):
        # Not repeated back: what was typed may be the key itself.
        raise ValueError(
            "must be the NAME of an environment variable (capitals, digits and _, such as "
            "OPENAI_API_KEY), never the key itself"
        )
    return value.strip()


def _options(value: Any) -> dict:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ValueError('must be a JSON object, such as {"temperature": 0.7}')
    reserved = sorted(set(value) & RESERVED_OPTIONS)
    if reserved:
        raise ValueError(f"{', '.join(reserved)} cannot be set here: each call decides it")
    keys = sorted(name for name in value if name.lower() in KEY_FIELDS)
    if keys:
        raise ValueError(f"{', '.join(keys)}: a key is never stored; use api_key_env")
    if len(json.dumps(value)) > MAX_OPTIONS_BYTES:
        raise ValueError(f"at most {MAX_OPTIONS_BYTES} bytes of JSON")
    return value


def _number(value: Any, low: float, high: float, *, integer: bool) -> float | int:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError("must be a number")
    if integer and value != int(value):
        raise ValueError("must be a whole number")
    if not low <= value <= high:
        raise ValueError(f"must be between {low:g} and {high:g}")
    return int(value) if integer else float(value)


def _requests_per_minute(value: Any) -> int | None:
    if value is None or value == "":
        return None
    return _number(value, 1, 100000, integer=True)


CHECKS = {
    "name": lambda value: _text(value, 100),
    "base_url": _base_url,
    "model": lambda value: _text(value, 200),
    "api_key_env": _api_key_env,
    "options": _options,
    "timeout_seconds": lambda value: _number(value, 1, 600, integer=False),
    "max_concurrency": lambda value: _number(value, 1, 64, integer=True),
    "requests_per_minute": _requests_per_minute,
}
