from django import forms

from editor.listing.filters import spec_options
from editor.models import Dataset, Role, Status


class ImportForm(forms.Form):
    """Shares the dataset page with ``ExportForm``: distinct element ids keep labels right."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, auto_id="import_%s", **kwargs)

    file = forms.FileField(
        help_text="A transcript (text or JSON), a JSONL file (one transcript per line) or a "
        ".zip of transcript files."
    )
    spec = forms.ChoiceField(
        choices=spec_options("Detect automatically"), required=False, label="Spec"
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
        choices=spec_options("each transcript's own spec"), required=False, label="Spec"
    )
    format = forms.ChoiceField(
        choices=[
            ("jsonl", "JSONL: one transcript per line"),
            ("messages", '{"messages": […]} rows (TRL / Hugging Face chat datasets)'),
            ("preference", "Preference pairs (DPO: prompt, chosen, rejected)"),
        ],
        initial="jsonl",
    )
    preference_shape = forms.ChoiceField(
        label="Pair rows",
        choices=[
            ("conversational", "TRL conversational (message lists)"),
            ("standard", "TRL standard (strings)"),
            ("hh", "HH-RLHF text (Human: / Assistant:)"),
        ],
        initial="conversational",
        required=False,
        help_text="For preference pairs only; Spec sets the messages inside them (default: "
        "openai-messages lists).",
    )
    sources = forms.MultipleChoiceField(
        label="Pairs from",
        choices=[
            ("edit", "corrections"),
            ("import", "imported pairs"),
            ("pairwise", "pairwise answers"),
        ],
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text="For preference pairs only. None checked: all.",
    )
    file_format = forms.ChoiceField(
        label="File",
        choices=[("jsonl", "JSON Lines"), ("parquet", "Parquet")],
        initial="jsonl",
        required=False,
        help_text="Parquet: prepared in the background only.",
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
