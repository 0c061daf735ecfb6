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


def test_load_demo_prints_the_accounts_and_where_to_start_and_sends_no_email(
    capsys, mailoutbox, django_capture_on_commit_callbacks
):
    from evalhub.models import Notice

    with django_capture_on_commit_callbacks(execute=True):
        call_command("load_demo")

    out = capsys.readouterr().out
    assert "Researcher account: researcher / " in out and "Where to start" in out
    assert "/work/demo-ab/?worker=you" in out
    assert len(out.splitlines()) < 15
    # The demo's own events are told on the notices page, not by (console) email.
    assert mailoutbox == []
    assert Notice.objects.filter(user__username="admin").exists()


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


def test_a_second_load_keeps_the_passwords_and_demo_accounts_prints_them(client, capsys):
    from django.contrib.auth.models import User

    call_command("load_demo")
    first = capsys.readouterr().out
    password = first.split("admin / ")[1].split()[0]
    call_command("load_demo")
    assert f"admin / {password}" in capsys.readouterr().out
    assert client.login(username="admin", password=password)
    call_command("demo_accounts")
    printed = capsys.readouterr().out
    assert f"admin / {password}" in printed and "researcher / " in printed

    # A password its owner changed is kept by load_demo, and not printed as if still valid.
    researcher = User.objects.get(username="researcher")
    researcher.set_password("mine-now-123")
    researcher.save()
    call_command("load_demo")
    out = capsys.readouterr().out
    assert "researcher / (password changed since" in out
    assert User.objects.get(username="researcher").check_password("mine-now-123")

    call_command("demo_accounts", "--reset")
    out = capsys.readouterr().out
    reset = out.split("researcher / ")[1].split()[0]
    assert client.login(username="researcher", password=reset)
    assert not User.objects.get(username="researcher").check_password("mine-now-123")


def test_demo_accounts_before_any_demo_says_what_to_do():
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="load_demo"):
        call_command("demo_accounts")


def test_the_demo_arena_has_a_leaderboard(client):
    from arenas.demo import DEMO_BATTLES, DEMO_MODELS, DEMO_SLUG
    from arenas.models import Arena

    call_command("load_demo")
    call_command("load_demo")
    arena = Arena.objects.get(slug=DEMO_SLUG)
    assert arena.battles.count() == DEMO_BATTLES
    systems = [row["system"] for row in arena.leaderboard.result["systems"]]
    assert systems[0] == "sage-70b" and systems[-1] == "echo-1b"
    assert set(systems) == set(DEMO_MODELS)
    page = client.get(f"/arenas/{DEMO_SLUG}/")
    assert page.status_code == 200 and "sage-70b" in page.content.decode()
