"""Load the demo dataset: one sample transcript per spec id (editor/demo/manifest.json).

Idempotent: each sample has the external id `demo-<spec>`, and samples already present are
left alone, so `make run` can run any number of times. ``--curator USERNAME`` makes that user
the dataset's curator while it has none (`make run` names its local login), so the demo keeps
the rule every other dataset keeps: at least one curator. Once the dataset has a curator, the
pairwise example is added in their name (alternatives of a turn, a schema with a pairwise
question and a queue asking it; docs/labels.md), each part only when missing.
"""

import json
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from editor import alternatives, membership, queues
from editor.errors import DomainError
from editor.labels import create_label_schema
from editor.models import Dataset, LabelSchema, ReviewQueue, Role, Transcript
from editor.storage.create import create_transcript

DEMO_DIR = Path(__file__).resolve().parents[2] / "demo"


class Command(BaseCommand):
    help = "Load the demo dataset (one sample transcript per spec id); safe to run twice."

    def add_arguments(self, parser):
        parser.add_argument("--curator", help="a user to make curator while the dataset has none")

    def handle(self, *args, curator=None, **options):
        manifest = json.loads((DEMO_DIR / "manifest.json").read_text("utf-8"))
        about = manifest["dataset"]
        created = 0
        with transaction.atomic():
            dataset, _ = Dataset.objects.get_or_create(
                slug=about["slug"],
                defaults={"name": about["name"], "description": about["description"]},
            )
            present = set(
                Transcript.all_objects.filter(dataset=dataset).values_list("external_id", flat=True)
            )
            for item in manifest["transcripts"]:
                external_id = f"demo-{item['spec']}"
                if external_id in present:
                    continue
                text = (DEMO_DIR / item["file"]).read_text("utf-8")
                create_transcript(
                    dataset,
                    author=None,
                    text=text,
                    spec=item["spec"],
                    title=item["title"],
                    external_id=external_id,
                    note="demo data",
                )
                created += 1
            if curator and not dataset.memberships.filter(role=Role.CURATOR).exists():
                _make_curator(dataset, curator)
            _add_pairwise_example(dataset, manifest)
        self.stdout.write(
            f"Demo dataset '{dataset.slug}': {created} transcript(s) added, "
            f"{len(manifest['transcripts']) - created} already present."
        )


def _add_pairwise_example(dataset: Dataset, manifest: dict) -> None:
    """The manifest's alternatives, its pairwise schema and a queue asking it over the
    transcripts that have alternatives, in the name of the dataset's first curator (nothing
    without one: adding needs an editor, a schema and a queue a curator)."""
    first = dataset.memberships.filter(role=Role.CURATOR).select_related("user").first()
    example = manifest.get("pairwise")
    if first is None or example is None:
        return
    curator = first.user
    compared = []
    for item in manifest["transcripts"]:
        if not item.get("alternatives"):
            continue
        transcript = Transcript.objects.get(dataset=dataset, external_id=f"demo-{item['spec']}")
        for alternative in item["alternatives"]:
            alternatives.add_alternative(
                transcript,
                alternative["message_index"],
                alternative["messages"],
                source="hand",
                author=curator,
                note=alternative.get("note", ""),
            )
        compared.append(transcript)
    schema = LabelSchema.objects.filter(dataset=dataset, name=example["schema"]).first()
    if schema is None:
        schema = create_label_schema(
            dataset, author=curator, name=example["schema"], questions=example["questions"]
        )
    if not ReviewQueue.objects.filter(dataset=dataset, name=example["queue"]).exists():
        queues.create_queue(
            dataset, compared, name=example["queue"], author=curator, schemas=[schema]
        )


def _make_curator(dataset: Dataset, username: str) -> None:
    user = get_user_model().objects.filter(username=username).first()
    if user is None:
        raise CommandError(f"There is no user {username!r} to make curator.")
    change = (
        membership.change_role
        if dataset.memberships.filter(user=user).exists()
        else membership.add_member
    )
    try:
        change(dataset, author=user, username=username, role=Role.CURATOR)
    except DomainError as refused:  # a user who is neither superuser nor curator already
        raise CommandError(f"{username} cannot be made curator: {refused}") from None
