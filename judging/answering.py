"""One item, one judge: ask, read the answer, ask again while it does not parse.

No database here (the run's worker threads call it; judging/execution.py stores what it
returns). Two paths. Where the endpoint takes it (`OutputMode.structured`), the request
carries the rubric's JSON schema as `response_format` (OpenAI's structured output, strict),
so the model can only write an answer of the right shape; an endpoint that refuses it (a
400 naming response_format) is asked again at once without it, and the run's mode is
switched off for every later request (the worker then records the endpoint as refusing it).
Otherwise the prompt alone says the format. On both paths the reply goes through the
kind's own validation (judging/rubrics/common.py); an answer that does not parse, or a
reply in the wrong shape (no text, a refusal the server sends instead of content), is
asked again with the problem, at most `max_attempts` requests in all, then given up as
failed with the last raw text (the text of a reply in the wrong shape is not kept: only its
summary, since the run's owner reads it and the body may come from anything the endpoint's
URL reaches). Each such reply counts in `parse_failures`. Transport errors (timeouts, 5xx,
429s past their retries, a spent budget) are the client's to retry and, when it gives up,
are raised: the item stays unjudged and a resumed run asks again.
"""

from dataclasses import dataclass

from endpoints.client import BotBadReply, BotHTTPError, refuses_parameter

from .rubrics.common import AnswerInvalid, parse_reply, prompt, response_format, retry_messages

# Which path a judgment took (AutomaticJudgment.OutputPath).
STRUCTURED = "structured"
PROMPTED = "prompt"


@dataclass(frozen=True)
class Answer:
    ok: bool
    payload: dict
    raw_text: str
    error: str
    attempts: int
    prompt_tokens: int | None
    completion_tokens: int | None
    path: str = ""  # STRUCTURED or PROMPTED: how the last request asked; "" for none sent
    parse_failures: int = 0  # replies that did not parse or were in the wrong shape


class OutputMode:
    """Whether a run's requests ask for structured output; one per run, shared by its
    threads, so the first refusal stops every later request from asking (a bool set once
    is safe across threads)."""

    def __init__(self, structured: bool):
        self.structured = structured
        self.refused = False

    def refuse(self) -> None:
        self.structured = False
        self.refused = True


def _add(total: int | None, value: int | None) -> int | None:
    if value is None:
        return total
    return value if total is None else total + value


@dataclass(frozen=True)
class Question:
    """What the judge is asked about one item: the item, the campaign's config, what the
    kind's page would show (`task`) and the rubric's template."""

    kind: object
    item: object
    config: dict
    task: dict
    instructions: str

    def messages(self) -> list[dict]:
        return prompt(self.kind.key, self.instructions, self.task, self.config)

    def response_format(self) -> dict:
        return response_format(self.kind.key, self.task, self.config)


def _ask(client, messages: list[dict], question: Question, mode: OutputMode):
    """The reply and the path it took: structured while the mode allows, else the prompt
    alone (at once, when this request is the one the endpoint refused)."""
    if mode.structured:
        try:
            return client.chat(messages, response_format=question.response_format()), STRUCTURED
        except BotHTTPError as error:
            if not refuses_parameter(error, "response_format"):
                raise
            mode.refuse()
    return client.chat(messages), PROMPTED


def answer(client, question: Question, max_attempts: int, mode: OutputMode | None = None) -> Answer:
    mode = mode if mode is not None else OutputMode(structured=False)
    base = question.messages()
    messages = base
    raw_text, problem, path = "", "", ""
    failures = 0
    prompt_tokens = completion_tokens = None
    for attempt in range(1, max_attempts + 1):
        try:
            reply, path = _ask(client, messages, question, mode)
        except BotBadReply as error:
            # No usable text came: the body itself is for staff only (the call's outcome).
            raw_text, problem = "", f"The reply was unusable: {error.summary}."
            failures += 1
            path = STRUCTURED if mode.structured else PROMPTED
            messages = base
            continue
        prompt_tokens = _add(prompt_tokens, reply.usage.prompt_tokens)
        completion_tokens = _add(completion_tokens, reply.usage.completion_tokens)
        raw_text = reply.text
        try:
            payload = parse_reply(
                question.kind, question.item, question.config, question.task, reply.text
            )
        except AnswerInvalid as invalid:
            problem = str(invalid)
            failures += 1
            messages = retry_messages(base, reply.text, problem)
            continue
        return Answer(
            True, payload, raw_text, "", attempt, prompt_tokens, completion_tokens, path, failures
        )
    return Answer(
        False, {}, raw_text, problem, max_attempts, prompt_tokens, completion_tokens, path, failures
    )
