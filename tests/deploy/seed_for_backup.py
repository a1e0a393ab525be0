"""Data for the backup-and-restore test: run with ``manage.py shell < this file``.

A dataset with members, transcripts edited several times (revisions), a label schema with
answers, a queue with a claim, an API token.
"""

from django.contrib.auth import get_user_model

from editor import queues
from editor.labels import create_label_schema
from editor.labels.annotations import create_annotation
from editor.models import ApiToken, Dataset, Membership, Role
from editor.storage.create import create_transcript
from editor.storage.save import save_transcript

User = get_user_model()
curator = User.objects.create_user("curator", password="a-long-backup-password")
annotator = User.objects.create_user("annotator")
dataset = Dataset.objects.create(name="Backed up", slug="backed-up")
Membership.objects.create(user=curator, dataset=dataset, role=Role.CURATOR)
Membership.objects.create(user=annotator, dataset=dataset, role=Role.ANNOTATOR)
ApiToken.issue(curator)
transcripts = []
for n in range(12):
    text = f"<|start|>user<|message|>Question {n} é✓<|end|>\n<|start|>assistant<|channel|>final<|message|>Answer {n}<|end|>"
    transcript = create_transcript(
        dataset, author=curator, text=text, spec="openchatml-2.2", title=f"T{n}", metadata={"n": n}
    )
    for edit in range(n % 4):
        transcript = save_transcript(
            transcript,
            expected_version=transcript.version,
            author=curator,
            text=text.replace(f"Answer {n}", f"Answer {n}, edit {edit}"),
            note=f"edit {edit}",
        )
    transcripts.append(transcript)
questions = [
    {
        "key": "helpful",
        "kind": "choice",
        "prompt": "Helpful?",
        "options": [{"value": "yes", "label": "Yes"}, {"value": "no", "label": "No"}],
    }
]
schema = create_label_schema(dataset, author=curator, name="Quality", questions=questions)
for transcript in transcripts[:5]:
    create_annotation(
        transcript, annotator=annotator, schema=schema, question="helpful", value="no"
    )
queue = queues.create_queue(dataset, transcripts[5:], name="Review", author=curator)
queues.claim_next(queue, annotator)
