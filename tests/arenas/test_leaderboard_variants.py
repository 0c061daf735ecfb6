"""The leaderboard's variants, computed by the task with the overall one: style control
(with its coefficients), the built-in and the owner's categories, and the provisional rule
(shown apart, never ranked first)."""

import random

import pytest
from django.utils import timezone

from arenas import leaderboard
from arenas.models import ArenaCategory, Battle, BattleAnswer, BattleTurn, LeaderboardVariant
from arenas.tasks import compute_leaderboard
from tests import factories
from tests.arenas.builders import arena

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _few_rounds(settings):
    settings.EVALHUB_ARENA_BOOTSTRAP_ROUNDS = 20


def style(headers=0, items=0, bold=0):
    return {
        "header_count": {"h1": headers, "h2": 0, "h3": 0, "h4": 0, "h5": 0, "h6": 0},
        "list_count": {"ordered": 0, "unordered": items},
        "bold_count": {"**": bold, "__": 0},
        "code_blocks": 0,
    }


def battle(made, one, two, vote, n, *, prompt="Hello there", answer="Hi.", **fields):
    rng = random.Random(n)
    fields = {
        "tokens_a": rng.randint(50, 500),
        "tokens_b": rng.randint(50, 500),
        "style_a": style(rng.randint(0, 3), rng.randint(0, 5), rng.randint(0, 2)),
        "style_b": style(rng.randint(0, 3), rng.randint(0, 5), rng.randint(0, 2)),
        "language": "en",
        "turns": 1,
        **fields,
    }
    made_battle = Battle.objects.create(
        arena=made,
        system_a=one,
        system_b=two,
        voter_platform="site",
        question_id=f"q{n}-{one.slug}-{two.slug}",
        vote=vote,
        voted_at=timezone.now(),
        **fields,
    )
    turn = BattleTurn.objects.create(battle=made_battle, number=1, prompt=prompt)
    for side in "ab":
        BattleAnswer.objects.create(turn=turn, side=side, status="done", text=answer)
    return made_battle


@pytest.fixture
def setup():
    owner = factories.user()
    one = factories.system(owner, slug="one", name="One")
    two = factories.system(owner, slug="two", name="Two")
    three = factories.system(owner, slug="three", name="Three")
    made = arena(owner, provisional_battles=0, provisional_width=2000)
    n = 0
    for x, y, votes in [(one, two, "aaab"), (two, three, "aaba"), (one, three, "aaat")]:
        for vote in votes * 5:
            code = {"a": "a_better", "b": "b_better", "t": "tie"}[vote]
            battle(made, x, y, code, n)
            n += 1
    return made, one, two, three


def test_every_variant_is_computed_with_the_overall_leaderboard(setup):
    made, one, two, three = setup
    results = leaderboard.compute_all(made)
    assert {"", "style", "category:english", "style,category:english"} <= set(results)
    assert {"category:multiturn", "category:long_user", "category:coding"} <= set(results)
    assert results["category:english"]["battles"] == 60
    assert results["category:coding"]["battles"] == 0
    names = {c["name"]: c["battles"] for c in results[""]["categories"]}
    assert names["english"] == 60 and names["multiturn"] == 0


def test_the_style_controlled_leaderboard_has_the_contract_and_the_coefficients(setup):
    made, *_ = setup
    result = leaderboard.compute_all(made)["style"]
    assert result["style_control"] is True and result["battles"] == 60
    assert [c["feature"] for c in result["style_coefficients"]] == [
        "length",
        "headers",
        "lists",
        "bold",
    ]
    for coefficient in result["style_coefficients"]:
        assert coefficient["lower"] <= coefficient["coefficient"] <= coefficient["upper"]
    row = result["systems"][0]
    assert set(row) == {
        "system", "name", "rating", "lower", "upper", "rank", "battles", "provisional"
    }  # fmt: skip
    assert result["systems"][0]["system"] == "one"


def test_battles_without_style_features_are_left_out_of_style_control_only(setup):
    made, one, two, _ = setup
    battle(made, one, two, "b_better", 999, tokens_a=None, style_a={})
    results = leaderboard.compute_all(made)
    assert results[""]["battles"] == 61 and results["style"]["battles"] == 60
    assert "1 battles without style features left out" in results["style"]["warnings"]


def test_categories_from_turns_prompt_length_code_and_imported_tags(setup):
    made, one, two, _ = setup
    battle(made, one, two, "a_better", 100, turns=2)
    battle(made, one, two, "a_better", 101, answer="Sure:\n```python\nprint(1)\n```")
    battle(made, one, two, "a_better", 102, extra={"is_code": True})
    battle(made, one, two, "a_better", 103, prompt="word " * 500)
    battle(made, one, two, "a_better", 104, extra={"conv_metadata": {"sum_user_tokens": 900}})
    battle(made, one, two, "a_better", 105, language="Chinese")
    results = leaderboard.compute_all(made)
    assert results["category:multiturn"]["battles"] == 1
    assert results["category:coding"]["battles"] == 2
    assert results["category:long_user"]["battles"] == 2
    assert results["category:chinese"]["battles"] == 1


def test_an_owners_category_is_its_rule(setup):
    made, one, two, _ = setup
    ArenaCategory.objects.create(arena=made, name="maths", prompt_pattern=r"(?i)integral")
    battle(made, one, two, "b_better", 200, prompt="Solve this Integral")
    battle(made, one, two, "b_better", 201, prompt="Integrals, again", turns=3)
    ArenaCategory.objects.create(
        arena=made, name="short-maths", prompt_pattern="ntegral", max_turns=1
    )
    results = leaderboard.compute_all(made)
    assert results["category:maths"]["battles"] == 2
    assert results["category:short-maths"]["battles"] == 1
    maths = next(c for c in results[""]["categories"] if c["name"] == "maths")
    assert maths == {"name": "maths", "battles": 2, "builtin": False}


def test_a_provisional_system_is_listed_after_the_ranked_and_never_first(setup):
    made, one, two, three = setup
    made.provisional_battles = 40  # each system has 40 battles...
    four = factories.system(made.owner, slug="four", name="Four")
    for n in range(3):  # ...but four has 3, all won
        battle(made, four, one, "a_better", 300 + n)
    systems = leaderboard.compute(made)["systems"]
    assert [s["system"] for s in systems][-1] == "four"
    four_row = systems[-1]
    assert four_row["provisional"] is True and four_row["rank"] >= 2
    assert all(not s["provisional"] for s in systems[:-1])


def test_a_wide_interval_keeps_a_system_provisional(setup):
    made, *_ = setup
    made.provisional_width = 1.0  # every interval here is wider
    systems = leaderboard.compute(made)["systems"]
    assert all(s["provisional"] for s in systems)
    assert min(s["rank"] for s in systems) == 2


def test_the_task_stores_each_variant_and_drops_a_removed_categorys(setup):
    made, *_ = setup
    LeaderboardVariant.objects.create(arena=made, key="category:gone", result={}, battles=0)
    LeaderboardVariant.objects.filter(key="category:gone").update(
        computed_at=timezone.now() - timezone.timedelta(minutes=1)
    )
    compute_leaderboard(made.pk)
    keys = set(LeaderboardVariant.objects.filter(arena=made).values_list("key", flat=True))
    assert {"style", "category:english", "style,category:english"} <= keys
    assert "category:gone" not in keys
    stored = LeaderboardVariant.objects.get(arena=made, key="style")
    assert stored.battles == 60 and stored.result["style_coefficients"]
