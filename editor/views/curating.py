"""What the pages a dataset's curators run share (models, webhooks, versions): the dataset
for its curators, refused with the domain's own words otherwise, and an object a URL names
looked up through the domain, its "not found" a 404."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from django.core.exceptions import PermissionDenied
from django.http import Http404

from editor.errors import DomainError, NotAllowed
from editor.visibility import visible_dataset

if TYPE_CHECKING:
    from editor.models import Dataset

Found = TypeVar("Found")


def curated_dataset(request, slug: str, require_curator: Callable[[Dataset, object], None]):
    """The dataset ``slug`` among the user's (404 otherwise) if ``require_curator`` (the use
    case's own rule) lets the user manage it; its refusal is the 403's message."""
    dataset = visible_dataset(request.user, slug)
    try:
        require_curator(dataset, request.user)
    except NotAllowed as refused:
        raise PermissionDenied(refused.message) from None
    return dataset


def found_or_404(lookup: Callable[..., Found], *args) -> Found:
    """``lookup(*args)``, or a 404 with the domain's message when it finds nothing."""
    try:
        return lookup(*args)
    except DomainError as missing:
        raise Http404(missing.message) from None
