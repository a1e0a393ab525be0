"""Load the demo dataset: one sample transcript per spec id (editor/demo/manifest.json).

Idempotent: each sample has the external id `demo-<spec>`, and samples already present are
left alone, so `make run` can run any number of times.
"""

import json
from pathlib import Path

from django.core.management.base import BaseCommand
from django.db import transaction

from editor.models import Dataset, Transcript
from editor.storage import create_transcript

DEMO_DIR = Path(__file__).resolve().parents[2] / "demo"


class Command(BaseCommand):
    help = "Load the demo dataset (one sample transcript per spec id); safe to run twice."

    def handle(self, *args, **options):
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
        self.stdout.write(
            f"Demo dataset '{dataset.slug}': {created} transcript(s) added, "
            f"{len(manifest['transcripts']) - created} already present."
        )
