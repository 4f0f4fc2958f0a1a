"""``deltaport recipient create|rotate`` run as a provider runs them (a subprocess): a
command that cannot finish changes nothing, and a rotation keeps where the recipient's
profiles point and how long its tokens live."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import yaml

from deltaport.catalog.live.live_catalog import LiveCatalog
from deltaport.catalog.sql_store import SqlCatalog
from deltaport.cli import main as cli

ENDPOINT = "https://sharing.example.com/delta-sharing"


def deltaport(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DELTAPORT_")}
    return subprocess.run(
        [sys.executable, "-m", "deltaport.cli", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )


def _expires_in(profile: Path) -> timedelta | None:
    written = json.loads(profile.read_text())
    if "expirationTime" not in written:
        return None
    stamp = datetime.fromisoformat(written["expirationTime"].replace("Z", "+00:00"))
    return stamp - datetime.now(UTC)


@pytest.fixture
def catalog(tmp_path: Path) -> str:
    """A catalog with recipient acme (90-day tokens, profiles at ENDPOINT)."""
    url = f"sqlite:///{tmp_path}/catalog.db"
    assert cli(["catalog", "init", "--catalog", url]) == 0
    first = ["-o", str(tmp_path / "acme1.share"), "--endpoint", ENDPOINT, "--catalog", url]
    assert cli(["recipient", "create", "acme", "--expires", "90d", *first]) == 0
    return url


def _unloadable_config(tmp_path: Path) -> list[str]:
    """A configuration whose signing key names an environment variable that is not set."""
    path = tmp_path / "server.yaml"
    path.write_text(yaml.safe_dump({"signingKey": "${DELTAPORT_SIGNING_KEY}"}))
    return ["--config", str(path)]


FAILURES = {
    "configuration": (
        _unloadable_config,
        "signingKey: environment variable DELTAPORT_SIGNING_KEY is not set",
    ),
    "output directory": (
        lambda tmp: ["-o", str(tmp / "missing" / "new.share")],
        "cannot write the profile to",
    ),
    "output taken": (
        lambda tmp: ["-o", str(tmp / "acme1.share")],
        "exists already; the profile is never overwritten",
    ),
    "endpoint": (
        lambda tmp: ["--endpoint", "ftp://sharing.example.com/x"],
        "the endpoint is not an http(s) URL",
    ),
    "endpoint port out of range": (
        lambda tmp: ["--endpoint", "http://127.0.0.1:99999/delta-sharing"],
        "the endpoint is not an http(s) URL with a valid port (1-65535): "
        "'http://127.0.0.1:99999/delta-sharing'",
    ),
    "endpoint port not a number": (
        lambda tmp: ["--endpoint", "http://host:abc/x"],
        "the endpoint is not an http(s) URL with a valid port (1-65535): 'http://host:abc/x'",
    ),
}


@pytest.mark.parametrize("failure", FAILURES)
@pytest.mark.parametrize(
    "command", [["recipient", "rotate", "acme", "--now"], ["recipient", "create", "beta"]]
)
def test_a_command_that_cannot_finish_changes_nothing(
    catalog: str, tmp_path: Path, command: list[str], failure: str
) -> None:
    arguments, message = FAILURES[failure]
    extra = arguments(tmp_path)
    if "-o" not in extra:
        extra = [*extra, "-o", str(tmp_path / "new.share")]
    first = json.loads((tmp_path / "acme1.share").read_text())
    before = SqlCatalog(catalog).contents()
    answer = deltaport(*command, *extra, "--catalog", catalog)
    assert answer.returncode == 1
    assert message in answer.stderr
    assert "Traceback" not in answer.stderr
    after = SqlCatalog(catalog).contents()
    assert (after.generation, after.tokens, after.recipients) == (
        before.generation,
        before.tokens,
        before.recipients,
    )
    assert not (tmp_path / "new.share").exists()
    assert not (tmp_path / "missing").exists()
    live = LiveCatalog(SqlCatalog(catalog), lambda location: {}, poll_seconds=0)
    assert live.authenticate(f"Bearer {first['bearerToken']}").name == "acme"


def test_a_rotation_keeps_the_endpoint_and_the_lifetime(catalog: str, tmp_path: Path) -> None:
    other_server = tmp_path / "server.yaml"
    other_server.write_text(yaml.safe_dump({"publicUrl": "https://elsewhere.example.com"}))
    rotated = deltaport(
        "recipient", "rotate", "acme", "-o", str(tmp_path / "acme2.share"), "--catalog", catalog
    )
    assert rotated.returncode == 0, rotated.stderr
    assert "(the token expires " in rotated.stdout and "never" not in rotated.stdout
    second = json.loads((tmp_path / "acme2.share").read_text())
    assert second["endpoint"] == ENDPOINT
    lifetime = _expires_in(tmp_path / "acme2.share")
    assert lifetime is not None and timedelta(days=89) < lifetime <= timedelta(days=90)

    # a configuration naming another server does not move the recipient either
    args = ["-o", str(tmp_path / "acme3.share"), "--config", str(other_server)]
    moved_not = deltaport("recipient", "rotate", "acme", *args, "--catalog", catalog)
    assert moved_not.returncode == 0, moved_not.stderr
    assert json.loads((tmp_path / "acme3.share").read_text())["endpoint"] == ENDPOINT

    # told otherwise, the new token and the recipient's next ones follow
    told = ["--expires", "never", "--endpoint", "https://new.example.com/sharing/"]
    changed = deltaport(
        "recipient", "rotate", "acme", *told, "-o", str(tmp_path / "acme4.share"),
        "--catalog", catalog,
    )  # fmt: skip
    assert changed.returncode == 0, changed.stderr
    assert "(the token does not expire)" in changed.stdout
    kept = deltaport(
        "recipient", "rotate", "acme", "-o", str(tmp_path / "acme5.share"), "--catalog", catalog
    )
    assert kept.returncode == 0, kept.stderr
    for name in ("acme4.share", "acme5.share"):
        assert json.loads((tmp_path / name).read_text())["endpoint"] == (
            "https://new.example.com/sharing"
        )
        assert _expires_in(tmp_path / name) is None
    listed = deltaport("recipient", "list", "--catalog", catalog)
    # the four older tokens end after the default grace hour, the newest does not expire
    assert "acme: no shares; 5 tokens: one expires " in listed.stdout
    assert ", one does not expire; new tokens do not expire" in listed.stdout


def test_a_new_recipient_points_where_the_configuration_says(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/catalog.db"
    assert cli(["catalog", "init", "--catalog", url]) == 0
    config = tmp_path / "server.yaml"
    config.write_text(yaml.safe_dump({"publicUrl": "https://cfg.example.com:8443"}))
    profile = tmp_path / "beta.share"
    args = ["-o", str(profile), "--config", str(config), "--catalog", url]
    assert deltaport("recipient", "create", "beta", *args).returncode == 0
    assert json.loads(profile.read_text())["endpoint"] == (
        "https://cfg.example.com:8443/delta-sharing"
    )
    rotated = tmp_path / "beta2.share"
    assert deltaport("recipient", "rotate", "beta", "-o", str(rotated), "--catalog", url).stdout
    assert json.loads(rotated.read_text())["endpoint"] == (
        "https://cfg.example.com:8443/delta-sharing"
    )
