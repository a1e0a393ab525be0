"""HTML views: thin. They read the request, call one domain function and render."""

from django.db.models import Prefetch
from django.shortcuts import render
from django.views.decorators.http import require_GET
from django.views.decorators.vary import vary_on_headers

from .models import Dataset, Transcript


@require_GET
@vary_on_headers("HX-Request")
def dashboard(request):
    transcripts = Transcript.objects.with_counts().order_by("title", "pk")
    datasets = list(
        Dataset.objects.for_user(request.user)
        .prefetch_related(Prefetch("transcripts", queryset=transcripts))
    )
    return render(request, "editor/dashboard.html", {"datasets": datasets})
