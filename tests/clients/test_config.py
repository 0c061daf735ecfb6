"""Where the client finds the server and the token (clients/python/src/evalhub_client/
config.py): what is passed, then the environment, then the config file."""

import pytest

from evalhub_client import EvalHub
from evalhub_client.config import DEFAULT_URL, ConfigError, config_path, resolve, write_config


def test_without_anything_the_server_is_make_runs_and_no_token_is_sent():
    assert resolve() == resolve(None, None)
    assert (resolve().url, resolve().token) == (DEFAULT_URL, None)


def test_the_config_file_is_read_after_the_environment(monkeypatch):
    write_config("http://saved.test", "saved-token")
    assert (resolve().url, resolve().token) == ("http://saved.test", "saved-token")

    monkeypatch.setenv("EVALHUB_URL", "http://env.test")
    monkeypatch.setenv("EVALHUB_TOKEN", "env-token")
    assert (resolve().url, resolve().token) == ("http://env.test", "env-token")
    assert resolve("http://given.test", "given").token == "given"


def test_an_empty_token_is_no_token_whatever_is_saved(monkeypatch):
    write_config("http://saved.test", "saved-token")
    monkeypatch.setenv("EVALHUB_TOKEN", "env-token")

    assert resolve(token="").token is None


def test_a_token_with_quotes_and_backslashes_reads_back_unchanged():
    write_config("http://saved.test", 'a"b\\c\u00e9')

    assert resolve().token == 'a"b\\c\u00e9'


def test_the_file_lives_under_xdg_config_home_without_evalhub_config(monkeypatch, tmp_path):
    monkeypatch.delenv("EVALHUB_CONFIG")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))

    assert config_path() == tmp_path / "xdg" / "evalhub" / "config.toml"


def test_a_broken_file_is_a_clear_error():
    config_path().parent.mkdir(parents=True)
    config_path().write_text("token = [not toml")

    with pytest.raises(ConfigError, match="not valid TOML"):
        resolve()


def test_a_token_that_is_not_a_string_is_refused():
    config_path().parent.mkdir(parents=True)
    config_path().write_text("token = 12\n")

    with pytest.raises(ConfigError, match="token must be a string"):
        resolve()


@pytest.mark.parametrize(
    "options",
    [{"retries": -1}, {"retries": 11}, {"timeout": 0}, {"backoff": 61}],
    ids=str,
)
def test_numbers_out_of_their_range_are_refused(options):
    with pytest.raises(ValueError):
        EvalHub("http://evalhub.test", token="t", **options)
