"""Lines of Chatbot Arena's clean-battle format, written by hand for the tests."""

import io
import json


def line(question_id="q1", model_a="gpt-4-0613", model_b="vicuna-13b", winner="model_a", **more):
    row = {
        "question_id": question_id,
        "model_a": model_a,
        "model_b": model_b,
        "winner": winner,
        "judge": "arena_user_1",
        "turn": 1,
        "anony": True,
        "language": "English",
        "tstamp": 1682351591.5,
    }
    row.update(more)
    return {key: value for key, value in row.items() if value is not None}


def conversation(*turns):
    """conversation_a and conversation_b from (prompt, answer a, answer b) turns."""
    a, b = [], []
    for prompt, answer_a, answer_b in turns:
        a += [{"role": "user", "content": prompt}, {"role": "assistant", "content": answer_a}]
        b += [{"role": "user", "content": prompt}, {"role": "assistant", "content": answer_b}]
    return {"conversation_a": a, "conversation_b": b}


def jsonl(*rows) -> bytes:
    return "".join(
        (row if isinstance(row, str) else json.dumps(row)) + "\n" for row in rows
    ).encode()


def stream(*rows) -> io.BytesIO:
    return io.BytesIO(jsonl(*rows))
