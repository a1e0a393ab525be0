"""A dataset's model connections in the browser (curators; ``editor.assist.connections``):
the list with the tokens each has used, add and edit forms, delete, and "Test connection"
showing the model's answer or the server's exact error. No field ever takes a key: the form
asks for the environment variable's name and says whether it is set on this server."""

from __future__ import annotations

import json

from django.contrib import messages
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from editor.assist import client, connections
from editor.errors import DomainError, InvalidModelConnection
from editor.views.curating import curated_dataset, found_or_404

PAGE = "editor/models.html"
NUMBERS = ("timeout_seconds", "max_concurrency", "requests_per_minute")
EMPTY_FORM = {
    "name": "",
    "base_url": "",
    "model": "",
    "api_key_env": "",
    "options": "{}",
    "timeout_seconds": 60,
    "max_concurrency": 4,
    "requests_per_minute": "",
}


def _curated(request, slug):
    return curated_dataset(request, slug, connections.require_curator)


def _connection(request, slug, pk):
    dataset = _curated(request, slug)
    return dataset, found_or_404(connections.connection_of, dataset, pk)


def _page(request, dataset, *, form=None, editing=None, error=None, status=200, test=None):
    return render(
        request,
        PAGE,
        {
            "dataset": dataset,
            "connections": [
                connections.connection_dict(c) for c in connections.connections_of(dataset)
            ],
            "usage": connections.dataset_usage(dataset),
            "form": form or EMPTY_FORM,
            "editing": editing,
            "error": error,
            "test": test,
        },
        status=status,
    )


def _refused_form(request, refused: DomainError) -> dict:
    """The form as posted, to fix what was refused, less an ``api_key_env`` that was refused:
    what was typed there may be the key itself, and a key is never shown."""
    form = {name: request.POST.get(name, "") for name in EMPTY_FORM}
    details = refused.details if isinstance(refused.details, dict) else {}
    if "api_key_env" in details.get("fields", {}):
        form["api_key_env"] = ""
    return form


def _form_of(connection) -> dict:
    shown = connections.connection_dict(connection)
    shown["options"] = json.dumps(shown["options"], indent=1)
    shown["requests_per_minute"] = shown["requests_per_minute"] or ""
    return shown


def _posted(request) -> dict:
    """The form's fields as ``connections.clean`` takes them: numbers as numbers where they
    read as one (else the text, which ``clean`` names as the problem), options as JSON."""
    data = {name: request.POST.get(name, "") for name in EMPTY_FORM}
    for name in NUMBERS:
        text = data[name].strip()
        if not text:
            # Left empty: no limit (requests a minute), else the default or as it was.
            if name == "requests_per_minute":
                data[name] = None
            else:
                del data[name]
            continue
        try:
            data[name] = float(text) if name == "timeout_seconds" else int(text)
        except ValueError:
            data[name] = text
    try:
        data["options"] = json.loads(data["options"] or "{}")
    except ValueError as problem:
        raise InvalidModelConnection(
            f"The connection was not saved: options: not JSON ({problem}).",
            details={"fields": {"options": "not JSON"}},
        ) from None
    return data


@require_GET
def model_connections(request, slug):
    dataset = _curated(request, slug)
    editing_pk = request.GET.get("edit")
    if editing_pk and editing_pk.isdigit():
        _, connection = _connection(request, slug, int(editing_pk))
        return _page(request, dataset, form=_form_of(connection), editing=connection.pk)
    return _page(request, dataset)


@require_POST
def model_connection_create(request, slug):
    dataset = _curated(request, slug)
    try:
        created = connections.create_connection(dataset, request.user, _posted(request))
    except DomainError as refused:
        form = _refused_form(request, refused)
        return _page(request, dataset, form=form, error=refused, status=422)
    messages.success(request, f"Model connection {created.name!r} added.")
    return redirect("dataset-models", dataset.slug)


@require_POST
def model_connection_update(request, slug, pk):
    dataset, connection = _connection(request, slug, pk)
    try:
        connections.update_connection(connection, request.user, _posted(request))
    except DomainError as refused:
        form = _refused_form(request, refused)
        return _page(request, dataset, form=form, editing=pk, error=refused, status=422)
    messages.success(request, f"Model connection {connection.name!r} saved.")
    return redirect("dataset-models", dataset.slug)


@require_POST
def model_connection_delete(request, slug, pk):
    dataset, connection = _connection(request, slug, pk)
    try:
        connections.delete_connection(connection, request.user)
    except DomainError as refused:
        return _page(request, dataset, error=refused, status=409)
    messages.success(request, f"Model connection {connection.name!r} deleted.")
    return redirect("dataset-models", dataset.slug)


@require_POST
def model_connection_test(request, slug, pk):
    """The model's answer to a one-line prompt, or the exact error: the row's result cell
    (htmx), or the page with it."""
    dataset, connection = _connection(request, slug, pk)
    result = {**client.test_connection(connection, request.user), "connection": pk}
    if request.headers.get("HX-Request"):
        return render(request, f"{PAGE}#test-result", {"test": result})
    return _page(request, dataset, test=result)
