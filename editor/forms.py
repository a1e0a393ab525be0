from django import forms

from editor import formats

from .models import Status

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
