"""The demo, assembled from each app's own part.

This app stands above every layer (it may import them all, nothing imports it), so that no
app has to reach up to a higher one to build the demo.
"""

from django.db import transaction

from annotation.demo import load_annotation_demo
from arenas.demo import load_arena_demo
from demo.chat import load_chat_demo
from demo.judgments import load_judgments_demo
from demo.leaderboards import load_analysis_demo
from demo.versus import load_versus_demo
from evalhub.demo import demo_accounts, load_catalog_demo


def load_demo() -> list[tuple[str, str | None]]:
    """Create whatever demo data is missing; safe to run any number of times. Existing
    accounts keep their passwords.

    Returns the demo accounts as ``evalhub.demo.demo_accounts`` does: (username, demo
    password, or None when its owner changed it).
    """
    with transaction.atomic():
        accounts = load_catalog_demo()
        # The annotation demo needs the catalog: its A/B campaign compares submissions.
        load_annotation_demo(accounts["admin"])
        # A chat campaign with the demo bot that `make run` starts (demo/responder.py).
        load_chat_demo(accounts["admin"])
    # A finished Spot The Bot tournament and an A/B experiment, simulated from a known model
    # and analysed now, so that the leaderboards have something to show on the first run.
    load_analysis_demo(accounts["admin"])
    # Simulated workers in the ABC-Eval, Likert and comparative campaigns, so that every
    # kind has results on the first run (the results pages say they are simulated).
    with transaction.atomic():
        load_judgments_demo()
    # A simulated automatic judge on the Spot The Bot tournament, compared with the crowd.
    load_versus_demo(accounts["admin"])
    # An arena with simulated battles imported, and its leaderboard.
    with transaction.atomic():
        load_arena_demo(accounts["admin"])
    return demo_accounts()
