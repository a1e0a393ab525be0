from django.apps import AppConfig


class EditorConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "editor"
    verbose_name = "Transcript editor"

    def ready(self) -> None:
        from . import json_lookups, search_index, token_cache  # noqa: F401 (json_lookups registers a lookup)

        token_cache.connect()
        search_index.connect()
