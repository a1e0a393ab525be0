from django.urls import path, register_converter

from . import views
from .models import DATASET_SLUG_PATTERN


class DatasetSlugConverter:
    regex = DATASET_SLUG_PATTERN

    def to_python(self, value: str) -> str:
        return value

    def to_url(self, value: str) -> str:
        return value


register_converter(DatasetSlugConverter, "dataset")

urlpatterns = [
    path("", views.dashboard, name="dashboard"),
    path("datasets/<dataset:slug>/", views.dataset_detail, name="dataset"),
    path("datasets/<dataset:slug>/import/", views.dataset_import, name="dataset-import"),
    path("datasets/<dataset:slug>/export/", views.dataset_export, name="dataset-export"),
    path("imports/<int:pk>/", views.import_task_detail, name="import-task"),
    path("transcripts/<int:pk>/", views.transcript_detail, name="transcript"),
    path("transcripts/<int:pk>/history/", views.transcript_history, name="transcript-history"),
    path(
        "transcripts/<int:pk>/revisions/<int:number>/restore/",
        views.revision_restore,
        name="revision-restore",
    ),
]
