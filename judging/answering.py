"""One item, one judge: ask, read the answer, ask again while it does not parse.

No database here (the run's worker threads call it; judging/execution.py stores what it
returns). The reply goes through the kind's own validation (judging/rubrics/common.py);
an answer that does not parse, or a reply in the wrong shape (no text, a refusal the
server sends instead of content), is asked again with the problem, at most
`max_attempts` requests in all, then given up as failed with the last raw text (the text
of a reply in the wrong shape is not kept: only its summary, since the run's owner reads
it and the body may come from anything the endpoint's URL reaches). Transport
errors (timeouts, 5xx, 429s past their retries, a spent budget) are the client's to retry
and, when it gives up, are raised: the item stays unjudged and a resumed run asks again.
"""

from dataclasses import dataclass

from endpoints.client import BotBadReply

from .rubrics.common import AnswerInvalid, parse_reply, prompt, retry_messages


@dataclass(frozen=True)
class Answer:
    ok: bool
    payload: dict
    raw_text: str
    error: str
    attempts: int
    prompt_tokens: int | None
    completion_tokens: int | None


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


def answer(client, question: Question, max_attempts: int) -> Answer:
    base = question.messages()
    messages = base
    raw_text, problem = "", ""
    prompt_tokens = completion_tokens = None
    for attempt in range(1, max_attempts + 1):
        try:
            reply = client.chat(messages)
        except BotBadReply as error:
            # No usable text came: the body itself is for staff only (the call's outcome).
            raw_text, problem = "", f"The reply was unusable: {error.summary}."
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
            messages = retry_messages(base, reply.text, problem)
            continue
        return Answer(True, payload, raw_text, "", attempt, prompt_tokens, completion_tokens)
    return Answer(False, {}, raw_text, problem, max_attempts, prompt_tokens, completion_tokens)
