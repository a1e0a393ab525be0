"""The app's models, one module per concept, all importable from here (``from editor.models
import Transcript``). App label ``editor``; table names unchanged."""

from editor.models.datasets import (
    ALL_AUDIENCES,
    DATASET_SLUG_PATTERN,
    EDITING_ROLES,
    END_USER_AUDIENCE,
    REVIEWING_ROLES,
    Dataset,
    DatasetEdit,
    DatasetQuerySet,
    Invitation,
    Membership,
    MembershipAction,
    MembershipChange,
    Role,
    audiences_of,
    validate_dataset_slug,
)
from editor.models.fields import (
    SHORT_FIELD_LENGTH,
    SPEC_CHOICES,
)
from editor.models.labels import (
    AnchorState,
    Annotation,
    AnnotationQuerySet,
    LabelSchema,
    LabelSchemaQuerySet,
    LabelSchemaVersion,
)
from editor.models.messages import (
    Message,
    MessageQuerySet,
)
from editor.models.pairs import (
    Alternative,
    AlternativeSource,
    PairSource,
    PreferencePair,
    PreferencePairQuerySet,
)
from editor.models.preferences import UserPreference
from editor.models.queues import (
    AssignmentState,
    QueueAssignment,
    QueueItem,
    ReviewQueue,
)
from editor.models.revisions import (
    HistoryBroken,
    Revision,
    RevisionKind,
    RevisionQuerySet,
)
from editor.models.states import (
    AnnotationState,
    Status,
)
from editor.models.tasks import (
    BulkTask,
    ExportTask,
    ImportTask,
    TaskStatus,
    TaskWorker,
    TrackedTask,
)
from editor.models.tokenizers import (
    DatasetTokenizer,
    TokenizerKind,
)
from editor.models.tokens import (
    ApiToken,
    ApiTokenQuerySet,
)
from editor.models.transcripts import (
    CACHED_MESSAGES_MAX,
    CACHED_MESSAGES_SECONDS,
    CONTAINS_COLUMNS,
    TRANSCRIPT_SORTS,
    AllTranscriptsManager,
    Contains,
    LiveTranscriptManager,
    Transcript,
    TranscriptFilter,
    TranscriptQuerySet,
    contains_values,
    sort_choices,
)

__all__ = [
    "ALL_AUDIENCES",
    "CACHED_MESSAGES_MAX",
    "CACHED_MESSAGES_SECONDS",
    "CONTAINS_COLUMNS",
    "DATASET_SLUG_PATTERN",
    "EDITING_ROLES",
    "END_USER_AUDIENCE",
    "REVIEWING_ROLES",
    "SHORT_FIELD_LENGTH",
    "SPEC_CHOICES",
    "TRANSCRIPT_SORTS",
    "AllTranscriptsManager",
    "Alternative",
    "AlternativeSource",
    "AnchorState",
    "Annotation",
    "AnnotationQuerySet",
    "AnnotationState",
    "ApiToken",
    "ApiTokenQuerySet",
    "AssignmentState",
    "BulkTask",
    "Contains",
    "Dataset",
    "DatasetEdit",
    "DatasetQuerySet",
    "DatasetTokenizer",
    "ExportTask",
    "HistoryBroken",
    "ImportTask",
    "Invitation",
    "LabelSchema",
    "LabelSchemaQuerySet",
    "LabelSchemaVersion",
    "LiveTranscriptManager",
    "Membership",
    "MembershipAction",
    "MembershipChange",
    "Message",
    "MessageQuerySet",
    "PairSource",
    "PreferencePair",
    "PreferencePairQuerySet",
    "QueueAssignment",
    "QueueItem",
    "ReviewQueue",
    "Revision",
    "RevisionKind",
    "RevisionQuerySet",
    "Role",
    "Status",
    "TaskStatus",
    "TaskWorker",
    "TokenizerKind",
    "TrackedTask",
    "Transcript",
    "TranscriptFilter",
    "TranscriptQuerySet",
    "UserPreference",
    "audiences_of",
    "contains_values",
    "sort_choices",
    "validate_dataset_slug",
]
