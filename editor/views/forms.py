from django import forms

from editor import formats
from editor.labels.filters import filter_choices, parse_label_filter, pickable_questions
from editor.models import Contains, Dataset, Role, Status, TranscriptFilter
from editor.search import MAX_SEARCH_LENGTH

SPEC_OPTIONS = [(spec, spec) for spec in formats.SPEC_IDS]


class ImportForm(forms.Form):
    """Shares the dataset page with ``ExportForm``: distinct element ids keep labels right."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, auto_id="import_%s", **kwargs)

    file = forms.FileField(
        help_text="A transcript (text or JSON), a JSONL file (one transcript per line) or a "
        ".zip of transcript files."
    )
    spec = forms.ChoiceField(
        choices=[("", "Detect automatically"), *SPEC_OPTIONS], required=False, label="Spec"
    )
    on_conflict = forms.ChoiceField(
        choices=[("update", "update it (a new revision)"), ("skip", "skip it")],
        initial="update",
        label="When an id is already in the dataset",
    )
    partial = forms.BooleanField(
        required=False,
        label="Import the readable items and report the rest (otherwise: all or nothing)",
    )


class ExportForm(forms.Form):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, auto_id="export_%s", **kwargs)

    spec = forms.ChoiceField(
        choices=[("", "each transcript's own spec"), *SPEC_OPTIONS], required=False, label="Spec"
    )
    format = forms.ChoiceField(
        choices=[
            ("jsonl", "JSONL: one transcript per line"),
            ("messages", '{"messages": […]} rows (TRL / Hugging Face chat datasets)'),
        ],
        initial="jsonl",
    )
    status = forms.MultipleChoiceField(
        choices=Status.choices,
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text="None checked: every status.",
    )
    audience = forms.ChoiceField(
        choices=[("", "everything (as annotators see it)"), ("end_user", "what the end user sees")],
        required=False,
    )


class DatasetForm(forms.ModelForm):
    """A new dataset (the model's own validation: slug pattern and uniqueness)."""

    class Meta:
        model = Dataset
        fields = ["name", "slug", "description", "default_spec"]
        widgets = {"description": forms.Textarea(attrs={"rows": 2})}
        help_texts = {"slug": "In the dataset's address: letters, digits, - _ and dots."}

    def __init__(self, *args, **kwargs):
        super().__init__(*args, auto_id="new_dataset_%s", **kwargs)


class DatasetEditForm(forms.ModelForm):
    """A dataset's name, description and default spec; the slug stays (it is in links)."""

    class Meta:
        model = Dataset
        fields = ["name", "description", "default_spec"]
        widgets = {"description": forms.Textarea(attrs={"rows": 2})}

    def __init__(self, *args, **kwargs):
        super().__init__(*args, auto_id="edit_dataset_%s", **kwargs)


class MemberAddForm(forms.Form):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, auto_id="member_%s", **kwargs)

    username = forms.CharField(max_length=150)
    role = forms.ChoiceField(choices=Role.choices, initial=Role.VIEWER)


class MemberRoleForm(forms.Form):
    role = forms.ChoiceField(choices=Role.choices)


SORT_OPTIONS = [
    ("-updated", "last changed, newest first"),
    ("updated", "last changed, oldest first"),
    ("title", "title, A to Z"),
    ("-title", "title, Z to A"),
    ("-messages", "most messages first"),
    ("messages", "fewest messages first"),
    ("-errors", "most errors first"),
    ("errors", "fewest errors first"),
]
DEFAULT_SORT = SORT_OPTIONS[0][0]


class TranscriptFilterForm(forms.Form):
    """The dataset page's filters, read from the query string (so a filtered list is a link).

    An invalid value is reported next to its field and ignored; the others still apply.
    """

    def __init__(self, *args, dataset: Dataset, **kwargs):
        super().__init__(*args, auto_id="filter_%s", **kwargs)
        self.label_questions = pickable_questions(dataset)
        # Without questions to pick from, any label is refused (a bulk action "on everything
        # matching" must never widen to everything); the page shows the field only with some.
        self.fields["label"].choices = [
            ("", "any label"),
            *filter_choices(self.label_questions),
        ]

    q = forms.CharField(
        required=False,
        max_length=MAX_SEARCH_LENGTH,
        label="Search messages",
        widget=forms.TextInput(attrs={"type": "search", "placeholder": "words in messages"}),
    )
    status = forms.MultipleChoiceField(
        choices=Status.choices, required=False, widget=forms.CheckboxSelectMultiple
    )
    spec = forms.ChoiceField(choices=[("", "any spec"), *SPEC_OPTIONS], required=False)
    # Named and valued as the API's parameter: a page's query string works there too.
    has_errors = forms.ChoiceField(
        choices=[("", "any"), ("true", "with errors"), ("false", "without errors")],
        required=False,
        label="Errors",
    )
    code = forms.CharField(
        required=False,
        label="Diagnostic code",
        widget=forms.TextInput(attrs={"placeholder": "E-STREAM-TRUNCATED", "type": "search"}),
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
    sort = forms.ChoiceField(choices=SORT_OPTIONS, required=False, label="Sort by")
    label = forms.ChoiceField(required=False, label="Label")

    def clean_label(self):
        # The field's choices are exactly the tokens the parser accepts: this only types them.
        token = self.cleaned_data.get("label")
        return parse_label_filter(self.label_questions, token) if token else None

    def to_filter(self, *, search_hidden: bool) -> TranscriptFilter:
        """The valid part of the filters (``is_valid`` must have run); ``search_hidden``:
        the search also looks where the end user cannot see (``TranscriptFilter``)."""
        data = self.cleaned_data
        return TranscriptFilter(
            text=(data.get("q") or "").strip() or None,
            search_hidden=search_hidden,
            statuses=data.get("status") or (),
            spec=data.get("spec") or None,
            has_errors={"true": True, "false": False}.get(data.get("has_errors") or ""),
            code=(data.get("code") or "").strip() or None,
            contains=data.get("has") or (),
            updated_by=(data.get("updated_by") or "").strip() or None,
            updated_since=data.get("updated_since"),
            label=data.get("label"),
        )

    def sort_key(self) -> str:
        return self.cleaned_data.get("sort") or DEFAULT_SORT
