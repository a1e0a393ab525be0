from django.urls import path

from . import views

urlpatterns = [
    path("", views.dashboard, name="dashboard"),
    path("datasets/<slug:slug>/", views.dataset_detail, name="dataset"),
    path("datasets/<slug:slug>/import/", views.dataset_import, name="dataset-import"),
    path("datasets/<slug:slug>/export/", views.dataset_export, name="dataset-export"),
    path("imports/<int:pk>/", views.import_task_detail, name="import-task"),
    path("transcripts/<int:pk>/", views.transcript_detail, name="transcript"),
]
