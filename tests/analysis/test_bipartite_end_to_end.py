"""The bipartite-play experiment end to end, as a researcher runs it: a judged bipartite-play
tournament, an automatic judge on a local fake OpenAI-compatible server started on its
campaign through the judging app's own machinery, the comparison requested from the
campaign's human-versus-automatic page, and the tournament page showing the targets ranked
by the humans and by the judge."""

import pytest
from django.urls import reverse

from analysis.models import AnalysisRun
from judging import execution, runs, sending
from tests import factories
from tests.analysis.judge_builders import bipartite_tournament
from tests.endpoints import openai_fake
from tests.judging import builders as judging_builders
from tests.judging import fake_judges

pytestmark = pytest.mark.django_db

ANSWER = {
    "speakers": {"Speaker 1": "bot", "Speaker 2": "human"},
    "better": {"sensibleness": "Speaker 2", "specificity": "none", "fluency": "none"},
}


@pytest.fixture
def fake_judge():
    with openai_fake.FakePool() as pool:
        yield pool.start(fake_judges.answers(ANSWER))


def test_a_bipartite_tournament_is_judged_automatically_and_compared(
    client, fake_judge, monkeypatch, django_capture_on_commit_callbacks
):
    ada = factories.user("ada")
    tournament = bipartite_tournament(owner=ada)
    campaign = tournament.campaign
    judge = judging_builders.judge(fake_judge, owner=ada)
    rubric = judging_builders.default_rubric("spot_the_bot")
    monkeypatch.setattr(sending, "send", lambda run: True)  # this test is the worker
    judge_run = runs.start(ada, judge, rubric, campaign)
    assert execution.execute(judge_run.pk) == "done"
    judge_run.refresh_from_db()
    assert judge_run.items_failed == 0 and judge_run.items_done == judge_run.items_total > 0

    client.force_login(ada)
    page = client.get(tournament.get_absolute_url()).content.decode()
    versus = reverse("results:versus", args=[campaign.slug])
    assert f'href="{versus}" id="versus-link"' in page
    with django_capture_on_commit_callbacks(execute=True):
        client.post(
            reverse("results:versus-compare", args=[campaign.slug]), {"judge_run": judge_run.pk}
        )
    comparison = AnalysisRun.objects.get(judge_run=judge_run)
    assert comparison.status == AnalysisRun.Status.SUCCEEDED, comparison.error
    result = comparison.result
    assert result["automatic_judgments"] == judge_run.items_done
    assert sorted(result["systems"]) == ["t-middle", "t-strong", "t-weak"]
    label = result["dimensions"][0]
    assert label["dimension"] == "label" and label["correlation"]["systems"] == 3
    # The judge called every first speaker a bot and every second a human.
    assert label["agreement"]["units"] == 2 * judge_run.items_done

    page = client.get(tournament.get_absolute_url()).content.decode()
    summary = page[page.index('id="versus-summary"') :].split("</tbody>")[0]
    for target in ("t-strong", "t-middle", "t-weak"):
        assert f"<td>{target}</td>" in summary
    assert "<td>partner-one</td>" not in summary
    assert "Spearman's rho" in summary
