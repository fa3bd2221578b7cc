"""Shared fixtures: a scratch working directory, short-run overrides, and scenario/trace writers."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Callable

import pytest
from typer.testing import CliRunner

from ccscope import api

# Most tests need only 10 simulated seconds of the contest link (a few milliseconds of wall time).
SHORT = {"duration_s": 10}

# A one-flow scenario on constant-rate links: no trace files needed.
CONSTANT_RATE_TOML = """\
name = "tiny"
seed = 1
duration_s = 5

[data_link]
rate_mbps = 12
delay_ms = 20

[ack_link]
rate_mbps = 12
delay_ms = 20

[[flows]]
controller = "fixed"
window = 12
"""


@pytest.fixture
def tmp_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Run the test inside an empty temporary directory (so relative paths cannot reach the repo)."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def short() -> dict:
    return dict(SHORT)


@pytest.fixture
def contest_toml() -> str:
    """The text of the embedded contest scenario (examples/datagrump.toml)."""
    return (api.EXAMPLES_DIR / "datagrump.toml").read_text()


@pytest.fixture
def write(tmp_path: Path) -> Callable[[str, str], Path]:
    """Write a text file under tmp_path and return its path."""

    def _write(name: str, text: str) -> Path:
        p = tmp_path / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
        return p

    return _write


@pytest.fixture
def cli_runner() -> CliRunner:
    """A CLI runner that keeps stderr apart (Click < 8.2 mixes it in unless told not to)."""
    if "mix_stderr" in inspect.signature(CliRunner.__init__).parameters:
        return CliRunner(mix_stderr=False)
    return CliRunner()
