import pytest
from django.core.management import call_command

from evalhub.models import PromptSet, Response, Submission, System

pytestmark = pytest.mark.django_db


def counts():
    return (
        PromptSet.objects.count(),
        System.objects.count(),
        Submission.objects.count(),
        Response.objects.count(),
    )


def test_load_demo_is_idempotent_and_prints_the_staff_password(
    capsys, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        call_command("load_demo")
    first = counts()
    out = capsys.readouterr().out
    assert "Staff account:      admin / " in out
    call_command("load_demo")
    # 4 catalog systems and the simulated tournaments' systems; 8 submissions of 2 sets.
    assert counts() == first
    assert (first[0], first[2], first[3]) == (2, 8, 180)
    assert System.objects.filter(is_baseline=True).count() == 3
    assert Submission.objects.filter(status="scored").count() == 8


def test_demo_leaderboards_are_populated(client):
    from analysis.models import AnalysisRun
    from tournaments.models import Tournament

    call_command("load_demo")
    tournaments = Tournament.objects.filter(published=True)
    assert {t.kind for t in tournaments} == {"spot_the_bot", "ab"}
    for tournament in tournaments:
        assert AnalysisRun.objects.filter(tournament=tournament, status="succeeded").exists()
        assert client.get(f"/leaderboards/{tournament.slug}/").status_code == 200


def test_demo_staff_can_log_in_to_the_admin(client, capsys):
    call_command("load_demo")
    password = capsys.readouterr().out.split("admin / ")[1].split()[0]
    assert client.login(username="admin", password=password)
    assert client.get("/admin/").status_code == 200
    assert client.get("/admin/evalhub/promptset/upload/").status_code == 200
