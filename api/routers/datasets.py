"""Datasets: the caller's list, one with the caller's role, creating and editing one, its
members, and the streamed export."""

from django.http import StreamingHttpResponse
from ninja import Query, Router, Status
from ninja.pagination import paginate

from editor import membership
from editor.errors import NotAllowed
from editor.exporting import export_dataset, in_pieces
from editor.exporting.tasks import check_export_allowed
from editor.models import Dataset
from editor.visibility import visible_dataset

from ..errors import errors
from ..pagination import LimitOffset
from ..schemas import (
    DatasetCreateIn,
    DatasetEditOut,
    DatasetOut,
    DatasetUpdateIn,
    InvitationOut,
    MemberChangeOut,
    MemberIn,
    MemberOut,
    RoleIn,
    StreamedExportQuery,
)

router = Router(tags=["datasets"])


@router.get(
    "/datasets",
    response={200: list[DatasetOut], **errors(422)},
    summary="The datasets you are a member of (every one for a superuser)",
)
@paginate(LimitOffset)
def list_datasets(request):
    user = request.auth
    return (
        Dataset.objects.for_user(user)
        .with_roles(user)
        .with_transcript_counts()
        .order_by("name", "pk")
    )


@router.get(
    "/datasets/{slug}",
    response={200: DatasetOut, **errors(404)},
    summary="One dataset, with your role in it",
)
def get_dataset(request, slug: str):
    return visible_dataset(request.auth, slug, with_counts=True)


@router.post(
    "/datasets",
    response={201: DatasetOut, **errors(409, 422)},
    summary="Create a dataset; you become its curator",
)
def create_dataset(request, payload: DatasetCreateIn):
    dataset = membership.create_dataset(author=request.auth, **payload.dict())
    return Status(201, visible_dataset(request.auth, dataset.slug, with_counts=True))


@router.patch(
    "/datasets/{slug}",
    response={200: DatasetOut, **errors(403, 404, 422)},
    summary="Change a dataset's name, description or default spec (curators)",
)
def update_dataset(request, slug: str, payload: DatasetUpdateIn):
    dataset = visible_dataset(request.auth, slug)
    membership.update_dataset(dataset, author=request.auth, **payload.dict())
    return visible_dataset(request.auth, slug, with_counts=True)


@router.delete(
    "/datasets/{slug}",
    response={204: None, **errors(403, 404)},
    summary="Delete a dataset for good, with everything in it (curators)",
    description="Its transcripts, their revisions, labels and queue items, its schemas, "
    "queues, tasks and members. Nothing can bring them back.",
)
def delete_dataset(request, slug: str):
    membership.delete_dataset(visible_dataset(request.auth, slug), author=request.auth)
    return Status(204, None)


@router.get(
    "/datasets/{slug}/members",
    response={200: list[MemberOut], **errors(404)},
    summary="The members of a dataset and their roles, curators first",
)
def list_members(request, slug: str):
    return membership.members(visible_dataset(request.auth, slug))


@router.get(
    "/datasets/{slug}/edits",
    response={200: list[DatasetEditOut], **errors(404, 422)},
    summary="Who created the dataset or changed its name, description or default spec, and when",
)
@paginate(LimitOffset)
def list_dataset_edits(request, slug: str):
    return membership.edit_log(visible_dataset(request.auth, slug))


@router.get(
    "/datasets/{slug}/member-changes",
    response={200: list[MemberChangeOut], **errors(404, 422)},
    summary="Who added, removed or changed the role of whom, and when (newest first)",
)
@paginate(LimitOffset)
def list_member_changes(request, slug: str):
    return membership.change_log(visible_dataset(request.auth, slug))


@router.post(
    "/datasets/{slug}/members",
    response={202: InvitationOut, **errors(403, 404, 409, 422)},
    summary="Invite a user by username (curators): they join when they accept",
    description="The same answer whether a user of that name exists or not (no username is "
    "learnt by inviting it); the invited user accepts with `POST /invitations/{id}/accept`. "
    "Inviting again changes the role; 409 `already-member` for a member.",
)
def add_member(request, slug: str, payload: MemberIn):
    dataset = visible_dataset(request.auth, slug)
    return Status(202, membership.invite(dataset, author=request.auth, **payload.dict()))


@router.get(
    "/datasets/{slug}/invitations",
    response={200: list[InvitationOut], **errors(403, 404, 422)},
    summary="The invitations not yet answered (curators)",
)
@paginate(LimitOffset)
def list_dataset_invitations(request, slug: str):
    dataset = visible_dataset(request.auth, slug)
    if not dataset.can_curate(request.auth):
        raise NotAllowed("Only a curator may see the invitations.")
    return membership.invitations(dataset)


@router.delete(
    "/datasets/{slug}/invitations/{username}",
    response={204: None, **errors(403, 404)},
    summary="Withdraw an invitation (curators)",
)
def withdraw_invitation(request, slug: str, username: str):
    dataset = visible_dataset(request.auth, slug)
    membership.withdraw_invitation(dataset, author=request.auth, username=username)
    return Status(204, None)


@router.get(
    "/invitations",
    response={200: list[InvitationOut], **errors(422)},
    summary="Your invitations waiting for an answer",
)
@paginate(LimitOffset)
def list_my_invitations(request):
    return membership.invitations_for(request.auth)


@router.post(
    "/invitations/{invitation_id}/accept",
    response={200: MemberOut, **errors(404, 422)},
    summary="Accept an invitation: you become a member in the role it names",
)
def accept_invitation(request, invitation_id: int):
    return membership.accept_invitation(request.auth, invitation_id)


@router.post(
    "/invitations/{invitation_id}/decline",
    response={204: None, **errors(404, 422)},
    summary="Decline an invitation",
)
def decline_invitation(request, invitation_id: int):
    membership.decline_invitation(request.auth, invitation_id)
    return Status(204, None)


@router.patch(
    "/datasets/{slug}/members/{username}",
    response={200: MemberOut, **errors(403, 404, 409, 422)},
    summary="Change a member's role (curators); the last curator cannot be demoted (409)",
)
def change_role(request, slug: str, username: str, payload: RoleIn):
    dataset = visible_dataset(request.auth, slug)
    return membership.change_role(
        dataset, author=request.auth, username=username, role=payload.role
    )


@router.delete(
    "/datasets/{slug}/members/{username}",
    response={204: None, **errors(403, 404, 409)},
    summary="Remove a member (curators); the last curator cannot be removed (409)",
)
def remove_member(request, slug: str, username: str):
    dataset = visible_dataset(request.auth, slug)
    membership.remove_member(dataset, author=request.auth, username=username)
    return Status(204, None)


@router.get(
    "/datasets/{slug}/export",
    response=errors(403, 404, 422, 429),
    summary="Stream the dataset as NDJSON, one transcript per line",
    description="Constant memory however big the dataset. `format=jsonl` lines are "
    '`{"id", "title", "spec", "status", "metadata", "text" | "document"}` (re-importable); '
    '`format=messages` lines are `{"messages": [...], "tools"?}` rows. Without '
    "`audience=end_user` the export holds everything, which a viewer may not see (403 "
    "`E-PERM-VISIBILITY`).",
    openapi_extra={
        "responses": {
            200: {
                "description": "One JSON object per line.",
                "content": {"application/x-ndjson": {"schema": {"type": "string"}}},
            }
        }
    },
)
def export(request, slug: str, options: Query[StreamedExportQuery]):
    dataset = visible_dataset(request.auth, slug)
    check_export_allowed(
        dataset,
        request.auth,
        audience=options.audience,
        with_annotations=options.with_annotations,
        format=options.format,
        with_suggestions=options.with_suggestions,
    )
    lines = export_dataset(dataset, **options.export_options())
    body = lines.with_summary_line() if options.summary else lines
    response = StreamingHttpResponse(
        in_pieces(body), content_type="application/x-ndjson; charset=utf-8"
    )
    name = f"{dataset.slug}-{options.spec or options.format}.jsonl"
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response
