from django.apps import AppConfig


class EditorConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "editor"
    verbose_name = "Transcript editor"

    def ready(self) -> None:
        # Imported here, not at the top: these modules use models, which Django allows only
        # once the app registry is ready (this hook). The task modules register how their
        # tasks are recovered (``editor.background.register``): every process knows them all.
        from editor import background
        from editor.assist import tasks as judge_tasks  # noqa: F401
        from editor.bulk import tasks as bulk_tasks  # noqa: F401
        from editor.db import sqlite_binding
        from editor.exporting import tasks as export_tasks  # noqa: F401
        from editor.importing import tasks as import_tasks  # noqa: F401
        from editor.models import tokens
        from editor.storage import message_rows
        from editor.tokenizing import tasks as token_tasks  # noqa: F401
        from editor.webhooks import tasks as webhook_tasks  # noqa: F401

        sqlite_binding.register_adapters()
        background.connect()
        tokens.connect()
        message_rows.connect()
