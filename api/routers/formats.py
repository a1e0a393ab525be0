"""The spec core over HTTP: the spec ids, detection and parsing of posted text."""

from ninja import Router, Schema, Status

from editor import formats

from ..errors import errors

router = Router(tags=["formats"])


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
    response={200: DetectOut, **errors(422)},
    summary="Name the spec a text is written in",
)
def detect(request, payload: TextIn):
    return {"spec": formats.detect(payload.text)}


@router.post(
    "/parse",
    response={200: ParseOut, **errors(400, 422)},
    summary="Parse a text into the canonical model, with its diagnostics",
)
def parse(request, payload: TextIn):
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
