"""Where the client finds the server and the token.

In order: what the caller passes; the environment (EVALHUB_URL, EVALHUB_TOKEN); the config
file (EVALHUB_CONFIG, or ~/.config/evalhub/config.toml under XDG_CONFIG_HOME), written by
`evalhub login`:

    url = "http://127.0.0.1:8000"
    token = "..."
"""

from __future__ import annotations

import json
import os
import tomllib
from dataclasses import dataclass
from pathlib import Path

DEFAULT_URL = "http://127.0.0.1:8000"


class ConfigError(Exception):
    """The config file exists but cannot be read as the client writes it."""


def config_path() -> Path:
    explicit = os.environ.get("EVALHUB_CONFIG")
    if explicit:
        return Path(explicit).expanduser()
    base = os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config"
    return Path(base) / "evalhub" / "config.toml"


def read_config(path: Path | None = None) -> dict[str, str]:
    path = path or config_path()
    if not path.exists():
        return {}
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path} is not valid TOML: {exc}") from exc
    found = {}
    for key in ("url", "token"):
        value = data.get(key)
        if value is None:
            continue
        if not isinstance(value, str):
            raise ConfigError(f"{path}: {key} must be a string")
        found[key] = value
    return found


def write_config(url: str, token: str, path: Path | None = None) -> Path:
    """Saves the server and the token, readable by the user alone (it is a password)."""
    path = path or config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    # json.dumps writes a string TOML reads back unchanged: both know \", \\ and \uXXXX.
    text = f"url = {json.dumps(url)}\ntoken = {json.dumps(token)}\n"
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.chmod(path, 0o600)  # an older file keeps its mode through O_CREAT
    return path


@dataclass(frozen=True)
class Settings:
    url: str
    token: str | None


def resolve(url: str | None = None, token: str | None = None) -> Settings:
    """The server and token to use, from the first place that names each. A token of ""
    is no token, whatever the environment or the file say: signing in must not send a
    saved token that may have expired (the API refuses a request with a bad one)."""
    saved = read_config()
    if token is None:
        token = os.environ.get("EVALHUB_TOKEN") or saved.get("token")
    return Settings(
        url=url or os.environ.get("EVALHUB_URL") or saved.get("url") or DEFAULT_URL,
        token=token or None,
    )
