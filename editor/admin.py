"""Admin pages: browse and fix datasets and memberships; inspect transcripts and history.

Transcripts, their messages and their revisions are strictly read-only here (no add, change
or delete, not even the bulk "delete selected" action): every change to them must go
through ``editor.storage`` (version check, revision, soft delete), which the admin's plain
``save()`` and ``delete()`` would bypass. Each transcript links to its page in the app, where
editing, delete and restore go through the domain.
"""

from __future__ import annotations

import json

from django.contrib import admin
from django.forms.models import BaseInlineFormSet
from django.urls import reverse
from django.utils.html import format_html

from editor.models import (
    ApiToken,
    Dataset,
    DatasetEdit,
    ImportTask,
    Membership,
    MembershipChange,
    Message,
    Revision,
    TaskWorker,
    Transcript,
)


class ViewOnly:
    """Shown, never written: with no add, change or delete permission Django's admin renders
    the change page read-only, answers 403 to any POST and offers no delete action."""

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False


class MembershipInline(ViewOnly, admin.TabularInline):
    """Members are shown here and changed in the app only (the dataset's page, the members
    API; superusers act as curators there): editor.membership records every change and keeps
    a dataset's last curator, which a form here would bypass."""

    model = Membership
    extra = 0
    fields = ["user", "role", "created_at"]
    readonly_fields = fields


@admin.register(Dataset)
class DatasetAdmin(admin.ModelAdmin):
    list_display = ["name", "slug", "default_spec", "transcript_count", "created_at"]
    list_filter = ["default_spec"]
    search_fields = ["name", "slug", "description"]
    prepopulated_fields = {"slug": ["name"]}
    inlines = [MembershipInline]

    def get_queryset(self, request):
        return super().get_queryset(request).with_transcript_counts()

    @admin.display(ordering="transcript_count", description="Transcripts")
    def transcript_count(self, dataset: Dataset) -> int:
        return dataset.transcript_count


@admin.register(Membership)
class MembershipAdmin(ViewOnly, admin.ModelAdmin):
    """Read-only, as ``MembershipInline`` says why."""

    list_display = ["user", "dataset", "role", "created_at"]
    list_filter = ["role", "dataset"]
    search_fields = ["user__username", "dataset__slug"]
    autocomplete_fields = ["user", "dataset"]


@admin.register(MembershipChange)
class MembershipChangeAdmin(ViewOnly, admin.ModelAdmin):
    """The record of membership changes made in the app (``editor.membership``)."""

    list_display = ["created_at", "dataset", "actor", "action", "username", "old_role", "new_role"]
    list_filter = ["action", "dataset"]
    search_fields = ["username", "dataset__slug", "actor__username"]
    list_select_related = ["dataset", "actor"]


@admin.register(DatasetEdit)
class DatasetEditAdmin(ViewOnly, admin.ModelAdmin):
    """The record of datasets created and edited in the app (``editor.membership``)."""

    list_display = ["created_at", "dataset", "actor", "created", "changes"]
    list_filter = ["dataset"]
    search_fields = ["dataset__slug", "actor__username"]
    list_select_related = ["dataset", "actor"]


class MessageFormSet(BaseInlineFormSet):
    def _construct_form(self, i, **kwargs):
        form = super()._construct_form(i, **kwargs)
        # A message's content may be read from its transcript's source text
        # (editor.db.message_text): the transcript shown, not one fetched again for each row.
        form.instance.transcript = self.instance
        return form


class MessageInline(ViewOnly, admin.TabularInline):
    model = Message
    formset = MessageFormSet
    extra = 0
    fields = ["index", "role", "channel", "recipient", "name", "call_id", "end", "content"]
    readonly_fields = fields


class RevisionInline(ViewOnly, admin.TabularInline):
    model = Revision
    extra = 0
    fields = ["number", "kind", "author", "created_at", "note"]
    readonly_fields = fields
    show_change_link = True


@admin.register(Transcript)
class TranscriptAdmin(ViewOnly, admin.ModelAdmin):
    list_display = [
        "__str__", "dataset", "spec", "status", "version", "error_count", "warning_count",
        "is_deleted", "updated_at", "app_link",
    ]  # fmt: skip
    list_filter = ["dataset", "spec", "status", ("deleted_at", admin.EmptyFieldListFilter)]
    search_fields = ["title", "external_id"]
    list_select_related = ["dataset"]
    fields = [
        "app_link", "dataset", "title", "external_id", "spec", "status", "version", "header",
        "attrs", "metadata", "source_text", "source_is_exact", "diagnostics", "error_count",
        "warning_count", "deleted_at", "deleted_by", "created_at", "created_by", "updated_at",
        "updated_by",
    ]  # fmt: skip
    readonly_fields = fields
    inlines = [MessageInline, RevisionInline]

    @admin.display(description="In the workbench")
    def app_link(self, transcript: Transcript) -> str:
        # The app's page, where edits, delete and restore keep version and revision history.
        return format_html(
            '<a href="{}">Open, edit, delete or restore</a>',
            reverse("transcript", args=[transcript.pk]),
        )

    def get_queryset(self, request):
        # Deleted transcripts too: the admin is where one looks for them.
        return Transcript.all_objects.select_related("dataset")

    @admin.display(boolean=True, description="Deleted")
    def is_deleted(self, transcript: Transcript) -> bool:
        return transcript.is_deleted


@admin.register(Revision)
class RevisionAdmin(ViewOnly, admin.ModelAdmin):
    list_display = ["transcript", "number", "kind", "author", "created_at", "note"]
    list_filter = ["kind"]
    search_fields = ["transcript__title", "transcript__external_id", "note"]
    list_select_related = ["transcript", "author"]
    readonly_fields = ["transcript", "number", "kind", "author", "created_at", "note", "stored"]

    @admin.display(description="Snapshot")
    def stored(self, revision: Revision) -> str:
        # As JSON, as the admin shows a JSONField (the column is compressed JSON).
        return format_html(
            "<pre>{}</pre>", json.dumps(revision.snapshot, indent=2, ensure_ascii=False)
        )


@admin.register(ImportTask)
class ImportTaskAdmin(admin.ModelAdmin):
    """Imports are records of what happened: read only (start one from the dataset page)."""

    list_display = [
        "source_name", "dataset", "status", "attempts", "worker", "created_by", "created_at",
        "finished_at",
    ]  # fmt: skip
    list_filter = ["status", "dataset"]
    search_fields = ["source_name"]
    list_select_related = ["dataset", "created_by"]
    readonly_fields = [
        "dataset", "created_by", "created_at", "started_at", "finished_at", "heartbeat_at",
        "worker", "attempts", "source_name", "spec", "on_conflict", "partial", "status",
        "progress", "report", "error",
    ]  # fmt: skip

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


@admin.register(TaskWorker)
class TaskWorkerAdmin(admin.ModelAdmin):
    """The task workers as last seen (``/healthz`` counts those seen lately): read only."""

    list_display = ["worker_id", "started_at", "seen_at"]
    readonly_fields = ["worker_id", "started_at", "seen_at"]

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    """Tokens are issued by `manage.py api_token` (the only time the token is shown); here
    they can be found, renamed and revoked. The stored hash is never editable."""

    list_display = ["prefix", "name", "user", "created_at", "last_used_at", "revoked_at"]
    list_filter = [("revoked_at", admin.EmptyFieldListFilter)]
    search_fields = ["prefix", "name", "user__username"]
    list_select_related = ["user"]
    fields = ["user", "name", "prefix", "key_hash", "created_at", "last_used_at", "revoked_at"]
    readonly_fields = ["user", "prefix", "key_hash", "created_at", "last_used_at", "revoked_at"]
    actions = ["revoke"]

    def has_add_permission(self, request) -> bool:
        return False

    @admin.action(description="Revoke the selected tokens")
    def revoke(self, request, queryset):
        for token in queryset:
            token.revoke()
