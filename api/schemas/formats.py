"""The stateless format routes: validate, convert, render."""

from ninja import Field, Schema

from api.schemas.common import RenderAudience, SpecId, TrainingConvention


class ValidateIn(Schema):
    text: str
    spec: SpecId | None = Field(None, description="Detected when absent.")


class ValidateOut(Schema):
    spec: str = Field(description='The spec read ("unknown" when none was detected).')
    messages: list[dict]
    diagnostics: list[dict] = Field(description="Syntax, then semantic diagnostics.")
    error_count: int
    warning_count: int


class ConvertIn(Schema):
    text: str
    source: SpecId | None = Field(None, alias="from", description="Detected when absent.")
    to: SpecId


class ConvertOut(Schema):
    spec: str = Field(description="The spec written (`to`).")
    text: str
    losses: list[dict] = Field(description="What `to` cannot say: {message_index, field, detail}.")
    diagnostics: list[dict] = Field(description="The input's parse diagnostics.")


class RenderIn(Schema):
    text: str
    spec: SpecId | None = Field(None, description="Detected when absent.")
    audience: RenderAudience = "end_user"
    convention: TrainingConvention | None = Field(
        None, description="audience=training: all_assistant, last_assistant_turn or gpt_oss."
    )
