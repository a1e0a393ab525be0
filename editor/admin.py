"""Admin pages: browse and fix datasets and memberships; inspect transcripts and history.

Transcript content is read-only here: every change must go through ``editor.storage``
(version check, revision), which the admin's plain ``save()`` would bypass.
"""

from __future__ import annotations

from django.contrib import admin

from editor.models import (
    ApiToken,
    Dataset,
    ImportTask,
    Membership,
    Message,
    Revision,
    Transcript,
)


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0
    autocomplete_fields = ["user"]


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
class MembershipAdmin(admin.ModelAdmin):
    list_display = ["user", "dataset", "role", "created_at"]
    list_filter = ["role", "dataset"]
    search_fields = ["user__username", "dataset__slug"]
    autocomplete_fields = ["user", "dataset"]


class MessageInline(admin.TabularInline):
    model = Message
    extra = 0
    can_delete = False
    fields = ["index", "role", "channel", "recipient", "name", "call_id", "end", "content"]
    readonly_fields = fields

    def has_add_permission(self, request, obj=None) -> bool:
        return False


class RevisionInline(admin.TabularInline):
    model = Revision
    extra = 0
    can_delete = False
    fields = ["number", "kind", "author", "created_at", "note"]
    readonly_fields = fields
    show_change_link = True

    def has_add_permission(self, request, obj=None) -> bool:
        return False


READ_ONLY_TRANSCRIPT_FIELDS = [
    "spec", "header", "attrs", "source_text", "source_is_exact", "version", "diagnostics",
    "error_count", "warning_count", "deleted_at", "deleted_by", "created_at", "updated_at",
    "created_by", "updated_by",
]  # fmt: skip


@admin.register(Transcript)
class TranscriptAdmin(admin.ModelAdmin):
    list_display = [
        "__str__", "dataset", "spec", "status", "version", "error_count", "warning_count",
        "is_deleted", "updated_at",
    ]  # fmt: skip
    list_filter = ["dataset", "spec", "status", ("deleted_at", admin.EmptyFieldListFilter)]
    search_fields = ["title", "external_id"]
    list_select_related = ["dataset"]
    readonly_fields = READ_ONLY_TRANSCRIPT_FIELDS
    inlines = [MessageInline, RevisionInline]

    def get_queryset(self, request):
        # Deleted transcripts too: the admin is where one looks for them.
        return Transcript.all_objects.select_related("dataset")

    @admin.display(boolean=True, description="Deleted")
    def is_deleted(self, transcript: Transcript) -> bool:
        return transcript.is_deleted


@admin.register(Revision)
class RevisionAdmin(admin.ModelAdmin):
    list_display = ["transcript", "number", "kind", "author", "created_at", "note"]
    list_filter = ["kind"]
    search_fields = ["transcript__title", "transcript__external_id", "note"]
    list_select_related = ["transcript", "author"]
    readonly_fields = ["transcript", "number", "kind", "author", "created_at", "note", "snapshot"]

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


@admin.register(ImportTask)
class ImportTaskAdmin(admin.ModelAdmin):
    """Imports are records of what happened: read only (start one from the dataset page)."""

    list_display = ["source_name", "dataset", "status", "created_by", "created_at", "finished_at"]
    list_filter = ["status", "dataset"]
    search_fields = ["source_name"]
    list_select_related = ["dataset", "created_by"]
    readonly_fields = [
        "dataset", "created_by", "created_at", "finished_at", "source_name", "spec",
        "on_conflict", "partial", "status", "report", "error",
    ]  # fmt: skip

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
