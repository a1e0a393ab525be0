"""Datasets and their members without the admin: create and edit a dataset, add members,
change their roles, remove them. The HTML views and the API call these functions.

Any logged-in user may create a dataset and becomes its curator; only curators (and
superusers, who act as curators everywhere) may edit it or change its members. Curators
invite people by username; an invited user becomes a member only by accepting
(``invite``, ``accept_invitation``); ``add_member`` (the admin, the demo data) adds directly. A dataset
always keeps at least one curator: removing or demoting the last one is refused
(``LastCurator``). Every membership change is recorded as a ``MembershipChange``, every
creation or edit of a dataset as a ``DatasetEdit`` (who, when, what changed).

Refusals are ``DomainError``s (code, message, HTTP status), as in ``editor.storage``.
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from editor import filestore
from editor.db.storable import check_storable_text
from editor.errors import (
    AlreadyMember,
    InvalidDataset,
    InvalidRole,
    InvalidUsername,
    LastCurator,
    NoSuchInvitation,
    NotAllowed,
    NotAMember,
    SlugTaken,
    UnknownUser,
)
from editor.models import (
    Dataset,
    DatasetEdit,
    ExportTask,
    ImportTask,
    Invitation,
    Judge,
    Membership,
    MembershipAction,
    MembershipChange,
    Role,
    TaskStatus,
    Transcript,
)
from editor.storage.purge import purge_transcripts

# No username has one, and PostgreSQL refuses it in a query.
NUL = "\x00"


# --- datasets -------------------------------------------------------------------------------


def create_dataset(
    *, author, name: str, slug: str, description: str = "", default_spec: str | None = None
) -> Dataset:
    """A new dataset with ``author`` as its curator."""
    if not author.is_authenticated:
        raise NotAllowed("Log in to create a dataset.")
    dataset = Dataset(name=name, slug=slug, description=description)
    if default_spec:
        dataset.default_spec = default_spec
    _check(dataset)
    try:
        with transaction.atomic():
            dataset.save()
            DatasetEdit.objects.create(dataset=dataset, actor=author, created=True)
            _add(dataset, author=author, user=author, role=Role.CURATOR)
    except IntegrityError:  # created by someone else since _check looked
        raise _slug_taken(slug) from None
    return dataset


def update_dataset(
    dataset: Dataset,
    *,
    author,
    name: str | None = None,
    description: str | None = None,
    default_spec: str | None = None,
) -> Dataset:
    """Change a dataset's name, description or default spec (curators). The slug stays: it is
    in every link to the dataset."""
    _require_curator(dataset, author, "Only a curator may edit this dataset.")
    changes = {}
    for field, value in (
        ("name", name),
        ("description", description),
        ("default_spec", default_spec),
    ):
        if value is not None and value != getattr(dataset, field):
            changes[field] = [getattr(dataset, field), value]
            setattr(dataset, field, value)
    _check(dataset)
    if changes:
        with transaction.atomic():
            dataset.save(update_fields=[*changes, "updated_at"])
            DatasetEdit.objects.create(dataset=dataset, actor=author, changes=changes)
    return dataset


def delete_dataset(dataset: Dataset, *, author) -> int:
    """Delete ``dataset`` for good, with everything in it (curators): its transcripts in short
    batches (``storage.purge``), then the rest; the number of transcripts deleted.

    Its members go first, in their own transaction: from then on nobody but a superuser sees
    the dataset, so nobody works on what is being deleted; a deletion cut short (a killed
    process) is finished by deleting it again (superusers)."""
    _require_curator(dataset, author, "Only a curator may delete this dataset.")
    dataset.memberships.all().delete()
    deleted = purge_transcripts(Transcript.all_objects.filter(dataset=dataset))
    # A judge protects its connection from being deleted alone; with the dataset both go.
    Judge.objects.filter(connection__dataset=dataset).delete()
    # Its tasks go with it, and then their files, from the folder or bucket they are in.
    uploads = ImportTask.objects.filter(
        dataset=dataset, status__in=(TaskStatus.QUEUED, TaskStatus.RUNNING)
    ).exclude(upload_path="")  # a finished import removed its upload already
    exports = ExportTask.objects.filter(dataset=dataset).exclude(file_path="")
    upload_names = list(uploads.values_list("upload_path", flat=True))
    export_names = list(exports.values_list("file_path", flat=True))
    dataset.delete()
    for name in upload_names:
        filestore.remove_upload(name)
    for name in export_names:
        filestore.remove_export(name)
    return deleted


def edit_log(dataset: Dataset):
    """The edits of ``dataset`` (its creation included), newest first, with who made them."""
    return dataset.edits.select_related("actor")


def _check(dataset: Dataset) -> None:
    check_storable_text(dataset.name, "The name")
    check_storable_text(dataset.description, "The description")
    try:
        dataset.full_clean()
    except ValidationError as invalid:
        errors = invalid.message_dict
        if any(error.code == "unique" for error in invalid.error_dict.get("slug", [])):
            raise _slug_taken(dataset.slug) from None
        message = "; ".join(f"{field}: {' '.join(texts)}" for field, texts in errors.items())
        raise InvalidDataset(message, details=errors) from None


def _slug_taken(slug: str) -> SlugTaken:
    return SlugTaken(f"A dataset with the slug {slug!r} exists already; choose another.")


# --- members --------------------------------------------------------------------------------


def members(dataset: Dataset):
    """The memberships of ``dataset`` with their users, curators first, then by username."""
    order = {role: i for i, role in enumerate(Role.values)}
    rows = dataset.memberships.select_related("user").order_by("user__username")
    return sorted(rows, key=lambda m: order[m.role])


def change_log(dataset: Dataset):
    """The membership changes of ``dataset``, newest first, with who made them."""
    return dataset.membership_log.select_related("actor")


def add_member(dataset: Dataset, *, author, username: str, role: str = Role.VIEWER) -> Membership:
    _require_curator(dataset, author, "Only a curator may add members.")
    users = get_user_model().objects.filter(username=username, is_active=True)
    user = None if NUL in username else users.first()
    if user is None:
        raise UnknownUser(f"There is no active user {username!r}.")
    try:
        with transaction.atomic():
            return _add(dataset, author=author, user=user, role=_role(role))
    except IntegrityError:
        raise AlreadyMember(f"{username} is already a member; change their role instead.") from None


# --- invitations ----------------------------------------------------------------------------
# A curator invites a username; the user of that name accepts (and becomes a member) or
# declines, on their dashboard. The curator's answer is the same whether the user exists or
# not: nobody learns usernames by inviting them, and nobody joins a dataset unasked.


def invite(dataset: Dataset, *, author, username: str, role: str = Role.VIEWER) -> Invitation:
    """Invite ``username`` to ``dataset`` in ``role`` (a second invitation changes the role)."""
    _require_curator(dataset, author, "Only a curator may invite members.")
    role = _role(role)
    username = username.strip()
    if not username or len(username) > 150 or NUL in username:
        raise InvalidUsername("A username is 1 to 150 characters.")
    if dataset.memberships.filter(user__username=username).exists():
        raise AlreadyMember(f"{username} is already a member; change their role instead.")
    invitation, _ = Invitation.objects.update_or_create(
        dataset=dataset, username=username, defaults={"role": role, "invited_by": author}
    )
    return invitation


def invitations(dataset: Dataset):
    """The invitations of ``dataset`` not yet answered, newest first (curators see them)."""
    return dataset.invitations.select_related("invited_by")


def withdraw_invitation(dataset: Dataset, *, author, username: str) -> None:
    _require_curator(dataset, author, "Only a curator may withdraw an invitation.")
    if not dataset.invitations.filter(username=username).delete()[0]:
        raise NoSuchInvitation(f"{username} has no invitation to this dataset.")


def invitations_for(user):
    """The invitations waiting for ``user``'s answer, newest first."""
    if not user.is_authenticated:
        return Invitation.objects.none()
    return Invitation.objects.filter(username=user.username).select_related("dataset", "invited_by")


def accept_invitation(user, invitation_id: int) -> Membership:
    """``user`` joins the dataset of their invitation, in the role it names."""
    with transaction.atomic():
        invitation = _invitation_for(user, invitation_id)
        dataset = invitation.dataset
        invitation.delete()
        existing = dataset.memberships.filter(user=user).first()
        if existing is not None:  # made a member otherwise meanwhile (the admin)
            return existing
        return _add(dataset, author=invitation.invited_by or user, user=user, role=invitation.role)


def decline_invitation(user, invitation_id: int) -> None:
    _invitation_for(user, invitation_id).delete()


def _invitation_for(user, invitation_id: int) -> Invitation:
    in_range = 0 < invitation_id < 2**63  # a larger one is no id (and no query can take it)
    rows = invitations_for(user).select_for_update(of=("self",)).filter(pk=invitation_id)
    invitation = rows.first() if in_range else None
    if invitation is None:
        raise NoSuchInvitation("No such invitation for you.")
    return invitation


def change_role(dataset: Dataset, *, author, username: str, role: str) -> Membership:
    _require_curator(dataset, author, "Only a curator may change roles.")
    role = _role(role)
    with transaction.atomic():
        membership = _membership(dataset, username)
        if membership.role == role:
            return membership
        if role != Role.CURATOR:
            _keep_a_curator(dataset, membership, "demote")
        old_role = membership.role
        membership.role = role
        membership.save(update_fields=["role"])
        _record(dataset, author, membership.user, MembershipAction.ROLE_CHANGED, old_role, role)
    return membership


def remove_member(dataset: Dataset, *, author, username: str) -> None:
    _require_curator(dataset, author, "Only a curator may remove members.")
    with transaction.atomic():
        membership = _membership(dataset, username)
        _keep_a_curator(dataset, membership, "remove")
        membership.delete()
        _record(dataset, author, membership.user, MembershipAction.REMOVED, membership.role, "")


def _role(name: str) -> Role:
    if name not in Role.values:
        raise InvalidRole(f"Unknown role {name!r}; expected one of: {', '.join(Role.values)}.")
    return Role(name)


def _add(dataset: Dataset, *, author, user, role: Role) -> Membership:
    membership = Membership.objects.create(dataset=dataset, user=user, role=role)
    _record(dataset, author, user, MembershipAction.ADDED, "", role)
    return membership


def _membership(dataset: Dataset, username: str) -> Membership:
    rows = dataset.memberships.select_for_update().select_related("user")
    membership = None if NUL in username else rows.filter(user__username=username).first()
    if membership is None:
        raise NotAMember(f"{username} is not a member of this dataset.")
    return membership


def _keep_a_curator(dataset: Dataset, membership: Membership, what: str) -> None:
    """Refuse to take the curator role from the dataset's only curator.

    The curator rows are locked first, so two curators demoting each other at once cannot
    both pass the check (on PostgreSQL; SQLite runs one write transaction at a time).
    """
    if membership.role != Role.CURATOR:
        return
    curators = list(
        dataset.memberships.select_for_update().filter(role=Role.CURATOR).values_list("pk")
    )
    if len(curators) <= 1:
        raise LastCurator(
            f"{membership.user.username} is the last curator of this dataset: make someone "
            f"else curator before you {what} them.",
        )


def _record(dataset, author, user, action, old_role, new_role) -> None:
    MembershipChange.objects.create(
        dataset=dataset,
        actor=author if author.is_authenticated else None,
        user=user,
        username=user.username,
        action=action,
        old_role=old_role,
        new_role=new_role,
    )


def _require_curator(dataset: Dataset, author, message: str) -> None:
    if not dataset.can_curate(author):
        raise NotAllowed(message)
