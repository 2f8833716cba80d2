"""The layout is the architecture: dependencies point one way, only the judge's client
talks to a provider, the command line starts without the SDKs, and the types check."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


def test_layers_and_the_provider_boundary_hold() -> None:
    checked = subprocess.run([str(BIN / "lint-imports")], cwd=ROOT, capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout[-3000:]
    assert "0 broken" in checked.stdout


def test_the_command_line_starts_without_importing_the_provider_sdk() -> None:
    probe = "import sys, engine.cli, engine.pytest_plugin; print(sorted({'openai', 'instructor', 'anthropic', 'opentelemetry'} & set(sys.modules)))"
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert loaded.stdout.strip() == "[]"


@pytest.mark.slow
def test_the_engine_type_checks_strictly() -> None:
    checked = subprocess.run([sys.executable, "-m", "mypy"], cwd=ROOT, capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout[-3000:]
