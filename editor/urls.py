from django.urls import path, re_path, register_converter

from editor.models import DATASET_SLUG_PATTERN
from editor.views import alternatives as alternative_views
from editor.views import bulk as bulk_views
from editor.views import datasets as views
from editor.views import exports as export_views
from editor.views import judges as judge_views
from editor.views import labels as label_views
from editor.views import messages as message_views
from editor.views import models as model_views
from editor.views import pairs as pair_views
from editor.views import presence as presence_views
from editor.views import queues as queue_views
from editor.views import source as source_views
from editor.views import suggestions as suggestion_views
from editor.views import tokenizers as tokenizer_views
from editor.views import transcripts as transcript_views
from editor.views import versions as version_views
from editor.views import webhooks as webhook_views


class DatasetSlugConverter:
    regex = DATASET_SLUG_PATTERN

    def to_python(self, value: str) -> str:
        return value

    def to_url(self, value: str) -> str:
        return value


register_converter(DatasetSlugConverter, "dataset")

urlpatterns = [
    path("datasets/<dataset:slug>/models/", model_views.model_connections, name="dataset-models"),
    path("datasets/<dataset:slug>/judges/", judge_views.judges_page, name="dataset-judges"),
    path("datasets/<dataset:slug>/judges/attach/", judge_views.judge_attach, name="judge-attach"),
    path(
        "datasets/<dataset:slug>/judges/<int:pk>/run/",
        judge_views.judge_run_start,
        name="judge-run-start",
    ),
    path("judge-runs/<int:pk>/", judge_views.judge_run_row, name="judge-run-row"),
    path("judge-runs/<int:pk>/cancel/", judge_views.judge_run_cancel, name="judge-run-cancel"),
    path("judge-runs/<int:pk>/resume/", judge_views.judge_run_resume, name="judge-run-resume"),
    path(
        "datasets/<dataset:slug>/models/add/",
        model_views.model_connection_create,
        name="dataset-model-create",
    ),
    path(
        "datasets/<dataset:slug>/models/<int:pk>/",
        model_views.model_connection_update,
        name="dataset-model-update",
    ),
    path(
        "datasets/<dataset:slug>/models/<int:pk>/delete/",
        model_views.model_connection_delete,
        name="dataset-model-delete",
    ),
    path(
        "datasets/<dataset:slug>/models/<int:pk>/test/",
        model_views.model_connection_test,
        name="dataset-model-test",
    ),
    path("", views.dashboard, name="dashboard"),
    path("datasets/", views.dataset_create, name="dataset-create"),
    path("datasets/<dataset:slug>/", views.dataset_detail, name="dataset"),
    # The dataset page's sections below the table, fetched once the table is in (htmx).
    path(
        "datasets/<dataset:slug>/sections/queues/",
        views.dataset_queues_section,
        name="dataset-queues-section",
    ),
    path(
        "datasets/<dataset:slug>/sections/members/",
        views.dataset_members_section,
        name="dataset-members-section",
    ),
    path(
        "datasets/<dataset:slug>/sections/import/",
        views.dataset_import_section,
        name="dataset-import-section",
    ),
    path(
        "datasets/<dataset:slug>/sections/export/",
        views.dataset_export_section,
        name="dataset-export-section",
    ),
    path("datasets/<dataset:slug>/edit/", views.dataset_edit, name="dataset-edit"),
    path("datasets/<dataset:slug>/delete/", views.dataset_delete, name="dataset-delete"),
    path("datasets/<dataset:slug>/members/", views.member_add, name="member-add"),
    path(
        "datasets/<dataset:slug>/invitations/<str:username>/withdraw/",
        views.invitation_withdraw,
        name="invitation-withdraw",
    ),
    path(
        "invitations/<int:pk>/accept/",
        views.invitation_answer,
        {"answer": "accept"},
        name="invitation-accept",
    ),
    path(
        "invitations/<int:pk>/decline/",
        views.invitation_answer,
        {"answer": "decline"},
        name="invitation-decline",
    ),
    path(
        "datasets/<dataset:slug>/members/<str:username>/",
        views.member_role,
        name="member-role",
    ),
    path(
        "datasets/<dataset:slug>/members/<str:username>/remove/",
        views.member_remove,
        name="member-remove",
    ),
    path("datasets/<dataset:slug>/import/", views.dataset_import, name="dataset-import"),
    path("datasets/<dataset:slug>/export/", views.dataset_export, name="dataset-export"),
    path("imports/<int:pk>/", views.import_task_detail, name="import-task"),
    path(
        "datasets/<dataset:slug>/exports/",
        export_views.export_task_start,
        name="export-task-start",
    ),
    path("exports/<int:pk>/", export_views.export_task_detail, name="export-task"),
    path("datasets/<dataset:slug>/bulk/", bulk_views.dataset_bulk, name="dataset-bulk"),
    path("bulk/<int:pk>/", bulk_views.bulk_task_detail, name="bulk-task"),
    path(
        "exports/<int:pk>/download/",
        export_views.export_task_download,
        name="export-task-download",
    ),
    path("datasets/<dataset:slug>/queues/", queue_views.queue_create, name="queue-create"),
    path("datasets/<dataset:slug>/labels/", label_views.label_schemas, name="label-schemas"),
    path(
        "datasets/<dataset:slug>/labels/save/",
        label_views.label_schema_save,
        name="label-schema-save",
    ),
    path("queues/<int:pk>/", queue_views.queue_detail, name="queue"),
    path("queues/<int:pk>/claim/", queue_views.queue_claim, name="queue-claim"),
    path("queues/<int:pk>/schemas/", label_views.queue_schemas_save, name="queue-schemas"),
    path("queues/<int:pk>/review/", queue_views.queue_review, name="queue-review"),
    path("queues/<int:pk>/dashboard/", queue_views.queue_dashboard, name="queue-dashboard"),
    path(
        "suggestions/<int:pk>/accept/",
        suggestion_views.suggestion_accept,
        name="suggestion-accept",
    ),
    re_path(
        r"^assignments/(?P<pk>[0-9]+)/(?P<move>submit|skip)/$",
        queue_views.assignment_move,
        name="assignment-move",
    ),
    path("assignments/<int:pk>/resume/", queue_views.assignment_resume, name="assignment-resume"),
    path("transcripts/<int:pk>/answers/", label_views.transcript_answer, name="transcript-answer"),
    path("transcripts/<int:pk>/spans/", label_views.transcript_span, name="transcript-span"),
    path(
        "transcripts/<int:pk>/alternatives/<int:index>/",
        alternative_views.alternatives_panel,
        name="alternatives-panel",
    ),
    path(
        "transcripts/<int:pk>/alternatives/add/",
        alternative_views.alternative_add,
        name="alternative-add",
    ),
    path(
        "transcripts/<int:pk>/alternatives/<int:alt>/promote/",
        alternative_views.alternative_promote,
        name="alternative-promote",
    ),
    path(
        "transcripts/<int:pk>/alternatives/<int:alt>/delete/",
        alternative_views.alternative_delete,
        name="alternative-delete",
    ),
    path("annotations/<int:pk>/delete/", label_views.annotation_delete, name="annotation-delete"),
    path("assignments/<int:pk>/review/", queue_views.assignment_review, name="assignment-review"),
    path("transcripts/<int:pk>/", transcript_views.transcript_detail, name="transcript"),
    path("transcripts/<int:pk>/undo/", message_views.transcript_undo, name="transcript-undo"),
    path("transcripts/<int:pk>/fixes/", message_views.transcript_fix, name="transcript-fix"),
    path(
        "transcripts/<int:pk>/status/",
        message_views.transcript_transition,
        name="transcript-transition",
    ),
    path("transcripts/<int:pk>/messages/new/", message_views.message_new, name="message-new"),
    path(
        "transcripts/<int:pk>/messages/insert/",
        message_views.message_insert,
        name="message-insert",
    ),
    path(
        "transcripts/<int:pk>/messages/<int:index>/",
        message_views.message_detail,
        name="message",
    ),
    path(
        "transcripts/<int:pk>/messages/<int:index>/edit/",
        message_views.message_edit,
        name="message-edit",
    ),
    path(
        "transcripts/<int:pk>/messages/<int:index>/save/",
        message_views.message_save,
        name="message-save",
    ),
    path(
        "transcripts/<int:pk>/messages/<int:index>/validate/",
        message_views.message_validate,
        name="message-validate",
    ),
    path(
        "transcripts/<int:pk>/messages/<int:index>/resolve/",
        message_views.message_resolve,
        name="message-resolve",
    ),
    path(
        "transcripts/<int:pk>/messages/<int:index>/delete/",
        message_views.message_delete,
        name="message-delete",
    ),
    path(
        "transcripts/<int:pk>/messages/<int:index>/move/",
        message_views.message_move,
        name="message-move",
    ),
    path(
        "transcripts/<int:pk>/messages/<int:index>/duplicate/",
        message_views.message_duplicate,
        name="message-duplicate",
    ),
    path(
        "transcripts/<int:pk>/presence/",
        presence_views.transcript_presence,
        name="transcript-presence",
    ),
    path("transcripts/<int:pk>/source/", source_views.source_editor, name="transcript-source"),
    path(
        "transcripts/<int:pk>/source/validate/",
        source_views.source_validate,
        name="transcript-source-validate",
    ),
    path(
        "transcripts/<int:pk>/source/convert/",
        source_views.source_convert_preview,
        name="transcript-source-convert",
    ),
    path("transcripts/<int:pk>/export/", source_views.transcript_export, name="transcript-export"),
    path("transcripts/<int:pk>/history/", views.transcript_history, name="transcript-history"),
    path("transcripts/<int:pk>/pairs/", pair_views.transcript_pairs, name="transcript-pairs"),
    path("datasets/<dataset:slug>/pairs/", pair_views.dataset_pairs, name="dataset-pairs"),
    path(
        "datasets/<dataset:slug>/tokenizer/",
        tokenizer_views.dataset_tokenizer,
        name="dataset-tokenizer",
    ),
    path(
        "datasets/<dataset:slug>/tokenizer/set/",
        tokenizer_views.dataset_tokenizer_set,
        name="dataset-tokenizer-set",
    ),
    path(
        "datasets/<dataset:slug>/tokenizer/delete/",
        tokenizer_views.dataset_tokenizer_delete,
        name="dataset-tokenizer-delete",
    ),
    path(
        "datasets/<dataset:slug>/webhooks/",
        webhook_views.dataset_webhooks,
        name="dataset-webhooks",
    ),
    path(
        "datasets/<dataset:slug>/webhooks/add/",
        webhook_views.webhook_create,
        name="webhook-create",
    ),
    path(
        "datasets/<dataset:slug>/webhooks/<int:pk>/",
        webhook_views.webhook_detail,
        name="webhook-detail",
    ),
    path(
        "datasets/<dataset:slug>/webhooks/<int:pk>/toggle/",
        webhook_views.webhook_toggle,
        name="webhook-toggle",
    ),
    path(
        "datasets/<dataset:slug>/webhooks/<int:pk>/delete/",
        webhook_views.webhook_delete,
        name="webhook-delete",
    ),
    path(
        "datasets/<dataset:slug>/webhooks/<int:pk>/test/",
        webhook_views.webhook_test,
        name="webhook-test",
    ),
    path(
        "datasets/<dataset:slug>/webhooks/<int:pk>/deliveries/<int:delivery_pk>/resend/",
        webhook_views.delivery_resend,
        name="webhook-delivery-resend",
    ),
    path(
        "datasets/<dataset:slug>/versions/",
        version_views.dataset_versions,
        name="dataset-versions",
    ),
    path(
        "datasets/<dataset:slug>/version-create/",
        version_views.version_create,
        name="dataset-version-create",
    ),
    path(
        "datasets/<dataset:slug>/versions/<str:name>/",
        version_views.version_detail,
        name="dataset-version",
    ),
    path(
        "datasets/<dataset:slug>/versions/<str:name>/export/",
        version_views.version_export,
        name="dataset-version-export",
    ),
    path(
        "datasets/<dataset:slug>/versions/<str:name>/compare/",
        version_views.version_compare,
        name="dataset-version-compare",
    ),
    path("pairs/<int:pk>/exclude/", pair_views.pair_exclude, name="pair-exclude"),
    path("pairs/<int:pk>/include/", pair_views.pair_include, name="pair-include"),
    path(
        "transcripts/<int:pk>/revisions/<int:number>/restore/",
        views.revision_restore,
        name="revision-restore",
    ),
]
