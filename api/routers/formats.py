"""The spec core over HTTP, on posted text, nothing stored: ``/formats/specs``,
``/formats/detect`` and ``/formats/parse`` (``router``), and the CLI's verbs ``/validate``,
``/convert`` and ``/render`` (``verbs``)."""

from ninja import Query, Router, Schema, Status

from editor import formats
from editor.formats.convert import convert as convert_transcript
from editor.formats.pages import render_text_page
from editor.formats.validate import validate_parsed
from editor.presentation.render_pages import RENDER_PAGE_MAX
from editor.storage.content import check_message_count, check_size

from ..errors import errors
from ..pagination import next_page_url
from ..schemas import (
    ConvertIn,
    ConvertOut,
    RenderIn,
    RenderPageOut,
    RenderPageQuery,
    ValidateIn,
    ValidateOut,
)

router = Router(tags=["formats"])
verbs = Router(tags=["formats"])

# The largest request body these routes read: the core is linear, so this bounds their time.
# A posted text is also one transcript: OCM_MAX_TRANSCRIPT_BYTES / OCM_MAX_TRANSCRIPT_MESSAGES
# apply to it as to a stored one (``parsed``: 422 ``transcript-too-large``).
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
    transcript, diagnostics = parsed(payload.text, payload.spec)
    return {**transcript.to_dict(), "diagnostics": [d.to_dict() for d in diagnostics]}


def parsed(text: str, spec: str | None) -> tuple[formats.Transcript, list]:
    """``formats.parse`` of a posted text within the limits of one transcript: more than
    ``OCM_MAX_TRANSCRIPT_BYTES`` is refused before the parse, more than
    ``OCM_MAX_TRANSCRIPT_MESSAGES`` messages after it (``TranscriptTooLarge``: 422
    ``transcript-too-large``, as creating or saving such a transcript is)."""
    check_size(text)
    transcript, diagnostics = formats.parse(text, spec=spec)
    check_message_count(len(transcript.messages))
    return transcript, diagnostics


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
    description="Bad input is still a 200: its problems are the diagnostics. A text of more "
    "than `OCM_MAX_TRANSCRIPT_BYTES` or `OCM_MAX_TRANSCRIPT_MESSAGES` messages is a 422 "
    "`transcript-too-large`.",
)
def validate(request, payload: ValidateIn):
    if too_large(request):
        return body_too_large()
    transcript, diagnostics = validate_parsed(payload.text, parsed(payload.text, payload.spec))
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
    "diagnostics; one of more than `OCM_MAX_TRANSCRIPT_BYTES` or "
    "`OCM_MAX_TRANSCRIPT_MESSAGES` messages a 422 `transcript-too-large`.",
)
def convert(request, payload: ConvertIn):
    if too_large(request):
        return body_too_large()
    transcript, diagnostics = parsed(payload.text, payload.source)
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
    response={200: RenderPageOut, **errors(413, 422, 429)},
    exclude_none=True,  # source and spans exist only in the debug rendering
    summary="A text as an audience sees it, a page of items at a time (ocm render)",
    description="The text is the caller's own, so every audience is open to any user. "
    "Audiences and answer as `GET /transcripts/{id}/render` (`training`: `parts` / `spans` "
    "are offsets into `text`; no `trained_tokens`).\n\n"
    f"Paged as that route: `offset` and `limit` (1 to {RENDER_PAGE_MAX:,}, default "
    f"{RENDER_PAGE_MAX:,}) in the query, over the items; the answer says `total`, `offset`, "
    "`limit` and `next` (the URL to post the same body to for the next page, null on the "
    "last page). `debug`: the page's part of the text (`source_offset` where it begins). "
    "A text of more than `OCM_MAX_TRANSCRIPT_BYTES` or `OCM_MAX_TRANSCRIPT_MESSAGES` "
    "messages is a 422 `transcript-too-large`, as it is for `/validate` and `/convert`.",
)
def render(request, payload: RenderIn, page: Query[RenderPageQuery]):
    if too_large(request):
        return body_too_large()
    transcript, _ = parsed(payload.text, payload.spec)
    rendered = render_text_page(
        transcript,
        payload.text,
        payload.audience,
        offset=page.offset,
        limit=page.limit,
        convention=payload.convention,
    )
    rendered["next"] = next_page_url(request, rendered)
    return rendered
