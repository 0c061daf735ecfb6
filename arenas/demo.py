"""The arena's part of the demo (`make run`): a public arena whose battles were simulated
from known strengths and imported through the clean-battle importer, so that its page shows
a leaderboard on the first run. Its systems have no endpoint: the demo holds no live model
(enter one with a bot endpoint to battle)."""

import io
import json

import numpy as np

from .interchange.writing import import_battles
from .models import Arena
from .tasks import compute_leaderboard

DEMO_SLUG = "demo-arena"
# Bradley-Terry log-strengths of the simulated models.
DEMO_MODELS = {
    "sage-70b": 0.9,
    "quill-13b": 0.35,
    "parrot-7b": 0.0,
    "echo-1b": -0.8,
}
DEMO_BATTLES = 400
TIE_SHARE = 0.15


def simulated_lines(seed: int = 2026) -> bytes:
    """DEMO_BATTLES clean-battle lines between uniformly drawn pairs of DEMO_MODELS."""
    rng = np.random.default_rng(seed)
    names = list(DEMO_MODELS)
    strength = np.array([DEMO_MODELS[n] for n in names])
    lines = []
    for number in range(DEMO_BATTLES):
        a, b = rng.choice(len(names), size=2, replace=False)
        p = 1.0 / (1.0 + np.exp(-(strength[a] - strength[b])))
        draw = rng.random()
        if draw < TIE_SHARE:
            winner = "tie" if rng.random() < 0.5 else "tie (bothbad)"
        else:
            winner = "model_a" if rng.random() < p else "model_b"
        line = {
            "question_id": f"demo-{number:04d}",
            "model_a": names[a],
            "model_b": names[b],
            "winner": winner,
            "turn": 1,
            "anony": True,
            "language": "en",
            "tstamp": 1767225600.0 + 60 * number,
        }
        lines.append(json.dumps(line))
    return ("\n".join(lines) + "\n").encode()


def load_arena_demo(owner) -> Arena:
    """Create (once) the demo arena with its simulated battles and its leaderboard."""
    arena, created = Arena.objects.get_or_create(
        slug=DEMO_SLUG,
        defaults={
            "name": "Demo arena (simulated battles)",
            "description": "Four made-up models, 400 battles simulated from known strengths "
            "and imported in Chatbot Arena's clean-battle format.",
            "owner": owner,
            "visibility": Arena.Visibility.PUBLIC,
            # 400 battles are a small arena: rank its systems on what it has.
            "provisional_battles": 100,
            "provisional_width": 200.0,
        },
    )
    if created:
        import_battles(arena, io.BytesIO(simulated_lines()), create=True)
    if not hasattr(arena, "leaderboard"):
        compute_leaderboard(arena.pk)
    return arena
