"""Who may see which rendering: one rule for the HTML views, the API and exports.

A role's renderings come from ``Dataset.audiences_for`` (a viewer: the end user's only).
The whole stored transcript (hidden channels, source text) is what the debug rendering shows,
so reading a transcript whole needs that rendering too.
"""

from editor.errors import NotAllowed
from editor.models import Dataset

END_USER = "end_user"
FULL_CONTENT = "debug"


def require_audience(dataset: Dataset, user, audience: str) -> None:
    """Raise ``NotAllowed`` (code ``E-PERM-VISIBILITY``, HTTP 403) unless ``user``'s role in
    ``dataset`` shows ``audience``'s rendering."""
    allowed = dataset.audiences_for(user)
    if audience not in allowed:
        raise NotAllowed(
            f"Your role in {dataset.name} shows only what the end user sees "
            f"(asked for: {audience}).",
            code="E-PERM-VISIBILITY",
            details={"audience": audience, "allowed": list(allowed)},
        )


def export_audience(dataset: Dataset, user, audience: str | None) -> None:
    """An export without ``audience`` carries everything; check the role allows that."""
    require_audience(dataset, user, audience or FULL_CONTENT)
