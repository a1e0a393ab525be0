"""HTML views: thin. They read the request, call one domain function and render."""

import copy

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import Http404, QueryDict, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django.views.decorators.vary import vary_on_headers
from django_htmx.http import HttpResponseClientRedirect

from editor import background, membership
from editor.bulk import bulk_transitions
from editor.errors import (
    ConflictError,
    DomainError,
    FileStoreUnavailable,
    InvalidContent,
    NotAllowed,
)
from editor.exporting import PREVIEW_LIMIT, export_dataset
from editor.exporting.tasks import check_export_allowed
from editor.importing.report import ACTIONS, stored_items
from editor.importing.tasks import progress_of, start_import_task
from editor.listing import TranscriptList
from editor.listing import filters as filter_forms
from editor.listing import search as search_pages
from editor.listing.filters import TranscriptFilterForm
from editor.models import END_USER_AUDIENCE, Dataset, Role, Status, TaskStatus, Transcript
from editor.queues import my_work
from editor.revisions import diff_revisions, list_revisions, restore_revision
from editor.views.forms import (
    DatasetEditForm,
    DatasetForm,
    ExportForm,
    ImportForm,
    MemberAddForm,
)
from editor.views.shared import int_param, transcript_for
from editor.visibility import (
    FULL_CONTENT,
    require_audience,
    visible_dataset,
    visible_import_task,
)
from editor.webhooks import notices as webhook_notices

# Items of an import's report shown at a time.
REPORT_PAGE_SIZE = 200

PAGE_SIZE = 50
RECENT_MEMBER_CHANGES = 10  # the members section lists these; the API has them all
RECENT_EDITS = 5  # under "Edit dataset"


@require_GET
@vary_on_headers("HX-Request")
def dashboard(request):
    return _dashboard(request, DatasetForm())


def _dashboard(request, dataset_form: DatasetForm, status: int = 200):
    """The user's work (``editor.queues.my_work``: a few queries, however much there is) and their
    datasets with their counts from one aggregate query (no transcript rows)."""
    datasets = (
        Dataset.objects.for_user(request.user)
        .with_roles(request.user)
        .with_activity()
        .order_by("name", "pk")
    )
    context = {
        "work": my_work(request.user),
        "invitations": membership.invitations_for(request.user),
        "datasets": datasets,
        "dataset_form": dataset_form,
    }
    return render(request, "editor/dashboard.html", context, status=status)


@require_POST
def dataset_create(request):
    form = DatasetForm(request.POST)
    if form.is_valid():
        try:
            dataset = membership.create_dataset(author=request.user, **form.cleaned_data)
        except DomainError as refused:  # e.g. the slug was taken since the form checked
            form.add_error(None, refused.message)
        else:
            messages.success(request, f"Dataset {dataset.name} created; you are its curator.")
            return redirect("dataset", slug=dataset.slug)
    return _dashboard(request, form, status=400)


@require_GET
@vary_on_headers("HX-Request")
def dataset_detail(request, slug):
    dataset = visible_dataset(request.user, slug, with_webhook_alert=True)
    if not request.htmx or request.htmx.history_restore_request:
        # The table first: the sections below it are fetched once the page is in (htmx).
        context = {
            **table_context(request, dataset),
            **_head_context(dataset),
            "deferred_sections": _deferred_sections(dataset),
            # Curators hear of a webhook endpoint disabled after failures (banner and message).
            "disabled_webhooks": webhook_notices.tell(request, dataset),
        }
        return render(request, "editor/dataset.html", context)
    context = table_context(request, dataset)
    context["swap_filters"] = True
    response = render(request, "editor/dataset.html#transcript-table", context)
    # The address pushed to the history: the filter form sends its empty fields too.
    response["HX-Push-Url"] = _url(request, request.path)
    return response


def dataset_context(request, dataset: Dataset, **overrides) -> dict:
    """Everything the dataset page shows, its sections below the table in the page: a form
    shown again with its errors, or the export's preview without JavaScript (``overrides``
    replace a form to show its errors). The page as first asked (``dataset_detail``) leaves
    the sections out and fetches each after the table."""
    context = {
        **table_context(request, dataset),
        **_head_context(dataset),
        **_queues_context(dataset),
        **_members_context(dataset),
        **_import_context(dataset),
        **_export_context(request, dataset),
    }
    context.update(overrides)
    return context


def table_context(request, dataset: Dataset) -> dict:
    """A page of the filtered transcripts, the filters and the bulk actions' form."""
    page_path = reverse("dataset", args=[dataset.slug])
    filters = TranscriptFilterForm(
        request.GET, dataset=dataset, sees_hidden=dataset.sees_hidden(request.user)
    )
    filters.is_valid()  # invalid fields are shown with their error and ignored
    sort = filters.sort_key()
    listed = TranscriptList.of(dataset, request.user, filters.to_filter(), sort=sort)
    page = listed.page(request.GET.get("page"), PAGE_SIZE)
    counts = listed.code_counts(page.paginator.count)
    code_facet = filter_forms.code_facet(counts, request.GET, page_path)
    return {
        "dataset": dataset,
        "filter_form": filters,
        "page": page,
        "code_facet": code_facet,
        "ignored_filters": filters.ignored(),
        "known_codes": filter_forms.known_codes(),
        "page_links": _page_links(request, page_path, page),
        "sort_links": _sort_links(request, page_path, sort),
        "bulk_url": _url(request, reverse("dataset-bulk", args=[dataset.slug]), page=None),
        "bulk_transitions": bulk_transitions(dataset),
        # the bulk action "add to a queue" names them
        "bulk_queues": list(dataset.queues.all()) if dataset.user_can_curate else [],
        "sort": sort,
    }


def _head_context(dataset: Dataset) -> dict:
    """What sits above the table: the curator's "Edit dataset" and its recent edits."""
    return {
        "edit_form": DatasetEditForm(instance=dataset),
        "dataset_edits": membership.edit_log(dataset)[:RECENT_EDITS]
        if dataset.user_can_curate
        else [],
    }


def _queues_context(dataset: Dataset) -> dict:
    return {
        "dataset": dataset,
        "queues": list(dataset.queues.with_progress().prefetch_related("schemas__current_version")),
        # what a new queue may ask (the queue form's choice)
        "label_schemas": list(dataset.label_schemas.active().with_current_version())
        if dataset.user_can_curate
        else [],
        "status_choices": Status.choices,
    }


def _members_context(dataset: Dataset, member_form=None) -> dict:
    return {
        "dataset": dataset,
        "members": membership.members(dataset),
        "invitations": membership.invitations(dataset) if dataset.user_can_curate else [],
        "member_changes": membership.change_log(dataset)[:RECENT_MEMBER_CHANGES],
        "member_form": member_form or MemberAddForm(),
        "roles": Role.choices,
    }


def _import_context(dataset: Dataset) -> dict:
    return {
        "dataset": dataset,
        "import_form": ImportForm(),
        "import_tasks": dataset.import_tasks.select_related("created_by")[:5]
        if dataset.user_can_edit
        else [],
    }


def _export_context(request, dataset: Dataset) -> dict:
    return {
        "dataset": dataset,
        "export_form": ExportForm(initial={"audience": _default_export_audience(dataset)}),
        "export_tasks": dataset.export_tasks.filter(created_by=request.user)[:5],
    }


# --- the sections below the table: each fetched by the page once the table is in ---------

# name -> (title, URL name, the partial of editor/dataset.html that answers it)
SECTIONS = {
    "queues": ("Review queues", "dataset-queues-section", "queues-section"),
    "members": ("Members", "dataset-members-section", "members"),
    "import": ("Import", "dataset-import-section", "import-section"),
    "export": ("Export", "dataset-export-section", "export-section"),
}


def _deferred_sections(dataset: Dataset) -> dict[str, dict]:
    """The placeholders the page holds where each section goes (import: editors only)."""
    names = [name for name in SECTIONS if name != "import" or dataset.user_can_edit]
    return {
        name: {
            "id": name,
            "title": SECTIONS[name][0],
            "url": reverse(SECTIONS[name][1], args=[dataset.slug]),
        }
        for name in names
    }


def _section(request, name: str, context: dict):
    """The section's partial (htmx); without JavaScript (the placeholder's link), the section
    on a page of its own."""
    template = f"editor/dataset.html#{SECTIONS[name][2]}"
    if request.htmx:
        return render(request, template, context)
    context = {**context, "section_template": template, "section_title": SECTIONS[name][0]}
    return render(request, "editor/dataset_section.html", context)


@require_GET
@vary_on_headers("HX-Request")
def dataset_queues_section(request, slug):
    dataset = visible_dataset(request.user, slug)
    return _section(request, "queues", _queues_context(dataset))


@require_GET
@vary_on_headers("HX-Request")
def dataset_members_section(request, slug):
    dataset = visible_dataset(request.user, slug)
    return _section(request, "members", _members_context(dataset))


@require_GET
@vary_on_headers("HX-Request")
def dataset_import_section(request, slug):
    dataset = visible_dataset(request.user, slug)
    if not dataset.user_can_edit:
        raise PermissionDenied("You may not import into this dataset.")
    return _section(request, "import", _import_context(dataset))


@require_GET
@vary_on_headers("HX-Request")
def dataset_export_section(request, slug):
    dataset = visible_dataset(request.user, slug)
    return _section(request, "export", _export_context(request, dataset))


def _without_query(request):
    """``request`` as if its address had no query string (a page whose query string holds
    another form's fields, not the table's)."""
    bare = copy.copy(request)
    bare.GET = QueryDict()
    return bare


def _url(request, path: str, **changes) -> str:
    """``path`` with this request's query string, without empty parameters, with ``changes``."""
    return filter_forms.url_with(request.GET, path, **changes)


def _page_links(request, path: str, page) -> dict[str, str]:
    links = {}
    if page.has_previous():
        links["first"] = _url(request, path, page=None)
        links["previous"] = _url(request, path, page=page.previous_page_number())
    if page.has_next():
        links["next"] = _url(request, path, page=page.next_page_number())
        if not isinstance(page.paginator, search_pages.EstimatedPaginator):
            links["last"] = _url(request, path, page=page.paginator.num_pages)
    return links


# Column -> the sort its header asks for first (the other direction on a second click).
FIRST_SORT = {
    "title": "title",
    "messages": "-messages",
    "errors": "-errors",
    "tokens": "-tokens",
    "updated": "-updated",
}


def _sort_links(request, path: str, current: str) -> dict[str, str]:
    links = {}
    for column, first in FIRST_SORT.items():
        wanted = first
        if current == first:
            wanted = first.removeprefix("-") if first.startswith("-") else f"-{first}"
        links[column] = _url(request, path, sort=wanted, page=None)
    return links


@require_POST
def dataset_edit(request, slug):
    dataset = visible_dataset(request.user, slug)
    if not dataset.user_can_curate:
        raise PermissionDenied("Only a curator may edit this dataset.")
    # A copy for the form: invalid input must not change the dataset the page shows.
    form = DatasetEditForm(request.POST, instance=Dataset.objects.get(pk=dataset.pk))
    if not form.is_valid():
        context = dataset_context(request, dataset, edit_form=form, edit_open=True)
        return render(request, "editor/dataset.html", context, status=400)
    membership.update_dataset(dataset, author=request.user, **form.cleaned_data)
    messages.success(request, "Dataset saved.")
    return redirect("dataset", slug=dataset.slug)


@require_POST
def dataset_delete(request, slug):
    """Delete the dataset for good (curators), once its slug is typed to confirm."""
    dataset = visible_dataset(request.user, slug)
    if not dataset.user_can_curate:
        raise PermissionDenied("Only a curator may delete this dataset.")
    if request.POST.get("confirm", "").strip() != dataset.slug:
        refusal = f"Type {dataset.slug} exactly to delete the dataset."
        context = dataset_context(request, dataset, edit_open=True, delete_refusal=refusal)
        return render(request, "editor/dataset.html", context, status=400)
    deleted = membership.delete_dataset(dataset, author=request.user)
    messages.success(
        request, f"{dataset.name} is deleted, with its {deleted} transcript{'s' * (deleted != 1)}."
    )
    return redirect("dashboard")


# --- members: each answers the members section (htmx) or goes back to the dataset page ----


def _members_response(request, dataset: Dataset, *, refusal=None, member_form=None, notice=""):
    if not request.htmx:
        if refusal is not None:
            messages.error(request, refusal.message)
        elif notice:
            messages.success(request, notice)
        return redirect(reverse("dataset", args=[dataset.slug]) + "#members")
    context = {
        **_members_context(dataset, member_form),
        "member_notice": notice,
        "member_refusal": refusal,
    }
    status = refusal.status if refusal is not None else 200
    return render(request, "editor/dataset.html#members", context, status=status)


def _change_members(request, slug, change, refused_form=None, notice=""):
    """Run ``change(dataset)``; a non-curator gets 403, a refusal is shown in the section,
    and ``notice`` after a change."""
    dataset = visible_dataset(request.user, slug)
    try:
        change(dataset)
    except NotAllowed as refused:
        raise PermissionDenied(refused.message) from None
    except DomainError as refused:
        return _members_response(request, dataset, refusal=refused, member_form=refused_form)
    # The user may have changed their own role (or left): read it again.
    still_visible = Dataset.objects.for_user(request.user).with_roles(request.user)
    dataset = still_visible.filter(pk=dataset.pk).first()
    if dataset is None:
        return _left_dataset(request)
    return _members_response(request, dataset, notice=notice)


def _left_dataset(request):
    """After removing oneself: to the dashboard, the dataset is no longer one's own."""
    if request.htmx:
        return HttpResponseClientRedirect(reverse("dashboard"))
    return redirect("dashboard")


@require_http_methods(["GET", "POST"])
def member_add(request, slug):
    """POST invites a member (they join when they accept); GET (the URL typed or bookmarked)
    shows the members where they are managed, on the dataset page."""
    if request.method == "GET":
        return redirect(reverse("dataset", args=[slug]) + "#members")
    username = request.POST.get("username", "").strip()
    role = request.POST.get("role", Role.VIEWER)
    return _change_members(
        request,
        slug,
        lambda dataset: membership.invite(
            dataset, author=request.user, username=username, role=role
        ),
        # On a refusal the form keeps what was typed; after an invitation it is empty again.
        refused_form=MemberAddForm(request.POST),
        notice=f"{username} is invited. If that user exists, they join when they accept it "
        "on their dashboard.",
    )


@require_POST
def invitation_withdraw(request, slug, username):
    return _change_members(
        request,
        slug,
        lambda dataset: membership.withdraw_invitation(
            dataset, author=request.user, username=username
        ),
    )


@require_POST
def invitation_answer(request, pk, answer):
    """The invited user accepts (to the dataset's page) or declines (back to the dashboard)."""
    try:
        if answer == "accept":
            joined = membership.accept_invitation(request.user, pk)
        else:
            membership.decline_invitation(request.user, pk)
    except DomainError as refused:
        raise Http404(refused.message) from None
    if answer == "accept":
        messages.success(request, f"You are now a member of {joined.dataset.name}.")
        return redirect("dataset", slug=joined.dataset.slug)
    messages.info(request, "Invitation declined.")
    return redirect("dashboard")


@require_POST
def member_role(request, slug, username):
    role = request.POST.get("role", "")
    return _change_members(
        request,
        slug,
        lambda dataset: membership.change_role(
            dataset, author=request.user, username=username, role=role
        ),
    )


@require_POST
def member_remove(request, slug, username):
    return _change_members(
        request,
        slug,
        lambda dataset: membership.remove_member(dataset, author=request.user, username=username),
    )


def _default_export_audience(dataset: Dataset) -> str:
    """Viewers may export only what the end user sees: offer that first."""
    return "" if FULL_CONTENT in dataset.user_audiences else END_USER_AUDIENCE


@require_POST
def dataset_import(request, slug):
    dataset = visible_dataset(request.user, slug)
    if not dataset.user_can_edit:
        raise PermissionDenied("You may not import into this dataset.")
    form = ImportForm(request.POST, request.FILES)
    if not form.is_valid():
        context = dataset_context(request, dataset, import_form=form)
        return render(request, "editor/dataset.html", context, status=400)
    upload = form.cleaned_data["file"]
    try:
        task = start_import_task(
            dataset=dataset,
            author=request.user,
            upload=upload,
            name=upload.name,
            spec=form.cleaned_data["spec"] or None,
            on_conflict=form.cleaned_data["on_conflict"],
            partial=form.cleaned_data["partial"],
            shape=form.cleaned_data["shape"] or None,
        )
    except FileStoreUnavailable as unavailable:  # the bucket holding uploads is out of reach
        form.add_error("file", unavailable.message)
        context = dataset_context(request, dataset, import_form=form)
        return render(request, "editor/dataset.html", context, status=unavailable.status)
    return redirect("import-task", pk=task.pk)


@require_GET
@vary_on_headers("HX-Request")
def dataset_export(request, slug):
    dataset = visible_dataset(request.user, slug)
    form = ExportForm(request.GET)
    if not form.is_valid():
        context = dataset_context(request, dataset, export_form=form)
        return render(request, "editor/dataset.html", context, status=400)
    options = form.cleaned_data
    try:
        check_export_allowed(
            dataset,
            request.user,
            audience=options["audience"] or None,
            with_annotations=False,
            format=options["format"],
            with_suggestions=options["with_suggestions"],
        )
    except NotAllowed as refused:
        context = dataset_context(request, dataset, export_form=form, export_refusal=refused)
        return render(request, "editor/dataset.html", context, status=403)
    try:
        lines = export_dataset(
            dataset,
            spec=options["spec"] or None,
            format=options["format"],
            statuses=options["status"],
            audience=options["audience"] or None,
            preference_shape=options["preference_shape"] or "conversational",
            sources=options["sources"] or None,
            convention=options["convention"] or None,
            mask=options["mask"] or None,
            over_context=options["over_context"] or None,
            with_suggestions=options["with_suggestions"],
        )
    except InvalidContent as refused:  # options that do not go together (hh with a spec…)
        form.add_error(None, refused.message)
        if request.htmx and request.GET.get("preview"):
            context = {"dataset": dataset, "export_preview": {"refused": refused.message}}
            return render(request, "editor/dataset.html#export-preview", context, status=400)
        context = dataset_context(request, dataset, export_form=form)
        return render(request, "editor/dataset.html", context, status=400)
    if request.GET.get("preview"):
        # What the chosen spec cannot carry, said before the download (htmx: as the user
        # picks the options; without JavaScript: the page again, the form as it was filled).
        preview = lines.preview(PREVIEW_LIMIT)
        if request.htmx:
            context = {"dataset": dataset, "export_preview": preview, "export_options": options}
            return render(request, "editor/dataset.html#export-preview", context)
        # The export's spec and statuses are in this address too: not the table's filters.
        context = dataset_context(
            _without_query(request),
            dataset,
            export_form=form,
            export_preview=preview,
            export_options=options,
        )
        return render(request, "editor/dataset.html", context)
    name = f"{dataset.slug}-{options['spec'] or options['format']}.jsonl"
    response = StreamingHttpResponse(lines, content_type="application/x-ndjson; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response


@require_GET
@vary_on_headers("HX-Request")
def import_task_detail(request, pk):
    task = visible_import_task(request.user, pk)
    action = request.GET.get("action", "")
    shown = stored_items(task.report, action) if task.is_finished else []
    action = action if action in ACTIONS else ""
    context = {
        "task": task,
        "progress": progress_of(task),
        "no_worker": task.status == TaskStatus.QUEUED and background.no_worker_seen(),
        # 10,000 items are a 3 MB table: a page of them at a time, by what became of them.
        "page": Paginator(shown, REPORT_PAGE_SIZE).get_page(request.GET.get("page")),
        "action": action,
        "page_query": f"action={action}&" if action else "",
    }
    template = "editor/import_task.html"
    if request.htmx:
        template += "#import-progress"
    return render(request, template, context)


def _history_context(request, transcript: Transcript) -> dict:
    """Revisions newest first, and the diff between the two chosen (default: the last change)."""
    revisions = list(list_revisions(transcript))
    by_number = {r.number: r for r in revisions}
    newest = revisions[0].number
    to_number = int_param(request.GET.get("to"), newest)
    from_number = int_param(request.GET.get("from"), max(to_number - 1, 1))
    chosen = (
        {r.number: r for r in transcript.revisions.filter(number__in=(from_number, to_number))}
        if from_number in by_number and to_number in by_number
        else {}
    )
    old, new = chosen.get(from_number), chosen.get(to_number)
    return {
        "transcript": transcript,
        "revisions": revisions,
        "from_number": from_number,
        "to_number": to_number,
        "diff": diff_revisions(old, new) if old and new else None,
        "can_restore": transcript.dataset.can_edit(request.user),
    }


def _history_transcript(request, pk) -> Transcript:
    transcript = transcript_for(request, pk)
    # Old states show hidden content and source: the rendering a viewer may not have.
    require_audience(transcript.dataset, request.user, FULL_CONTENT)
    return transcript


@require_GET
def transcript_history(request, pk):
    try:
        transcript = _history_transcript(request, pk)
    except NotAllowed as refused:
        raise PermissionDenied(refused.message) from None
    return render(request, "editor/history.html", _history_context(request, transcript))


@require_http_methods(["GET", "POST"])
def revision_restore(request, pk, number):
    """GET asks for confirmation (what would change); POST restores."""
    try:
        transcript = _history_transcript(request, pk)
    except NotAllowed as refused:
        raise PermissionDenied(refused.message) from None
    revision = get_object_or_404(transcript.revisions, number=number)
    if request.method == "GET":
        current = transcript.revisions.filter(number=transcript.version).first()
        context = {
            "transcript": transcript,
            "revision": revision,
            "diff": diff_revisions(current, revision) if current else None,
            "can_restore": transcript.dataset.can_edit(request.user),
        }
        return render(request, "editor/restore_confirm.html", context)
    try:
        restored = restore_revision(
            revision,
            expected_version=int_param(request.POST.get("expected_version"), 0),
            author=request.user,
        )
    except ConflictError as conflict:
        context = _history_context(request, transcript)
        context["conflict"] = conflict
        return render(request, "editor/history.html", context, status=conflict.status)
    except NotAllowed as refused:
        raise PermissionDenied(refused.message) from None
    except DomainError as refused:  # e.g. the transcript was deleted meanwhile
        messages.error(request, refused.message)
        return redirect("transcript-history", pk=transcript.pk)
    messages.success(request, f"Revision {number} restored as version {restored.version}.")
    return redirect("transcript-history", pk=transcript.pk)
