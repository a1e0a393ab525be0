"""Judges: a model attached to one question of a label schema, the prompt it is asked and the
reading of its answer.

Which questions a judge may answer (``JUDGEABLE_KINDS``): choice, multi_choice, rating and
text, about the whole transcript or about each message (then asked once per message in the
question's scope, its roles and channels, the prompt naming the message: ``{message}``). Not
span (character ranges a model counts unreliably, and a wrong offset tags the wrong words)
nor pairwise (its answer is about a turn's alternatives, shown in an order per person).

The request asks for a JSON object ``{"value", "rationale"}`` constrained by a JSON schema
built from the question (``response_format``); a server that refuses ``response_format`` (400)
is asked again without it, and the answer is read from its text (a JSON object in it, or an
option named by its value or label). An answer that names no fitting value is an
``UnreadableAnswer``: a failure of that item, reported by the run.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from django.db import IntegrityError, transaction

from editor.assist.client import complete
from editor.errors import InvalidAnswer, InvalidJudge, ModelCallFailed, NotAllowed, UnreadableAnswer
from editor.formats.render import ANNOTATOR, render_text
from editor.labels import Question, definition_of
from editor.models import Judge, JudgeRun, LabelSchema, ModelConnection, Transcript

JUDGEABLE_KINDS = ("choice", "multi_choice", "rating", "text")
PLACEHOLDERS = ("{transcript}", "{question}", "{options}", "{message}")
REQUIRED_PLACEHOLDERS = ("{transcript}", "{question}")
# A question about each message: the prompt must say which message is meant.
REQUIRED_FOR_MESSAGES = ("{message}",)
FILLED = re.compile(r"\{(transcript|question|options|message)\}")
MAX_TEMPLATE = 20_000
MAX_RATIONALE = 2_000

DEFAULT_PROMPT_TEMPLATE = """You label conversations between a user and an AI assistant.

Question: {question}
{options}

The conversation:
<conversation>
{transcript}
</conversation>

Answer with a JSON object: {"value": <your answer>, "rationale": "<one or two sentences>"}."""

DEFAULT_MESSAGE_PROMPT_TEMPLATE = """You label one message of a conversation between a user and an \
AI assistant.

Question, about that message only: {question}
{options}

The conversation:
<conversation>
{transcript}
</conversation>

The message to label:
<message>
{message}
</message>

Answer with a JSON object: {"value": <your answer>, "rationale": "<one or two sentences>"}."""


# --- attaching -------------------------------------------------------------------------------


def judgeable(question: Question) -> bool:
    """A judge may answer ``question`` (see the module's docstring for why not the others)."""
    return question.kind in JUDGEABLE_KINDS and question.applies_to in (
        None,
        "transcript",
        "message",
    )


def about_messages(question: Question) -> bool:
    """``question`` is asked about each message in its scope, not the whole transcript."""
    return question.applies_to == "message"


def default_template(question: Question) -> str:
    return DEFAULT_MESSAGE_PROMPT_TEMPLATE if about_messages(question) else DEFAULT_PROMPT_TEMPLATE


def judgeable_questions(schema: LabelSchema) -> list[Question]:
    return [q for q in definition_of(schema.current_version).questions if judgeable(q)]


def attach_judge(
    schema: LabelSchema,
    *,
    question: str,
    connection: ModelConnection,
    prompt_template: str | None = None,
    user,
) -> Judge:
    """Attach a judge to ``question`` of ``schema`` (curators), or change the one attached."""
    _require_curator(schema, user)
    found = definition_of(schema.current_version).question(question)
    if found is None:
        raise InvalidJudge(
            f"The schema {schema.name!r} has no question {question!r}.",
            details={"field": "question"},
        )
    if not judgeable(found):
        raise InvalidJudge(
            f"A judge answers choice, multi-choice, rating and text questions about the whole "
            f"transcript or each message; {question!r} is a {found.kind} question.",
            details={"field": "question", "kinds": list(JUDGEABLE_KINDS)},
        )
    if connection.dataset_id != schema.dataset_id:
        raise InvalidJudge(
            "The connection belongs to another dataset.", details={"field": "connection"}
        )
    template = check_template(_template_for(found, prompt_template), found)
    try:
        with transaction.atomic():
            judge, _ = Judge.objects.update_or_create(
                schema=schema,
                question=question,
                defaults={"connection": connection, "prompt_template": template},
                create_defaults={
                    "connection": connection,
                    "prompt_template": template,
                    "created_by": user,
                },
            )
    except IntegrityError:  # attached by someone else at the same moment: theirs stands
        judge = Judge.objects.get(schema=schema, question=question)
    return judge


def _template_for(question: Question, given: str | None) -> str:
    """``given``, or the question's default template when none was given or the default one
    for the whole transcript came back unchanged (the Judges page's form shows it first)."""
    if not given or given.replace("\r\n", "\n").strip() == DEFAULT_PROMPT_TEMPLATE.strip():
        return default_template(question)
    return given


def detach_judge(judge: Judge, *, user) -> None:
    """Remove a judge; its runs go with it, its suggestions stay (``run`` set to null)."""
    _require_curator(judge.schema, user)
    judge.delete()


def check_template(template: str, question: Question | None = None) -> str:
    """``template`` if it may prompt a judge of ``question``: not too long, with the
    placeholders it needs ({message} too for a question about each message)."""
    if len(template) > MAX_TEMPLATE:
        raise InvalidJudge(
            f"The prompt template is longer than {MAX_TEMPLATE} characters.",
            details={"field": "prompt_template"},
        )
    required = REQUIRED_PLACEHOLDERS
    if question is not None and about_messages(question):
        required += REQUIRED_FOR_MESSAGES
    missing = [p for p in required if p not in template]
    if missing:
        raise InvalidJudge(
            "The prompt template must contain " + " and ".join(missing) + ".",
            details={"field": "prompt_template", "missing": missing},
        )
    return template


def _require_curator(schema: LabelSchema, user) -> None:
    if not schema.dataset.can_curate(user):
        raise NotAllowed("Only a curator of the dataset attaches judges.")


# --- the prompt ------------------------------------------------------------------------------


def options_text(question: Question) -> str:
    """What the model may answer, as the prompt's {options} says it."""
    if question.kind in ("choice", "multi_choice"):
        lines = [f'- "{o.value}": {o.label}' for o in question.options]
        many = "one or more of" if question.kind == "multi_choice" else "exactly one of"
        shape = "a list of values" if question.kind == "multi_choice" else "a value"
        return f"Answer with {shape}, {many}:\n" + "\n".join(lines)
    if question.kind == "rating":
        return f"Answer with a whole number from 1 to {question.scale}."
    limit = question.max_length or 10_000
    return f"Answer with a short text (at most {limit} characters)."


def prompt(
    judge: Judge,
    question: Question,
    transcript: Transcript,
    message_index: int | None = None,
    *,
    canonical=None,
) -> str:
    """``judge``'s template filled in (``message_index``: the message a question about each
    message is asked about, named by ``{message}``). Placeholders are replaced in one pass
    over the template, not ``str.format``ted: the template and the transcript may hold braces
    of their own (JSON examples, code), and a value put in is never searched again."""
    canonical = canonical if canonical is not None else transcript.canonical()
    values = {
        "question": question.prompt,
        "options": options_text(question),
        "transcript": render_text(canonical, ANNOTATOR, source_text=None),
        "message": ""
        if message_index is None
        else message_text(canonical.messages[message_index], message_index),
    }
    return FILLED.sub(lambda found: values[found.group(1)], judge.prompt_template)


def message_text(message, index: int) -> str:
    """The message a judge is asked about, as ``{message}`` names it: its number, role and
    channel, then its text."""
    where = message.role + (f"/{message.channel}" if message.channel else "")
    return f"Message #{index} ({where}):\n{message.content}"


def messages_in_scope(question: Question, canonical) -> list[int]:
    """The indexes of the messages of ``canonical`` that ``question`` is asked about."""
    return [i for i, m in enumerate(canonical.messages) if question.applies_to_message(m)]


def value_schema(question: Question) -> dict:
    """The JSON schema of an answer's value."""
    if question.kind == "choice":
        return {"type": "string", "enum": [o.value for o in question.options]}
    if question.kind == "multi_choice":
        return {
            "type": "array",
            "items": {"type": "string", "enum": [o.value for o in question.options]},
            "uniqueItems": True,
        }
    if question.kind == "rating":
        return {"type": "integer", "minimum": 1, "maximum": question.scale}
    return {"type": "string", "maxLength": question.max_length or 10_000}


def response_format(question: Question) -> dict:
    """``response_format`` for a constrained answer: {"value", "rationale"}."""
    return {
        "type": "json_schema",
        "json_schema": {
            "name": "label",
            "strict": True,
            "schema": {
                "type": "object",
                "properties": {"value": value_schema(question), "rationale": {"type": "string"}},
                "required": ["value", "rationale"],
                "additionalProperties": False,
            },
        },
    }


# --- reading the answer ----------------------------------------------------------------------


@dataclass(frozen=True)
class Answer:
    value: Any
    rationale: str
    model: str
    refused_response_format: bool = False


def parse_answer(question: Question, text: str | None) -> tuple[Any, str]:
    """``(value, rationale)`` from a model's answer text: a JSON object with ``value`` (or
    ``answer``) first; failing that, the option (value or label) the text names, the one
    number in range, or the text itself for a text question. Raises ``UnreadableAnswer``."""
    text = (text or "").strip()
    found = _json_object(text)
    if found is not None and any(k in found for k in ("value", "answer")):
        raw = found.get("value", found.get("answer"))
        rationale = str(found.get("rationale") or found.get("reason") or "")[:MAX_RATIONALE]
        return _fitting(question, raw, text), rationale
    if question.kind == "text":
        if not text:
            raise UnreadableAnswer("The model answered nothing.")
        return _fitting(question, text, text), ""
    return _named_in(question, text), ""


def _json_object(text: str) -> dict | None:
    decoder = json.JSONDecoder()
    for match in re.finditer(r"\{", text):
        try:
            found, _ = decoder.raw_decode(text, match.start())
        except ValueError:
            continue
        if isinstance(found, dict):
            return found
    return None


def _fitting(question: Question, raw: Any, text: str) -> Any:
    """``raw`` as a value of ``question`` (an option named by its label counts), checked by
    the question's own rule."""
    value = raw
    if question.kind == "choice":
        value = _option_value(question, raw)
    elif question.kind == "multi_choice":
        items = raw if isinstance(raw, list) else [raw]
        value = [_option_value(question, item) for item in items]
        value = list(dict.fromkeys(value))
    elif question.kind == "rating":
        if isinstance(raw, str) and raw.strip().isdigit():
            value = int(raw.strip())
        elif isinstance(raw, float) and raw.is_integer():
            value = int(raw)
    elif question.kind == "text" and not isinstance(raw, str):
        value = json.dumps(raw)
    try:
        question.check_value(value)
    except InvalidAnswer as refused:
        raise UnreadableAnswer(
            f"The model's answer does not fit the question: {refused.message}",
            details={"answer": text[:300]},
        ) from None
    return value


def _option_value(question: Question, raw: Any) -> Any:
    if not isinstance(raw, str):
        return raw
    wanted = raw.strip().casefold()
    for option in question.options:
        if wanted in (option.value.casefold(), option.label.casefold()):
            return option.value
    return raw


def _named_in(question: Question, text: str) -> Any:
    if question.kind == "rating":
        numbers = {int(n) for n in re.findall(r"(?<![\d.])\d+(?![\d.])", text)}
        fitting = [n for n in numbers if 1 <= n <= question.scale]
        if len(fitting) == 1:
            return fitting[0]
        raise UnreadableAnswer(
            f"The model's answer names no single rating from 1 to {question.scale}.",
            details={"answer": text[:300]},
        )
    spans = {
        option.value: [
            found.span()
            for name in (option.value, option.label)
            for found in re.finditer(rf"(?<!\w){re.escape(name)}(?!\w)", text, re.IGNORECASE)
        ]
        for option in question.options
    }
    # "Not helpful" names one option, not also "Helpful" inside it: a match within another
    # option's longer match does not count.
    named = [
        value
        for value, own in spans.items()
        if any(
            not any(
                other != value and a <= start and end <= b and (b - a) > (end - start)
                for other, theirs in spans.items()
                for a, b in theirs
            )
            for start, end in own
        )
    ]
    if question.kind == "multi_choice" and named:
        return named
    if len(named) == 1:
        return named[0]
    raise UnreadableAnswer(
        "The model's answer names "
        + ("several options" if named else "none of the options")
        + ": it cannot be read as one.",
        details={"answer": text[:300]},
    )


# --- asking ----------------------------------------------------------------------------------


def ask(
    judge: Judge,
    question: Question,
    transcript: Transcript,
    *,
    run: JudgeRun | None = None,
    constrained: bool = True,
    message_index: int | None = None,
    canonical=None,
) -> Answer:
    """Ask ``judge`` about ``transcript`` (or its message ``message_index``) once (the caller
    retries): with a constrained answer unless ``constrained`` is False or the server refuses
    it (400), then without. ``canonical``: the transcript's messages when the caller has
    them. Raises ``ModelCallFailed`` or ``UnreadableAnswer``."""
    text = prompt(judge, question, transcript, message_index, canonical=canonical)
    messages = [{"role": "user", "content": text}]
    refused = False
    call = dict(purpose="judge", dataset=judge.schema.dataset, transcript=transcript, run=run)
    if constrained:
        try:
            completion = complete(
                judge.connection, messages, response_format=response_format(question), **call
            )
        except ModelCallFailed as failure:
            if failure.details.get("status_code") != 400:
                raise
            refused = True
    if refused or not constrained:
        completion = complete(judge.connection, messages, **call)
    value, rationale = parse_answer(question, completion.message.get("content"))
    return Answer(value, rationale, completion.model, refused_response_format=refused)


def judges_of(dataset):
    """The judges attached to questions of ``dataset``'s schemas."""
    return Judge.objects.filter(schema__dataset=dataset).select_related(
        "schema__current_version", "schema__dataset", "connection"
    )
