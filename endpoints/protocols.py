"""The two wire protocols a bot endpoint may speak: what to POST where, and how to read the
reply. Pure functions; errors are the client's typed BotBadReply.

EvalHub's protocol. POST to the endpoint's URL

    {"conversation_id": "<planned key>", "turns": [{"speaker": 0, "text": "..."}, ...],
     "speaker": <index of the speaker whose turn it is>}

and expect `{"text": "..."}`.

OpenAI-compatible chat completions (vLLM, Ollama, llama.cpp's server, TGI, hosted APIs).
POST to `{base URL}/chat/completions`

    {"model": "<model name>", "messages": [{"role": "system", "content": <system prompt>},
     {"role": "user" | "assistant", "content": "..."}, ...], "n": 1, "stream": false,
     "temperature": ..., "top_p": ..., "max_tokens": ..., "stop": [...]}

where the bot's own turns are "assistant" and its partner's are "user" (the system message
and the sampling settings only when set), and read `choices[0].message.content`.
Automatic judges (judging/) send their own messages (`openai_chat_body`), with the rubric's
JSON schema as `response_format` where the endpoint takes it, and also read the token counts
of `usage`, when the server reports them (`openai_usage`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace


class ReplyShapeError(ValueError):
    """Valid JSON that does not have the protocol's shape."""


@dataclass(frozen=True)
class Sampling:
    """The OpenAI-compatible request settings of an endpoint; None means the server's default."""

    model: str = ""
    system_prompt: str = ""
    temperature: float | None = None
    top_p: float | None = None
    max_tokens: int | None = None
    stop: tuple[str, ...] = field(default_factory=tuple)


def evalhub_url(url: str) -> str:
    return url


def evalhub_body(conversation_id: str, turns: Sequence[dict], speaker: int, _: Sampling) -> dict:
    return {
        "conversation_id": conversation_id,
        "turns": [{"speaker": t["speaker"], "text": t["text"]} for t in turns],
        "speaker": speaker,
    }


def evalhub_text(data) -> str:
    if not isinstance(data, dict) or "text" not in data:
        raise ReplyShapeError('the reply has no "text"')
    text = data["text"]
    if not isinstance(text, str):
        raise ReplyShapeError(f'"text" must be a string, not {type(text).__name__}')
    return text


def openai_url(base_url: str) -> str:
    return base_url.rstrip("/") + "/chat/completions"


def openai_messages(turns: Sequence[dict], speaker: int, system_prompt: str = "") -> list[dict]:
    """The conversation as chat messages seen by `speaker`: its turns are the assistant's."""
    messages = [{"role": "system", "content": system_prompt}] if system_prompt else []
    messages += [
        {"role": "assistant" if t["speaker"] == speaker else "user", "content": t["text"]}
        for t in turns
    ]
    return messages


def openai_body(conversation_id: str, turns: Sequence[dict], speaker: int, s: Sampling) -> dict:
    body = {
        "model": s.model,
        "messages": openai_messages(turns, speaker, s.system_prompt),
        "n": 1,
        "stream": False,
    }
    optional = {
        "temperature": s.temperature,
        "top_p": s.top_p,
        "max_tokens": s.max_tokens,
        "stop": list(s.stop) or None,
    }
    body.update({key: value for key, value in optional.items() if value is not None})
    return body


def openai_chat_body(
    messages: Sequence[dict], s: Sampling, response_format: dict | None = None
) -> dict:
    """A request with messages made by the caller (a judge's rubric), not from a dialogue's
    turns; the endpoint's system prompt is not added (the rubric says what to do). A
    `response_format` (OpenAI's structured output: {"type": "json_schema", "json_schema":
    {"name", "schema", "strict"}}) is sent when given."""
    body = openai_body("", [], 0, replace(s, system_prompt=""))
    body["messages"] = [dict(m) for m in messages]
    if response_format is not None:
        body["response_format"] = response_format
    return body


@dataclass(frozen=True)
class Usage:
    """Tokens a chat completion used, as the server reported them (None: not reported)."""

    prompt_tokens: int | None = None
    completion_tokens: int | None = None


def _count(value) -> int | None:
    return value if type(value) is int and value >= 0 else None


def openai_usage(data) -> Usage:
    """`usage.prompt_tokens` and `usage.completion_tokens`; servers that omit them, or send
    something that is no count, leave them None rather than failing the reply."""
    usage = data.get("usage") if isinstance(data, dict) else None
    if not isinstance(usage, dict):
        return Usage()
    return Usage(_count(usage.get("prompt_tokens")), _count(usage.get("completion_tokens")))


def openai_text(data) -> str:
    if not isinstance(data, dict) or "choices" not in data:
        raise ReplyShapeError('the reply has no "choices"')
    choices = data["choices"]
    if not isinstance(choices, list) or not choices:
        raise ReplyShapeError('"choices" is empty')
    choice = choices[0]
    message = choice.get("message") if isinstance(choice, dict) else None
    if not isinstance(message, dict):
        raise ReplyShapeError('choices[0] has no "message"')
    content = message.get("content")
    if not isinstance(content, str):
        kind = "null" if content is None else type(content).__name__
        raise ReplyShapeError(f"choices[0].message.content must be a string, not {kind}")
    return content


@dataclass(frozen=True)
class WireProtocol:
    url: Callable[[str], str]
    body: Callable[[str, Sequence[dict], int, Sampling], dict]
    text: Callable[[object], str]
    field: str  # how error messages name the reply's text


PROTOCOLS = {
    "evalhub": WireProtocol(evalhub_url, evalhub_body, evalhub_text, '"text"'),
    "openai": WireProtocol(openai_url, openai_body, openai_text, "choices[0].message.content"),
}
