from django import forms

from editor.formats.preference import HH, IMPORT_PREFERENCE, IMPORT_TRANSCRIPTS
from editor.formats.training import ALL_ASSISTANT, GPT_OSS, LAST_ASSISTANT_TURN
from editor.listing.filters import spec_options
from editor.models import Dataset, Role, Status


class ImportForm(forms.Form):
    """Shares the dataset page with ``ExportForm``: distinct element ids keep labels right."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, auto_id="import_%s", **kwargs)

    file = forms.FileField(
        help_text="A transcript (text or JSON), a JSONL file (one transcript per line), a "
        ".zip of transcript files, a Parquet file, or preference pairs (TRL, HH-RLHF)."
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
    shape = forms.ChoiceField(
        choices=[
            ("", "Decide from each row's keys"),
            (IMPORT_TRANSCRIPTS, "Transcripts only"),
            (IMPORT_PREFERENCE, "Preference pairs (TRL rows)"),
            (HH, "HH-RLHF pairs (Human: / Assistant: text)"),
        ],
        required=False,
        label="Rows are",
        help_text="Rows with both chosen and rejected are read as preference pairs unless you "
        "say otherwise; HH-RLHF reads their strings as Human:/Assistant: turns. Each pair "
        "becomes a transcript whose last turn has the two answers as alternatives.",
    )


CONVENTION_CHOICES = (
    (ALL_ASSISTANT, "all assistant messages"),
    (LAST_ASSISTANT_TURN, "the last assistant turn"),
    (GPT_OSS, "gpt-oss (earlier turns' analysis dropped)"),
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
    mask = forms.ChoiceField(
        label="Training mask",
        choices=[
            ("", "none"),
            ("weight", "weight 0/1 on each assistant message (OpenAI fine-tuning)"),
            ("assistant_masks", "assistant_masks column: 0/1 per message"),
            ("tokens", "input_ids + assistant_masks per token (TRL; the dataset's tokenizer)"),
        ],
        required=False,
        help_text='For {"messages": […]} rows only: what a training run computes loss on.',
    )
    convention = forms.ChoiceField(
        label="Trained on",
        choices=[
            ("", "the spec's default (gpt-oss for Harmony, else all assistant)"),
            *CONVENTION_CHOICES,
        ],
        required=False,
        help_text="With a training mask (docs/formats.md, Training masks).",
    )
    over_context = forms.ChoiceField(
        label="Over the context length",
        choices=[
            ("", "export them, say nothing"),
            ("report", "export them, each reported as a loss"),
            ("drop", "leave them out, each reported as a loss"),
        ],
        required=False,
        help_text="By the token counts under the dataset's tokenizer; needs its context length.",
    )
    # Off unless asked: a judge's answers are never exported as if they were a person's.
    with_suggestions = forms.BooleanField(
        label="With the judge's suggestions",
        required=False,
        help_text="Each transcript's newest model suggestion per question, in a "
        '"suggestions" list marked "source": "model", apart from the people\'s answers. Whole '
        "transcripts only (not “what the end user sees”); not for preference pairs.",
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
