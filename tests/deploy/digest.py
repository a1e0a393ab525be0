"""Print a digest of everything the backup must keep: run with ``manage.py shell < this file``.

One JSON object: per table, its rows as tuples of the columns that matter (hashes for long
text), so two databases can be compared exactly.
"""

import hashlib
import json

from django.contrib.auth import get_user_model

from editor.models import (
    Annotation,
    ApiToken,
    Dataset,
    LabelSchema,
    LabelSchemaVersion,
    Membership,
    Message,
    QueueAssignment,
    QueueItem,
    ReviewQueue,
    Revision,
    Transcript,
)


def sha(value) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()


digest = {
    "users": sorted(get_user_model().objects.values_list("username", "password", "is_active")),
    "datasets": sorted(Dataset.objects.values_list("slug", "name", "description")),
    "memberships": sorted(
        Membership.objects.values_list("dataset__slug", "user__username", "role")
    ),
    "tokens": sorted(ApiToken.objects.values_list("prefix", "key_hash")),
    "transcripts": sorted(
        (t.pk, t.version, t.title, t.status, sha(t.source_text), sha(t.metadata))
        for t in Transcript.all_objects.all()
    ),
    "messages": sha(list(Message.objects.order_by("transcript_id", "index").values_list())),
    "revisions": sorted(
        (r.transcript_id, r.number, r.kind, r.note, sha(r.snapshot)) for r in Revision.objects.all()
    ),
    "label_schemas": sorted(LabelSchema.objects.values_list("pk", "name")),
    "label_versions": sha(list(LabelSchemaVersion.objects.order_by("pk").values_list())),
    "annotations": sha(list(Annotation.objects.order_by("pk").values_list())),
    "queues": sorted(ReviewQueue.objects.values_list("pk", "name")),
    "queue_items": sha(list(QueueItem.objects.order_by("pk").values_list())),
    "assignments": sha(list(QueueAssignment.objects.order_by("pk").values_list())),
}
print(json.dumps(digest, default=str))
