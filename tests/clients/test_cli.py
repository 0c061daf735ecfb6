"""The `evalhub` command line (clients/python/src/evalhub_client/cli.py) through typer's
CliRunner, against the live server."""

import csv
import io
import stat

import pytest
from typer.testing import CliRunner

from annotation.models import Campaign
from evalhub.models import ApiToken, Submission
from evalhub_client import EvalHub
from evalhub_client.cli import app
from evalhub_client.config import config_path, read_config, write_config
from judging.models import JudgeRun
from tests import factories
from tests.analysis.builders import bare_tournament, stored_run
from tests.clients.builders import judge_run, judged_campaign

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def evalhub(live_server):
    """`evalhub(*args, user=...)`: the CLI as `user` (a new token in EVALHUB_TOKEN; None:
    no token), on the live server (EVALHUB_URL)."""
    runner = CliRunner()

    def run(*args, user=None, input=None):
        env = {"EVALHUB_URL": live_server.url}
        if user is not None:
            env["EVALHUB_TOKEN"] = factories.api_token(user)
        return runner.invoke(app, [str(a) for a in args], env=env, input=input)

    return run


def test_login_saves_a_token_only_its_user_may_read(evalhub, live_server):
    factories.user("ada", password="a-long-password-1")

    result = evalhub("login", "--url", live_server.url, input="ada\na-long-password-1\n")

    assert result.exit_code == 0, result.output
    saved = read_config()
    assert saved["url"] == live_server.url
    assert ApiToken.objects.get(user__username="ada").name == "evalhub CLI"
    assert stat.S_IMODE(config_path().stat().st_mode) == 0o600
    # The saved token is the one the next command sends.
    whoami = CliRunner().invoke(app, ["whoami"])
    assert whoami.exit_code == 0, whoami.output
    assert "evalhub CLI" in whoami.stdout


def test_login_does_not_send_the_token_it_replaces(evalhub, live_server):
    factories.user("ada", password="a-long-password-1")
    write_config(live_server.url, "revoked-long-ago")

    result = evalhub("login", "--username", "ada", "--password", "a-long-password-1")

    assert result.exit_code == 0, result.output
    assert read_config()["token"] != "revoked-long-ago"


def test_a_wrong_password_saves_nothing(evalhub, live_server):
    factories.user("ada", password="a-long-password-1")

    result = evalhub("login", "--url", live_server.url, "--username", "ada", "--password", "no")

    assert result.exit_code == 1
    assert "HTTP 400" in result.stderr
    assert not config_path().exists()


def test_whoami_signed_out_says_how_to_sign_in(evalhub):
    result = evalhub("whoami")

    assert result.exit_code == 1
    assert "HTTP 401" in result.stderr
    assert "evalhub login" in result.stderr


def test_submit_uploads_the_file_and_prints_its_metrics(evalhub, tmp_path):
    owner = factories.user()
    system = factories.system(owner)
    prompts = factories.prompt_set(2)
    responses = tmp_path / "responses.txt"
    responses.write_bytes(factories.txt("hi there", "hello"))

    result = evalhub("submit", system.slug, responses, "-p", prompts.slug, "--wait", user=owner)

    assert result.exit_code == 0, result.output
    submission = Submission.objects.get(system=system)
    assert f"Submission {submission.public_id}" in result.stdout
    assert submission.status == "scored"
    assert '"n_responses": 2' in result.stdout


def test_submit_of_a_wrong_file_prints_the_line_and_fails(evalhub, tmp_path):
    owner = factories.user()
    system = factories.system(owner)
    prompts = factories.prompt_set(2)
    responses = tmp_path / "responses.jsonl"
    responses.write_text('{"prompt": "1", "response": "hi"}\nnot json\n')

    result = evalhub("submit", system.slug, responses, "-p", prompts.slug, user=owner)

    assert result.exit_code == 1
    assert "line 2:" in result.stderr
    assert not Submission.objects.exists()


def test_results_writes_the_judgments_to_the_file(evalhub, tmp_path):
    owner = factories.user()
    made = judged_campaign(owner)
    target = tmp_path / "judgments.csv"

    result = evalhub("results", made.slug, "--out", target, user=owner)

    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(io.StringIO(target.read_text())))
    assert len(rows) == made.judgments.count() == 2
    assert list(tmp_path.iterdir()) == [target]


def test_results_of_a_campaign_one_may_not_see_leave_no_file(evalhub, tmp_path):
    made = judged_campaign(factories.user())
    target = tmp_path / "judgments.jsonl"

    result = evalhub(
        "results", made.slug, "--out", target, "--format", "jsonl", user=factories.user()
    )

    assert result.exit_code == 1
    assert "HTTP 404" in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_follow_shows_a_submission_to_its_end(evalhub):
    owner = factories.user()
    made = factories.submission(factories.system(owner), factories.prompt_set(2))

    result = evalhub("follow", "submission", made.public_id, "--interval", "0.1", user=owner)

    assert result.exit_code == 0, result.output
    assert f"submission {made.public_id}: scored" in result.stdout


def test_follow_shows_a_finished_campaigns_judgments(evalhub):
    owner = factories.user()
    made = judged_campaign(owner)
    Campaign.objects.filter(pk=made.pk).update(status="finished")

    result = evalhub("follow", "campaign", made.slug, user=owner)

    assert result.exit_code == 0, result.output
    assert "100%" in result.stdout
    assert f"campaign {made.slug}: finished" in result.stdout


def test_follow_gives_up_after_its_timeout(evalhub):
    owner = factories.user()
    made = judged_campaign(owner)  # live: it does not finish by itself

    result = evalhub(
        "follow", "campaign", made.slug, "--interval", "0.2", "--timeout", "1", user=owner
    )

    assert result.exit_code == 3
    assert "still live" in result.stderr


def test_follow_of_a_failed_judge_run_fails(evalhub, live_server):
    owner = factories.user(staff=True)
    with EvalHub(live_server.url, token=factories.api_token(owner)) as hub:
        run = judge_run(hub, owner)

    result = evalhub("follow", "judge-run", run.id, "--interval", "0.1", user=owner)

    assert result.exit_code == 1
    assert f"judge-run {run.id}: failed" in result.stdout
    assert JudgeRun.objects.get(pk=run.id).status == "failed"


def test_follow_shows_an_analysis_run_to_its_end(evalhub):
    owner = factories.user()
    run = stored_run(bare_tournament(owner))

    result = evalhub("follow", "analysis", run.id, user=owner)

    assert result.exit_code == 0, result.output
    assert f"analysis {run.id}: succeeded" in result.stdout


def test_follow_of_a_run_by_a_name_is_a_usage_error(evalhub):
    result = evalhub("follow", "judge-run", "not-a-number", user=factories.user())

    assert result.exit_code == 2
    assert "is a number" in result.output


def test_campaigns_list_and_progress(evalhub):
    owner = factories.user()
    made = judged_campaign(owner)

    listed = evalhub("campaigns", "list", user=owner)
    progress = evalhub("campaigns", "progress", made.slug, user=owner)

    assert listed.exit_code == 0, listed.output
    assert listed.stdout.split()[:2] == [made.slug, "live"]
    assert progress.exit_code == 0, progress.output
    assert '"judgments": 2' in progress.stdout


def test_a_launch_request_the_platform_refuses_prints_the_reason(evalhub):
    owner = factories.user()
    made = judged_campaign(owner)
    Campaign.objects.filter(pk=made.pk).update(status="draft")

    result = evalhub(
        "campaigns", "launch-request", made.slug, "--provider", "prolific", "--sandbox", user=owner
    )

    assert result.exit_code == 1
    assert "HTTP 400" in result.stderr
    assert Campaign.objects.get(pk=made.pk).status == "draft"
