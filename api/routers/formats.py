"""The spec core over HTTP, on posted text, nothing stored: ``/formats/specs``,
``/formats/detect`` and ``/formats/parse`` (``router``), and the CLI's verbs ``/validate``,
``/convert`` and ``/render`` (``verbs``)."""

from ninja import Router, Schema, Status

from editor import formats
from editor.formats.convert import convert as convert_transcript
from editor.formats.render import render as render_transcript
from editor.formats.training import TRAINING, render_training
from editor.formats.validate import validate_text

from ..errors import errors
from ..schemas import ConvertIn, ConvertOut, RenderIn, RenderOut, ValidateIn, ValidateOut

router = Router(tags=["formats"])
verbs = Router(tags=["formats"])

# The largest request body these routes read: the core is linear, so this bounds their time.
MAX_BODY_BYTES = 10 * 1024 * 1024


class SpecOut(Schema):
    id: str
    text: bool


class TextIn(Schema):
    text: str
    spec: str | None = None


class DetectOut(Schema):
    spec: str | None


class ParseOut(Schema):
    spec: str
    header: dict
    messages: list[dict]
    attrs: dict = {}
    diagnostics: list[dict]


@router.get("/specs", response={200: list[SpecOut], **errors()}, summary="The supported spec ids")
def list_specs(request):
    return [{"id": spec, "text": spec in formats.TEXT_SPECS} for spec in formats.SPEC_IDS]


@router.post(
    "/detect",
    response={200: DetectOut, **errors(413, 422, 429)},
    summary="Name the spec a text is written in",
)
def detect(request, payload: TextIn):
    if too_large(request):
        return body_too_large()
    return {"spec": formats.detect(payload.text)}


@router.post(
    "/parse",
    response={200: ParseOut, **errors(400, 413, 422, 429)},
    summary="Parse a text into the canonical model, with its diagnostics",
)
def parse(request, payload: TextIn):
    if too_large(request):
        return body_too_large()
    if payload.spec is not None and payload.spec not in formats.SPEC_IDS:
        return Status(
            400,
            {
                "code": "unknown-spec",
                "message": f"Unknown spec id {payload.spec!r}.",
                "details": {"spec_ids": list(formats.SPEC_IDS)},
            },
        )
    transcript, diagnostics = formats.parse(payload.text, spec=payload.spec)
    return {**transcript.to_dict(), "diagnostics": [d.to_dict() for d in diagnostics]}


def too_large(request) -> bool:
    return len(request.body) > MAX_BODY_BYTES


def body_too_large() -> Status:
    return Status(
        413,
        {
            "code": "body-too-large",
            "message": f"The request body is larger than {MAX_BODY_BYTES // 1024 // 1024} MiB.",
            "details": {"limit_bytes": MAX_BODY_BYTES},
        },
    )


@verbs.post(
    "/validate",
    response={200: ValidateOut, **errors(413, 422, 429)},
    summary="Every diagnostic of a text, syntax and semantic (ocm validate)",
    description="Bad input is still a 200: its problems are the diagnostics.",
)
def validate(request, payload: ValidateIn):
    if too_large(request):
        return body_too_large()
    transcript, diagnostics = validate_text(payload.text, payload.spec)
    return {
        "spec": transcript.spec,
        "messages": [m.to_dict() for m in transcript.messages],
        "diagnostics": [d.to_dict() for d in diagnostics],
        "error_count": sum(d.severity == "error" for d in diagnostics),
        "warning_count": sum(d.severity == "warning" for d in diagnostics),
    }


@verbs.post(
    "/convert",
    response={200: ConvertOut, **errors(413, 422, 429)},
    summary="A text written in another spec, with what is lost (ocm convert)",
    description="A text with no readable message is a 422 `invalid-content` carrying its "
    "diagnostics.",
)
def convert(request, payload: ConvertIn):
    if too_large(request):
        return body_too_large()
    transcript, diagnostics = formats.parse(payload.text, spec=payload.source)
    found = [d.to_dict() for d in diagnostics]
    if formats.has_errors(diagnostics) and not transcript.messages:
        message = "The text has no readable message to convert."
        return Status(422, {"code": "invalid-content", "message": message, "details": found})
    text, losses = convert_transcript(transcript, to=payload.to)
    return {
        "spec": payload.to,
        "text": text,
        "losses": [loss.to_dict() for loss in losses],
        "diagnostics": found,
    }


@verbs.post(
    "/render",
    response={200: RenderOut, **errors(413, 422, 429)},
    exclude_none=True,  # source and spans exist only in the debug rendering
    summary="A text as an audience sees it (ocm render)",
    description="The text is the caller's own, so every audience is open to any user.",
)
def render(request, payload: RenderIn):
    if too_large(request):
        return body_too_large()
    transcript, _ = formats.parse(payload.text, spec=payload.spec)
    if payload.audience == TRAINING:
        return render_training(transcript, payload.convention, text=payload.text)
    return render_transcript(transcript, payload.audience, source_text=payload.text).to_dict()
