"""The dataset's tokenizer page (``editor.tokenizing``, docs/tokens.md): every member sees
which tokenizer counts the dataset's tokens and its context length, and why it cannot count
on this server if so; curators choose a tiktoken encoding or upload a tokenizer.json, set
the context length, or remove the tokenizer."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from editor import tokenizing, tokens
from editor.errors import DomainError, NotAllowed
from editor.formats.tokens import ENCODINGS
from editor.models import DatasetTokenizer
from editor.visibility import visible_dataset

TEMPLATE = "editor/tokenizer.html"
UPLOAD = "upload"


class TokenizerForm(forms.Form):
    source = forms.ChoiceField(
        label="Tokenizer",
        choices=[
            *((name, f"tiktoken: {name}") for name in ENCODINGS),
            (UPLOAD, "Upload a tokenizer.json"),
        ],
        widget=forms.RadioSelect,
    )
    tokenizer_json = forms.FileField(
        required=False,
        label="tokenizer.json (Hugging Face, at most 50 MB)",
        widget=forms.ClearableFileInput(attrs={"accept": ".json,application/json"}),
    )
    context_length = forms.IntegerField(
        required=False,
        min_value=1,
        max_value=tokenizing.MAX_CONTEXT_LENGTH,
        label="Context length (tokens)",
        widget=forms.NumberInput(attrs={"placeholder": "4096"}),
    )

    def clean(self):
        data = super().clean()
        if data.get("source") == UPLOAD and not data.get("tokenizer_json"):
            self.add_error("tokenizer_json", "Choose the tokenizer.json file to upload.")
        return data


def _context(dataset, form) -> dict:
    setting = DatasetTokenizer.objects.filter(dataset=dataset).first()
    return {
        "dataset": dataset,
        "setting": setting,
        "problem": tokens.availability(setting),
        "form": form,
        "can_curate": dataset.user_can_curate,
    }


def _initial(dataset) -> dict:
    setting = DatasetTokenizer.objects.filter(dataset=dataset).first()
    if setting is None:
        return {}
    source = setting.encoding if setting.kind == "tiktoken" else UPLOAD
    return {"source": source, "context_length": setting.context_length}


@require_GET
def dataset_tokenizer(request, slug):
    dataset = visible_dataset(request.user, slug)
    return render(request, TEMPLATE, _context(dataset, TokenizerForm(initial=_initial(dataset))))


@require_POST
def dataset_tokenizer_set(request, slug):
    dataset = visible_dataset(request.user, slug)
    if not dataset.user_can_curate:
        raise PermissionDenied("Only the dataset's curators may change its tokenizer.")
    form = TokenizerForm(request.POST, request.FILES)
    if form.is_valid():
        data = form.cleaned_data
        try:
            if data["source"] == UPLOAD:
                upload = data["tokenizer_json"]
                if upload.size > tokenizing.MAX_TOKENIZER_JSON_BYTES:
                    form.add_error("tokenizer_json", "The file is larger than 50 MB.")
                    raise _Shown
                tokenizing.set_tokenizer_json(
                    dataset,
                    request.user,
                    data=upload.read(),
                    name=upload.name,
                    context_length=data["context_length"],
                )
            else:
                tokenizing.set_encoding(
                    dataset,
                    request.user,
                    encoding=data["source"],
                    context_length=data["context_length"],
                )
        except _Shown:
            pass
        except NotAllowed as refused:
            raise PermissionDenied(refused.message) from None
        except DomainError as refused:
            form.add_error(None, refused.message)
        else:
            messages.success(
                request,
                "Tokenizer saved; the dataset's tokens are counted again in the background.",
            )
            return redirect("dataset-tokenizer", slug=dataset.slug)
    return render(request, TEMPLATE, _context(dataset, form), status=400)


@require_POST
def dataset_tokenizer_delete(request, slug):
    dataset = visible_dataset(request.user, slug)
    try:
        tokenizing.clear_tokenizer(dataset, request.user)
    except NotAllowed as refused:
        raise PermissionDenied(refused.message) from None
    except DomainError as refused:
        messages.error(request, refused.message)
    else:
        messages.success(
            request, "The dataset names no tokenizer any more; its counts are cleared."
        )
    return redirect("dataset-tokenizer", slug=dataset.slug)


class _Shown(Exception):
    """A problem already added to the form."""
