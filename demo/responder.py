"""The demo's chatbot: a small rule-based responder speaking EvalHub's bot protocol on
127.0.0.1, started by `make run` beside the server (`serve_embedded`), so that the demo's
chat campaign has a bot to talk with and no model or outside service is needed.

It is simulated, and says so: a few canned moves (answer a question with a question, pick
up a word of the user's, talk about its dog) chosen deterministically from the
conversation, never a language model. POST `{"conversation_id", "turns": [{"speaker",
"text"}], "speaker"}` to /reply and get `{"text": "..."}` (endpoints/protocols.py).
"""

import argparse
import json
import re
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

DEFAULT_PORT = 8009
MAX_BODY = 256 * 1024
STOP = {
    "the", "a", "an", "and", "or", "but", "i", "you", "me", "my", "your", "is", "are", "was",
    "to", "of", "in", "on", "it", "that", "this", "what", "do", "does", "did", "have", "has",
    "for", "with", "so", "just", "not", "be", "am", "can", "how", "about", "there", "they",
    "like", "love", "want", "know", "think", "really", "very", "would", "could", "should",
    "will", "i'm", "it's", "don't", "you're", "yes", "no", "well", "good", "some", "all",
}  # fmt: skip
OPENERS = (
    "Hello! I am the demo bot: a few rules, no model. What would you like to talk about?",
    "Hi there. I am a simulated chatbot for EvalHub's demo. How is your day going?",
)


def reply(conversation_id: str, turns: list[dict]) -> str:
    """The demo bot's next turn: the same conversation always gets the same answer."""
    said = [t.get("text", "") for t in turns if isinstance(t, dict)]
    seed = zlib.crc32(f"{conversation_id}:{len(said)}".encode())
    if not said:
        return OPENERS[seed % len(OPENERS)]
    last = said[-1].strip()
    words = [w for w in re.findall(r"[a-zA-Z']{3,}", last.lower()) if w not in STOP]
    topic = words[(seed // 7) % len(words)] if words else ""
    moves = [
        f"Why do you ask about {topic}?" if last.endswith("?") and topic else "",
        f"Tell me more about {topic}: what do you like about it?" if topic else "",
        "That reminds me of my dog. He is four and loves long walks. Do you have pets?",
        "I see. What did you do today?",
    ]
    moves = [m for m in moves if m]
    return moves[seed % len(moves)]


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        if self.path.rstrip("/") != "/reply":
            return self._answer(404, {"error": "POST to /reply"})
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_BODY:
            return self._answer(413, {"error": "body too large"})
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
            turns = body.get("turns") or []
            text = reply(str(body.get("conversation_id", "")), turns)
        except (ValueError, AttributeError):
            return self._answer(400, {"error": "a JSON object with turns"})
        return self._answer(200, {"text": text})

    def _answer(self, status: int, payload: dict):
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format, *args):
        pass  # quiet beside the development server's log


def serve(port: int = DEFAULT_PORT) -> ThreadingHTTPServer:
    return ThreadingHTTPServer(("127.0.0.1", port), Handler)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=DEFAULT_PORT)
    serve(parser.parse_args().port).serve_forever()


if __name__ == "__main__":
    main()
