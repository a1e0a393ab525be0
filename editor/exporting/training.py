"""Chat rows carrying a training mask (docs/formats.md, "Training masks in exports").

``training_row(canonical, convention=…, mask_style=…)`` is the ``format="messages"`` row
(``{"messages": [...], "tools"?: [...]}``, as ``_chat_row`` writes it) with what a training
run computes loss on, under ``convention`` (``editor.formats.training``), in one of two shapes:

``weight``
    OpenAI's fine-tuning format: every assistant message gets ``"weight": 1`` (trained) or
    ``0`` (masked); other messages carry no weight (they are never trained, and OpenAI
    accepts ``weight`` on assistant messages only).
``assistant_masks``
    a column ``"assistant_masks"``: one 0/1 per message of ``messages``, in order (1:
    trained). It is a message-level mask: a trainer expands it to tokens when it applies
    its chat template (TRL's ``assistant_masks`` are per token of the templated text).
``tokens``
    TRL's pre-tokenized shape: ``input_ids`` (the transcript's own text under the dataset's
    tokenizer) and ``assistant_masks`` with one 0/1 per token
    (``editor.formats.training.token_mask``).

A written message made of several stored ones (an OpenAI assistant message holding analysis
as ``reasoning_content`` and the final answer as ``content``) is trained when any of them is;
when they disagree, a loss says that the mask covers the whole message. Under ``gpt_oss`` the
``reasoning_content`` of an earlier turn (analysis the convention drops) is left out of the
row, as gpt-oss's own chat template leaves it out, and reported as a loss.
"""

from __future__ import annotations

from editor import formats
from editor.errors import InvalidContent
from editor.formats import training
from editor.models import Dataset, DatasetTokenizer

WEIGHT = "weight"
ASSISTANT_MASKS = "assistant_masks"
TOKENS = "tokens"
MASK_STYLES = (WEIGHT, ASSISTANT_MASKS, TOKENS)
INPUT_IDS = "input_ids"
DROP, REPORT = "drop", "report"
OVER_CONTEXT = (DROP, REPORT)
REASONING_KEY = "reasoning_content"  # where a chat row holds an assistant turn's analysis


def check_training_options(convention: str | None, mask_style: str | None) -> None:
    """Bad options are a clear 400 (``invalid-request``), before any row is written."""
    if convention is not None and convention not in training.CONVENTIONS:
        raise InvalidContent(
            f"Unknown training convention {convention!r}; expected one of: "
            f"{', '.join(training.CONVENTIONS)}.",
            code="invalid-request",
        )
    if mask_style is not None and mask_style not in MASK_STYLES:
        raise InvalidContent(
            f"Unknown mask {mask_style!r}; expected one of: {', '.join(MASK_STYLES)}.",
            code="invalid-request",
        )


def training_row(
    canonical: formats.Transcript,
    *,
    convention: str | None = None,
    mask_style: str = WEIGHT,
    chat_row=None,
    tokenizer=None,
):
    """The chat row of ``canonical`` with its mask, and the row's ``ExportedTranscript``
    (losses included). ``convention`` None: the transcript's spec's default (gpt_oss for
    Harmony). ``chat_row``: the function writing the plain row (``_chat_row``)."""
    check_training_options(convention, mask_style)
    masks = training.training_mask(canonical, convention)
    row, exported = chat_row(canonical, None)
    messages = row["messages"]
    groups = _stored_of_row_messages(exported, messages)
    if groups is None or any(
        (message.get("role") == "assistant") != all(masks[i].role == "assistant" for i in group)
        for message, group in zip(messages, groups, strict=True)
    ):
        # Unmatched: every assistant message of the row is trained, and the row says so.
        groups = None
        exported.losses.append(
            {
                "message_index": None,
                "field": "mask",
                "detail": "the row's messages could not be matched with the stored ones: "
                "every assistant message is marked trained",
            }
        )
    flags = []
    for position, message in enumerate(messages):
        if groups is None:
            flags.append(message.get("role") == "assistant")
            continue
        stored = groups[position]
        dropped = [i for i in stored if masks[i].reason == training.EARLIER_ANALYSIS]
        if dropped and REASONING_KEY in message:
            # gpt-oss leaves an earlier turn's reasoning out of the text it trains on.
            del message[REASONING_KEY]
            exported.losses.append(
                {
                    "message_index": dropped[0],
                    "field": REASONING_KEY,
                    "detail": "analysis of an earlier turn left out, as gpt-oss drops it",
                }
            )
            stored = tuple(i for i in stored if i not in dropped)
        trained = [masks[i].trained for i in stored]
        flags.append(any(trained))
        if len(set(trained)) > 1:
            exported.losses.append(
                {
                    "message_index": stored[0],
                    "field": "mask",
                    "detail": f"message {position} of the row joins trained and masked "
                    "messages; it is marked trained as a whole",
                }
            )
    if mask_style == WEIGHT:
        for message, trained in zip(messages, flags, strict=True):
            if message.get("role") == "assistant":
                message["weight"] = int(trained)
    elif mask_style == ASSISTANT_MASKS:
        row[ASSISTANT_MASKS] = [int(trained) for trained in flags]
    else:
        _with_token_mask(row, exported, canonical, convention, tokenizer)
    return row, exported


def _with_token_mask(row: dict, exported, canonical, convention, tokenizer) -> None:
    """``mask=tokens``: the transcript's own text as ``input_ids`` under the dataset's
    tokenizer, with TRL's per-token ``assistant_masks``; a JSON-spec transcript has no text
    of its own to tokenize: its row carries neither, and a loss says so."""
    try:
        row[INPUT_IDS], row[ASSISTANT_MASKS] = training.token_mask(canonical, convention, tokenizer)
    except ValueError as why:
        exported.losses.append(
            {"message_index": None, "field": INPUT_IDS, "detail": f"no token mask: {why}"}
        )


def _stored_of_row_messages(exported, row_messages: list[dict]) -> list[tuple[int, ...]] | None:
    """For each message of the row, the indexes of the stored messages written into it; None
    when they cannot be matched.

    The conversion's ``origins`` are per canonical message of the row's spec; several of
    those can be one JSON message of the row (reasoning, tool calls and content of one
    assistant turn). Read back, they share that JSON message's span of the text: the sizes
    of those groups, in order, cut the origins into the row's messages (reading back may add
    an empty answer to reasoning with no content: a group takes no more origins than leave
    one for each group after it).
    """
    origins = exported.origins
    if origins is None:
        return None
    parsed, _ = formats.parse(exported.text, exported.spec)
    sizes: list[int] = []
    last_span = None
    for message in parsed.messages:
        span = (message.source.begin, message.source.end) if message.source else None
        if span is not None and span == last_span:
            sizes[-1] += 1
        else:
            sizes.append(1)
        last_span = span
    if len(sizes) != len(row_messages) or len(origins) < len(sizes):
        return None
    groups, at = [], 0
    for position, size in enumerate(sizes):
        take = max(1, min(size, len(origins) - at - (len(sizes) - position - 1)))
        groups.append(tuple(i for origin in origins[at : at + take] for i in origin))
        at += take
    return groups if at == len(origins) else None


def context_length_of(dataset: Dataset, over_context: str | None) -> tuple[str, int] | None:
    """``(over_context, the dataset's context length)``, None when not asked; refused
    (``invalid-request``) for an unknown choice or a dataset naming no context length."""
    if over_context is None:
        return None
    if over_context not in OVER_CONTEXT:
        raise InvalidContent(
            f"Unknown over_context {over_context!r}; expected drop or report.",
            code="invalid-request",
        )
    length = (
        DatasetTokenizer.objects.filter(dataset=dataset)
        .values_list("context_length", flat=True)
        .first()
    )
    if not length:
        raise InvalidContent(
            "This dataset names no context length: set one with its tokenizer first.",
            code="invalid-request",
        )
    return over_context, length


def over_context_loss(token_count: int | None, over_context: tuple[str, int] | None):
    """The loss saying a transcript is over the context length, or None (not asked, not
    counted, or within it). Stored counts are read as the list's "over N tokens" reads them."""
    if over_context is None or token_count is None or token_count <= over_context[1]:
        return None
    what, length = over_context
    action = "left out" if what == DROP else "exported anyway"
    return {
        "message_index": None,
        "field": "context_length",
        "detail": f"{token_count} tokens, over the context length of {length}: {action}",
    }
