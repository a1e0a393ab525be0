"""A dataset's tokenizer (``editor.tokenizing``, docs/tokens.md): read by any member, set
or removed by its curators. A change recounts the dataset's transcripts in the background.

``PUT`` names a tiktoken encoding (JSON); ``POST`` uploads a Hugging Face tokenizer.json
(multipart ``file``, optional ``context_length``).
"""

from ninja import File, Form, Router, Status
from ninja.files import UploadedFile

from editor import tokenizing
from editor.errors import InvalidTokenizer, TokenizerNotSet
from editor.models import DatasetTokenizer
from editor.visibility import visible_dataset

from ..errors import errors
from ..schemas.tokenizers import TokenizerIn, TokenizerOut, TokenizerUploadIn

router = Router(tags=["tokens"])


@router.get(
    "/datasets/{slug}/tokenizer",
    response={200: TokenizerOut, **errors(404, 422)},
    summary="The dataset's tokenizer and context length (404 not-found when it names none)",
)
def get_tokenizer(request, slug: str):
    dataset = visible_dataset(request.auth, slug)
    setting = DatasetTokenizer.objects.filter(dataset=dataset).first()
    if setting is None:
        raise TokenizerNotSet("The dataset names no tokenizer.")
    return TokenizerOut.of(setting)


@router.put(
    "/datasets/{slug}/tokenizer",
    response={200: TokenizerOut, **errors(403, 404, 422)},
    summary="Count with a tiktoken encoding (curators); recounts the dataset if it changed",
    description="An encoding whose rank file is not on the server is accepted and answered "
    "with `available: false` and the `problem` (how to provide the file); counts stay empty "
    "until it is there.",
)
def put_tokenizer(request, slug: str, payload: TokenizerIn):
    dataset = visible_dataset(request.auth, slug)
    setting = tokenizing.set_encoding(
        dataset, request.auth, encoding=payload.encoding, context_length=payload.context_length
    )
    return TokenizerOut.of(setting)


@router.post(
    "/datasets/{slug}/tokenizer",
    response={200: TokenizerOut, **errors(403, 404, 422)},
    summary="Count with an uploaded Hugging Face tokenizer.json (curators; at most 50 MB)",
    description="Multipart: `file` (the tokenizer.json) and optional `context_length`. A file "
    "the `tokenizers` library cannot read is a 422 invalid-tokenizer.",
)
def upload_tokenizer(
    request, slug: str, file: File[UploadedFile], options: Form[TokenizerUploadIn]
):
    dataset = visible_dataset(request.auth, slug)
    limit = tokenizing.MAX_TOKENIZER_JSON_BYTES
    if file.size is not None and file.size > limit:
        raise InvalidTokenizer(
            f"The tokenizer.json is {file.size:,} bytes; at most {limit:,} are accepted.",
            details={"size": file.size, "limit": limit},
        )
    setting = tokenizing.set_tokenizer_json(
        dataset,
        request.auth,
        data=file.read(limit + 1),
        name=file.name or "tokenizer.json",
        context_length=options.context_length,
    )
    return TokenizerOut.of(setting)


@router.delete(
    "/datasets/{slug}/tokenizer",
    response={204: None, **errors(403, 404, 422)},
    summary="Name no tokenizer (curators): the counts are cleared in the background",
)
def delete_tokenizer(request, slug: str):
    tokenizing.clear_tokenizer(visible_dataset(request.auth, slug), request.auth)
    return Status(204, None)
