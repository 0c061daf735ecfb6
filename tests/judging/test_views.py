"""The judges' pages: who sees and changes what, registering a judge with its own endpoint,
rubric versions, starting a run, the run page with its progress and failed answers, pause and resume."""

import pytest
from django.urls import reverse

from endpoints.models import BotEndpoint
from evalhub.models import System
from judging.models import AutomaticJudgment, Judge, JudgeRun, Rubric
from tests import factories
from tests.judging import builders, fake_judges

pytestmark = pytest.mark.django_db


@pytest.fixture
def owner(client):
    user = factories.user()
    client.force_login(user)
    return user


SECRET = "sk-judge-secret-4242"


def judge_form(**fields):
    data = {
        "slug": "gpt-judge",
        "name": "GPT judge",
        "url": "https://llm.example.org/v1",
        "model_name": "gpt-judge-1",
        "auth_token": SECRET,
        "temperature": "0",
        "timeout_seconds": "30",
        "max_concurrency": "3",
        "daily_budget": "400",
        "stop": "",
    }
    data.update(fields)
    return data


def test_a_researcher_registers_a_judge_with_its_own_endpoint(client, owner):
    response = client.post(reverse("judging:judge-create"), judge_form())
    judge = Judge.objects.get(slug="gpt-judge")
    assert response.status_code == 302 and response["Location"] == judge.get_absolute_url()
    endpoint = judge.endpoint
    assert (judge.owner, endpoint.owner, endpoint.system, endpoint.name) == (
        owner,
        owner,
        None,
        "GPT judge",
    )
    assert (endpoint.protocol, endpoint.model_name, endpoint.auth_token) == (
        "openai",
        "gpt-judge-1",
        SECRET,
    )
    assert (endpoint.max_concurrency, endpoint.daily_budget) == (3, 400)
    assert not System.objects.exists()


def test_the_registration_form_asks_for_no_system(client, owner):
    page = client.get(reverse("judging:judge-create")).content.decode()
    assert 'name="url"' in page and 'name="model_name"' in page
    assert 'name="endpoint"' not in page and 'name="system_prompt"' not in page


def test_a_judge_needs_the_model_name_and_nothing_is_half_saved(client, owner):
    response = client.post(reverse("judging:judge-create"), judge_form(model_name=""))
    assert response.status_code == 400
    assert "This field is required." in response.content.decode()
    assert not Judge.objects.exists() and not BotEndpoint.objects.exists()


def test_a_judge_slug_may_not_hide_a_page(client, owner):
    response = client.post(reverse("judging:judge-create"), judge_form(slug="rubrics"))
    assert response.status_code == 400 and "names a page of the judges" in response.content.decode()
    assert not Judge.objects.exists() and not BotEndpoint.objects.exists()


def test_registering_on_a_refused_address_warns_at_once(client, owner, settings):
    settings.EVALHUB_OUTBOUND_ALLOW = []
    response = client.post(
        reverse("judging:judge-create"), judge_form(url="http://127.0.0.1:8111/v1"), follow=True
    )
    assert Judge.objects.filter(slug="gpt-judge").exists()
    assert "will refuse to call 127.0.0.1:8111" in response.content.decode()


def test_a_judge_never_appears_among_the_systems(client, owner):
    client.post(reverse("judging:judge-create"), judge_form(), follow=True)  # its flash read
    page = client.get(reverse("system-list")).content.decode()
    assert "GPT judge" not in page and "gpt-judge-1" not in page


def test_a_judge_is_private_to_its_owner_and_staff(client):
    judge = builders.judge(None)
    client.force_login(factories.user())
    assert client.get(judge.get_absolute_url()).status_code == 404
    assert judge.name not in client.get(reverse("judging:judge-list")).content.decode()
    client.force_login(factories.user(staff=True))
    assert client.get(judge.get_absolute_url()).status_code == 200
    client.logout()
    assert client.get(judge.get_absolute_url()).status_code == 302


def test_starting_a_run_queues_it_and_judges_the_campaign(
    client, fake, django_capture_on_commit_callbacks
):
    server = fake(fake_judges.answers({"better": "1"}))
    judge = builders.judge(server)
    client.force_login(judge.owner)
    campaign = builders.ab(2, owner=judge.owner)
    rubric = builders.default_rubric("ab")
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            judge.get_absolute_url(),
            {"campaign": campaign.pk, "rubric": rubric.pk, "concurrency": 2, "max_attempts": 3},
        )
    run = JudgeRun.objects.get()
    assert response.status_code == 302 and response["Location"] == run.get_absolute_url()
    # Celery is eager in the tests: the run went through when it was queued.
    assert (run.status, run.items_done, run.campaign, run.rubric) == ("done", 2, campaign, rubric)


@pytest.mark.django_db(transaction=True)
def test_a_run_that_finished_as_it_was_queued_says_so(client, fake):
    # Without a broker the run goes through inside the click: the page says how it ended,
    # not "queued" above a full progress bar.
    server = fake(fake_judges.answers({"better": "1"}))
    judge = builders.judge(server)
    client.force_login(judge.owner)
    campaign = builders.ab(2, owner=judge.owner)
    rubric = builders.default_rubric("ab")

    response = client.post(
        judge.get_absolute_url(),
        {"campaign": campaign.pk, "rubric": rubric.pk, "concurrency": 2, "max_attempts": 3},
        follow=True,
    )

    page = response.content.decode()
    assert JudgeRun.objects.get().status == "done"
    assert "The run finished: 2 judged, 0 failed." in page and "is queued" not in page


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"concurrency": 17}, "Ensure this value is less than or equal to 16."),
        ({"max_attempts": 0}, "Ensure this value is greater than or equal to 1."),
        ({"rubric": "likert"}, "The rubric is for Likert ratings"),
        ({"campaign": "other"}, "Select a valid choice"),
    ],
)
def test_a_run_with_a_wrong_setting_is_not_started(client, change, message):
    judge = builders.judge(None)
    client.force_login(judge.owner)
    campaign = builders.ab(1, owner=judge.owner)
    data = {
        "campaign": campaign.pk,
        "rubric": builders.default_rubric("ab").pk,
        "concurrency": 2,
        "max_attempts": 3,
    }
    data.update(change)
    if change.get("rubric") == "likert":
        data["rubric"] = builders.default_rubric("likert").pk
    if change.get("campaign") == "other":
        data["campaign"] = builders.ab(1, owner=factories.user()).pk
    response = client.post(judge.get_absolute_url(), data)
    assert response.status_code == 400 and message in response.content.decode()
    assert not JudgeRun.objects.exists()


def make_run(judge, campaign, **fields):
    return JudgeRun.objects.create(
        judge=judge, rubric=builders.default_rubric("ab"), campaign=campaign, **fields
    )


def test_the_run_page_shows_progress_and_failed_answers_with_their_raw_text(client):
    judge = builders.judge(None)
    client.force_login(judge.owner)
    campaign = builders.ab(4, owner=judge.owner)
    run = make_run(
        judge,
        campaign,
        status="running",
        items_total=4,
        items_done=1,
        items_failed=1,
        prompt_tokens=300,
        completion_tokens=20,
    )
    first, second = campaign.items.order_by("position")[:2]
    AutomaticJudgment.objects.create(run=run, item=first, status="ok", payload={"choice": "a"})
    AutomaticJudgment.objects.create(
        run=run,
        item=second,
        status="failed",
        raw_text="I cannot decide <b>",
        error="no JSON",
        attempts=3,
    )
    response = client.get(run.get_absolute_url())
    page = response.content.decode()
    assert response.status_code == 200
    assert '<progress max="100" value="50"' in page and "judge_progress.js" in page
    assert "I cannot decide &lt;b&gt;" in page and "no JSON" in page
    assert "{&quot;choice&quot;: &quot;a&quot;}" in page
    assert "<script>" not in page  # no inline script (CSP)
    failed_only = client.get(run.get_absolute_url() + "?status=failed").content.decode()
    assert "I cannot decide" in failed_only and "&quot;choice&quot;" not in failed_only


def test_the_run_page_shows_the_judges_latest_endpoint_errors(client):
    from endpoints.calls import record

    judge = builders.judge(None)
    client.force_login(judge.owner)
    run = make_run(judge, builders.ab(2), status="running", items_total=2)
    record(judge.endpoint_id, purpose="judge", status="http_error", http_status=429, latency_ms=5)

    page = client.get(run.get_absolute_url()).content.decode()

    [section] = page.split('id="endpoint-errors">')[1:]
    assert "HTTP error" in section and "1×" in section


def test_the_progress_json_has_the_counters(client):
    judge = builders.judge(None)
    client.force_login(judge.owner)
    run = make_run(judge, builders.ab(2), status="running", items_total=2, items_done=1)
    data = client.get(reverse("judging:run-progress", args=[run.pk])).json()
    assert data["status"] == "running" and data["percent"] == 50
    assert (data["items_done"], data["items_total"], data["requests_today"]) == (1, 2, 0)
    client.force_login(factories.user())
    assert client.get(reverse("judging:run-progress", args=[run.pk])).status_code == 404


def test_pause_and_resume_from_the_run_page(client, django_capture_on_commit_callbacks):
    judge = builders.judge(None)
    client.force_login(judge.owner)
    run = make_run(judge, builders.ab(2), status="running")
    client.post(reverse("judging:run-pause", args=[run.pk]))
    run.refresh_from_db()
    assert run.status == "paused"
    with django_capture_on_commit_callbacks() as callbacks:
        client.post(reverse("judging:run-resume", args=[run.pk]))
    run.refresh_from_db()
    assert run.status == "queued" and len(callbacks) == 1  # the run is sent after the commit


def test_a_stranger_cannot_pause_a_run(client):
    judge = builders.judge(None)
    run = make_run(judge, builders.ab(1), status="running")
    client.force_login(factories.user())
    assert client.post(reverse("judging:run-pause", args=[run.pk])).status_code == 404
    run.refresh_from_db()
    assert run.status == "running"


def test_a_researcher_writes_a_rubric_and_the_next_version_under_its_name(client, owner):
    text = "Judge $context: $response_1 or $response_2?\n$answer_format"
    data = {"task_kind": "ab", "name": "terse", "instructions": text}
    client.post(reverse("judging:rubric-create"), data)
    client.post(reverse("judging:rubric-create"), {**data, "instructions": text + " Be fair."})
    versions = list(Rubric.objects.filter(name="terse").order_by("version"))
    assert [(r.version, r.owner) for r in versions] == [(1, owner), (2, owner)]


def test_a_rubric_with_an_unknown_placeholder_is_refused(client, owner):
    data = {"task_kind": "ab", "name": "bad", "instructions": "$contxt $answer_format"}
    response = client.post(reverse("judging:rubric-create"), data)
    assert (
        response.status_code == 400 and "Unknown placeholder $contxt" in response.content.decode()
    )
    assert not Rubric.objects.filter(name="bad").exists()


def test_editing_a_used_rubric_saves_a_new_version(client):
    judge = builders.judge(None)
    staff = factories.user(staff=True)
    client.force_login(staff)
    rubric = builders.default_rubric("ab")
    make_run(judge, builders.ab(1))
    new_text = rubric.instructions + "\nThink step by step, then answer."
    response = client.post(
        reverse("judging:rubric-detail", args=[rubric.pk]), {"instructions": new_text}
    )
    latest = Rubric.objects.filter(task_kind="ab", name="default").latest("version")
    assert response.status_code == 302 and latest.version == rubric.version + 1
    assert latest.instructions == new_text
    rubric.refresh_from_db()
    assert "step by step" not in rubric.instructions


def test_only_the_author_or_staff_revise_a_rubric(client, owner):
    rubric = builders.default_rubric("ab")
    response = client.post(
        reverse("judging:rubric-detail", args=[rubric.pk]), {"instructions": "x"}
    )
    assert response.status_code == 403
    assert Rubric.objects.filter(task_kind="ab", name="default").count() == 1


def judged_both_ways(judge):
    """A run of four items: two asked with structured output (one after an unparsed reply),
    one with the prompt after two unparsed replies, one failed with three."""
    campaign = builders.ab(4, owner=judge.owner)
    run = make_run(judge, campaign, status="done", items_total=4, items_done=3, items_failed=1)
    rows = [
        ("ok", "structured", 1, 0),
        ("ok", "structured", 2, 1),
        ("ok", "prompt", 3, 2),
        ("failed", "prompt", 3, 3),
    ]
    for item, (status, path, attempts, failures) in zip(campaign.items.all(), rows, strict=False):
        AutomaticJudgment.objects.create(
            run=run,
            item=item,
            status=status,
            output_path=path,
            attempts=attempts,
            parse_failures=failures,
        )
    return run


def test_the_run_page_counts_the_paths_and_the_replies_that_did_not_parse(client):
    judge = builders.judge(None)
    client.force_login(judge.owner)
    run = judged_both_ways(judge)
    page = client.get(run.get_absolute_url()).content.decode()
    [summary] = page.split('id="output-paths">')[1:]
    summary = summary.split("</table>")[0]
    assert "structured output: 2" in summary and "prompt and re-ask: 2" in summary
    assert "6 of 9 (66.7%)" in summary  # unparsed replies of all replies received
    assert "(2 not parsed)" in page


def test_the_judge_page_says_which_path_each_run_took(client, django_assert_max_num_queries):
    judge = builders.judge(None, structured_output="off")
    client.force_login(judge.owner)
    run = judged_both_ways(judge)
    queued_run = make_run(judge, builders.ab(1, owner=judge.owner), status="queued")
    with django_assert_max_num_queries(12):
        response = client.get(judge.get_absolute_url())
    page = response.content.decode()
    assert response.status_code == 200
    assert "Structured output: Never ask" in page
    rows = page.split('<table class="judge-runs">')[1].split("</table>")[0].split("<tr>")
    [done] = [row for row in rows if f">#{run.pk}<" in row]
    [queued] = [row for row in rows if f">#{queued_run.pk}<" in row]
    assert "structured output: 2 · prompt and re-ask: 2" in done and "6 of 9 (66.7%)" in done
    assert queued.count('<td class="output-paths">-</td>') == 1
