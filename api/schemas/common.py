"""Types every area's schemas share: bounded integers and the names the API accepts."""

from typing import Annotated, Literal

from ninja import Field

from editor import formats
from editor.exporting import Format
from editor.formats.render import AUDIENCES
from editor.formats.training import CONVENTIONS
from editor.importing import OnConflict
from editor.models import (
    AnchorState,
    AnnotationState,
    AssignmentState,
    Contains,
    Role,
    Status,
    sort_choices,
)
from editor.workflow import TRANSITIONS

# Numbers sent to the API end up in integer columns (PostgreSQL's are 32 bits) or in lookups
# on them: a larger one can only be a wrong one, and would reach the database driver as an
# OverflowError or a DataError (a 500). Refused by the schema instead (found by fuzzing).
INT32_MAX = 2**31 - 1


Int32 = Annotated[int, Field(ge=-INT32_MAX - 1, le=INT32_MAX)]


SpecId = Literal[tuple(formats.SPEC_IDS)]


StatusName = Literal[tuple(Status.values)]


Audience = Literal[AUDIENCES]


# A transcript's renderings: the audiences, and what a training run computes loss on.
RenderAudience = Literal[(*AUDIENCES, "training")]


TrainingConvention = Literal[CONVENTIONS]


ExportFormat = Literal[tuple(f.value for f in Format)]


OnConflictChoice = Literal[tuple(c.value for c in OnConflict)]


RoleName = Literal[tuple(Role.values)]


TransitionName = Literal[tuple(TRANSITIONS)]


AssignmentStateName = Literal[tuple(AssignmentState.values)]


AnnotationStateName = Literal[tuple(AnnotationState.values)]


AnchorStateName = Literal[tuple(AnchorState.values)]


ContainsName = Literal[tuple(Contains.values)]


TranscriptSort = Literal[tuple(sort_choices())]
