"""A participant ranks a batch of responses with the keyboard, and drags one into order."""

import pytest
from playwright.sync_api import expect

from annotation.campaigns import ResponsePairs, create_campaign
from annotation.models import Assignment, Campaign, Item, Judgment
from tests import factories

pytestmark = pytest.mark.django_db(transaction=True)


def ranking_campaign(config=None, prompts=2):
    prompt_set = factories.prompt_set(prompts)
    systems = []
    for n in range(3):
        system = factories.system(None, slug=f"bot-{n}")
        factories.submission(system, prompt_set, [f"Answer {'xyz'[n]}{i}." for i in range(prompts)])
        systems.append(system)
    campaign = Campaign(
        task_kind="ranking",
        slug="rank",
        title="Rank the answers",
        instructions="Rank the three answers from best to worst.",
        status="live",
        allow_worker_param=True,
        batch_size=prompts,
        redundancy=1,
        task_config=config or {},
    )
    create_campaign(campaign, ResponsePairs(prompt_set, systems[0], systems[1:]), gold_per_batch=0)
    return campaign


def rank_of(page, n):
    return page.locator(f"select[name=rank_{n}]")


def shown_order(page) -> list[str]:
    return page.eval_on_selector_all(".rank-item", "items => items.map(i => i.dataset.field)")


def test_participant_ranks_a_batch_by_keys(page, screenshot):
    ranking_campaign()
    page.goto("/work/rank/?worker=keys-1")
    expect(page.locator(".progress")).to_have_text("Item 1 of 2")
    expect(page.locator(".rank-item")).to_have_count(3)
    assert "bot-0" not in page.content()

    # Digits: response 1 takes rank 1; response 2 then takes rank 1 and, ties not being
    # allowed, response 1 gets response 2's old rank (none).
    page.locator(".rank-item[data-field=rank_1]").focus()
    page.keyboard.press("1")
    expect(rank_of(page, 1)).to_have_value("1")
    page.keyboard.press("Tab")  # the select of response 1
    page.keyboard.press("Tab")  # the next response in the list
    focused = page.evaluate("document.activeElement.dataset.field")
    page.keyboard.press("1")
    expect(rank_of(page, int(focused[-1]))).to_have_value("1")
    expect(rank_of(page, 1)).to_have_value("")
    # The list keeps itself in rank order, the ranked response first.
    assert shown_order(page)[0] == focused
    others = [f"rank_{n}" for n in (1, 2, 3) if f"rank_{n}" != focused]
    for field, key in zip(others, ("3", "2"), strict=True):
        page.locator(f".rank-item[data-field={field}]").focus()
        page.keyboard.press(key)
    ranks = [page.locator(f"select[name=rank_{n}]").input_value() for n in (1, 2, 3)]
    assert sorted(ranks) == ["1", "2", "3"]
    assert shown_order(page) == [f"rank_{n}" for n in sorted((1, 2, 3), key=lambda n: ranks[n - 1])]
    screenshot("worker-ranking")
    page.keyboard.press("Enter")

    # The next item comes in place; the arrows move the focused response, and the ranks
    # follow the list's order.
    expect(page.locator(".progress")).to_have_text("Item 2 of 2")
    first = Judgment.objects.get()
    assert first.payload == {"ranks": [int(r) for r in ranks]}
    before = shown_order(page)
    page.locator(f".rank-item[data-field={before[2]}]").focus()
    page.keyboard.press("ArrowUp")
    page.keyboard.press("ArrowUp")
    expected = [before[2], before[0], before[1]]
    assert shown_order(page) == expected
    page.keyboard.press("Enter")

    expect(page.get_by_test_id("completion-code")).to_be_visible()
    assignment = Assignment.objects.get(worker__external_id="link:keys-1")
    assert assignment.status == "submitted"
    second = Judgment.objects.exclude(pk=first.pk).get()
    by_field = {field: place for place, field in enumerate(expected, 1)}
    assert second.payload == {"ranks": [by_field[f"rank_{n}"] for n in (1, 2, 3)]}


def test_a_response_dragged_to_the_top_is_ranked_first(page):
    ranking_campaign(prompts=1)
    page.goto("/work/rank/?worker=drag-1")
    before = shown_order(page)
    page.drag_and_drop(
        f".rank-item[data-field={before[2]}] .choice-label",
        f".rank-item[data-field={before[0]}] .choice-label",
        target_position={"x": 5, "y": 1},
    )
    expect(page.locator(".rank-item").first).to_have_attribute("data-field", before[2])
    page.get_by_role("button", name="Finish").click()
    expect(page.get_by_test_id("completion-code")).to_be_visible()
    item = Item.objects.get()
    ranks = Judgment.objects.get(item=item).payload["ranks"]
    places = {before[2]: 1, before[0]: 2, before[1]: 3}
    assert ranks == [places[f"rank_{n}"] for n in (1, 2, 3)]


def conversation_ranking_campaign():
    import json

    from annotation.campaigns import ConversationFiles

    rows = []
    for n in range(3):
        factories.system(None, slug=f"bot-{n}")
        # Long enough to overflow its card: the card scrolls, the page stays short.
        turns = [{"speaker": i % 2, "text": f"Line {i} of talk {'xyz'[n]}."} for i in range(40)]
        rows.append(
            {
                "id": f"talk-{n}",
                "domain": "persona",
                "speakers": ["human", f"bot-{n}"],
                "turns": turns,
            }
        )
    campaign = Campaign(
        task_kind="conversation_ranking",
        slug="rank-talks",
        title="Rank the conversations",
        instructions="Rank the three conversations from best to worst.",
        status="live",
        allow_worker_param=True,
        batch_size=1,
        redundancy=1,
    )
    data = "".join(json.dumps(row) + "\n" for row in rows).encode()
    create_campaign(campaign, ConversationFiles(data, "talks.jsonl"), gold_per_batch=0)
    return campaign


def test_participant_ranks_scrollable_conversations_by_keys_and_drag(page):
    conversation_ranking_campaign()
    page.goto("/work/rank-talks/?worker=talks-1")
    expect(page.locator(".rank-item .ranked-dialogue")).to_have_count(3)
    assert "bot-0" not in page.content()
    scrolls = page.eval_on_selector_all(
        ".ranked-dialogue", "lists => lists.map(l => l.scrollHeight > l.clientHeight)"
    )
    assert scrolls == [True, True, True]
    before = shown_order(page)
    page.locator(f".rank-item[data-field={before[1]}]").focus()
    page.keyboard.press("ArrowUp")
    page.drag_and_drop(
        f".rank-item[data-field={before[2]}] .choice-label",
        f".rank-item[data-field={before[1]}] .choice-label",
        target_position={"x": 5, "y": 1},
    )
    order = [before[2], before[1], before[0]]
    assert shown_order(page) == order
    page.get_by_role("button", name="Finish").click()
    expect(page.get_by_test_id("completion-code")).to_be_visible()
    places = {field: place for place, field in enumerate(order, 1)}
    judgment = Judgment.objects.get()
    assert judgment.payload == {"ranks": [places[f"rank_{n}"] for n in (1, 2, 3)]}
