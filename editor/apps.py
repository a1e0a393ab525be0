from django.apps import AppConfig


class EditorConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "editor"
    verbose_name = "Transcript editor"

    def ready(self) -> None:
        # Imported here, not at the top: these modules define or use models, which Django
        # allows only once the app registry is ready (this hook).
        from editor import token_cache
        from editor.db import json_lookups  # noqa: F401 (registers the ``holds`` lookup)
        from editor.storage import message_rows

        token_cache.connect()
        message_rows.connect()
