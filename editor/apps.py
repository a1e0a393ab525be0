from django.apps import AppConfig


class EditorConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "editor"
    verbose_name = "Transcript editor"

    def ready(self) -> None:
        from . import token_cache

        token_cache.connect()
