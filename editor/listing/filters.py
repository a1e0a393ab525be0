"""The transcript list's filters as a query string carries them (``?status=…&spec=…&q=…``),
read into a ``TranscriptFilter``: the dataset page, its bulk actions and its exports read
them with this one form."""

from dataclasses import dataclass

from django import forms
from django.http import QueryDict

from editor import formats
from editor.formats.diagnostics import CODES
from editor.labels.filters import filter_choices, parse_label_filter, pickable_questions
from editor.models import Contains, Dataset, Status, TranscriptFilter
from editor.search import MAX_SEARCH_LENGTH


def spec_options(first: str):
    """Choices of every spec id the registry knows when a form is shown (a spec registered
    later is offered too), after ``first`` (the empty choice's label)."""
    return lambda: [("", first), *((spec, spec) for spec in formats.spec_ids())]


SORT_OPTIONS = [
    ("-updated", "last changed, newest first"),
    ("updated", "last changed, oldest first"),
    ("title", "title, A to Z"),
    ("-title", "title, Z to A"),
    ("-messages", "most messages first"),
    ("messages", "fewest messages first"),
    ("-errors", "most errors first"),
    ("errors", "fewest errors first"),
    ("-tokens", "most tokens first"),
    ("tokens", "fewest tokens first"),
]
DEFAULT_SORT = SORT_OPTIONS[0][0]


class TranscriptFilterForm(forms.Form):
    """The dataset page's filters, read from the query string (so a filtered list is a link).

    An invalid value is reported next to its field and ignored; the others still apply.
    """

    # Offered only to the roles that see hidden parts (``listing.hidden_filters``).
    HIDDEN_FIELDS = ("has", "code", "label", "judge")

    def __init__(self, *args, dataset: Dataset, sees_hidden: bool = True, **kwargs):
        super().__init__(*args, auto_id="filter_%s", **kwargs)
        self.sees_hidden = sees_hidden
        self.label_questions = pickable_questions(dataset) if sees_hidden else []
        # Without questions to pick from, any label is refused (a bulk action "on everything
        # matching" must never widen to everything); the page shows the field only with some.
        self.fields["label"].choices = [
            ("", "any label"),
            *filter_choices(self.label_questions),
        ]
        if not sees_hidden:
            for name in self.HIDDEN_FIELDS:
                del self.fields[name]

    def ignored(self) -> list[str]:
        """The filters asked for that this role is not offered (and that are left out)."""
        if self.sees_hidden:
            return []
        return [name for name in self.HIDDEN_FIELDS if self.data.get(name)]

    q = forms.CharField(
        required=False,
        max_length=MAX_SEARCH_LENGTH,
        label="Search messages",
        widget=forms.TextInput(attrs={"type": "search", "placeholder": "words in messages"}),
    )
    status = forms.MultipleChoiceField(
        choices=Status.choices, required=False, widget=forms.CheckboxSelectMultiple
    )
    spec = forms.ChoiceField(choices=spec_options("any spec"), required=False)
    # Named and valued as the API's parameter: a page's query string works there too.
    has_errors = forms.ChoiceField(
        choices=[("", "any"), ("true", "with errors"), ("false", "without errors")],
        required=False,
        label="Errors",
    )
    code = forms.CharField(
        required=False,
        label="Diagnostic code",
        widget=forms.TextInput(
            attrs={"placeholder": "E-STREAM-TRUNCATED", "type": "search", "list": "known-codes"}
        ),
    )
    has = forms.MultipleChoiceField(
        choices=Contains.choices,
        required=False,
        widget=forms.CheckboxSelectMultiple,
        label="Contains",
    )
    updated_by = forms.CharField(
        required=False,
        label="Last changed by",
        widget=forms.TextInput(attrs={"list": "member-names", "type": "search"}),
    )
    updated_since = forms.DateField(
        required=False,
        label="Changed since",
        widget=forms.DateInput(attrs={"type": "date"}),
    )
    # Named and valued as the API's parameter (editor.tokens counts them).
    tokens_over = forms.IntegerField(
        required=False,
        min_value=0,
        max_value=2**31 - 1,
        label="Over N tokens",
        widget=forms.NumberInput(attrs={"placeholder": "4096"}),
    )
    sort = forms.ChoiceField(choices=SORT_OPTIONS, required=False, label="Sort by")
    label = forms.ChoiceField(required=False, label="Label")
    # A judge's answers are read by the roles that label (editor.assist.suggestions).
    judge = forms.ChoiceField(
        choices=[("", "any"), ("disagrees", "disagrees with people")],
        required=False,
        label="Judge",
    )

    def clean_label(self):
        # The field's choices are exactly the tokens the parser accepts: this only types them.
        token = self.cleaned_data.get("label")
        return parse_label_filter(self.label_questions, token) if token else None

    def to_filter(self) -> TranscriptFilter:
        """The valid part of the filters (``is_valid`` must have run); where the words are
        searched is the list's (``TranscriptList.of``)."""
        data = self.cleaned_data
        return TranscriptFilter(
            text=(data.get("q") or "").strip() or None,
            statuses=data.get("status") or (),
            spec=data.get("spec") or None,
            has_errors={"true": True, "false": False}.get(data.get("has_errors") or ""),
            code=(data.get("code") or "").strip() or None,
            contains=data.get("has") or (),
            updated_by=(data.get("updated_by") or "").strip() or None,
            updated_since=data.get("updated_since"),
            label=data.get("label"),
            tokens_over=data.get("tokens_over"),
            judge_disagrees=data.get("judge") == "disagrees",
        )

    def sort_key(self) -> str:
        return self.cleaned_data.get("sort") or DEFAULT_SORT


@dataclass(frozen=True)
class CodeChoice:
    """One code of the dataset page's facet: how many matching transcripts hold it, and the
    address of the list filtered by it (the other filters kept; the current one: without)."""

    code: str
    severity: str
    count: int
    url: str
    active: bool


def code_facet(counts: list[tuple[str, int]] | None, query: QueryDict, path: str):
    """The facet of ``counts`` (``TranscriptList.code_counts``) on the page at ``path`` whose
    query string is ``query``: one click filters by a code, a second click removes it."""
    if counts is None:
        return None
    current = (query.get("code") or "").strip()
    return [
        CodeChoice(
            code=code,
            severity=CODES[code].severity if code in CODES else "error",
            count=count,
            url=url_with(query, path, code=None if code == current else code, page=None),
            active=code == current,
        )
        for code, count in counts
    ]


def known_codes() -> list[str]:
    """Every diagnostic code the validator can give (the code field's suggestions)."""
    return sorted(CODES)


def url_with(query: QueryDict, path: str, **changes) -> str:
    """``path`` with ``query`` minus its empty values, with ``changes`` (None removes a
    parameter): a link of the dataset page that keeps its other filters."""
    params = QueryDict(mutable=True)
    for name, values in query.lists():
        params.setlist(name, [value for value in values if value])
    for name, value in changes.items():
        params.pop(name, None)
        if value is not None:
            params[name] = value
    encoded = params.urlencode()
    return f"{path}?{encoded}" if encoded else path
