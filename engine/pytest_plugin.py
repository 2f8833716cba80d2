"""The pytest plugin, loaded through the `pytest11` entry point whenever llm-scorers is
installed: score replies in tests and gate pull requests on them.

Fixtures:
- `scorers`: create scorers and assert on scores (`scorers.assert_score(...)`), with the
  judge chosen by `--scorers-model` (else SCORERS_MODEL, else each scorer's default) and the
  catalog by the `scorers_catalog` ini option (else the built-in one).
- `scorers_judge`: the scripted OpenAI-compatible judge server on 127.0.0.1, reset for the
  test, with the environment pointing the `openai` provider at it: a host project tests its
  own scorers offline. `scorers_judge_server` is the session's server itself.

Options: `--scorers-model PROVIDER/MODEL`, `--scorers-no-cache` (ask the judge again
instead of answering from the response cache).

Every pytest run of a project that has llm-scorers installed loads this module: the test
helpers and the loopback server are imported only when a test or an option uses them.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from .testing import JudgeServer
    from .testing.assertions import Scorers


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("scorers", "llm-scorers")
    group.addoption("--scorers-model", metavar="PROVIDER/MODEL", default=None, help="The judge of every scorer in the tests")
    group.addoption("--scorers-no-cache", action="store_true", default=False, help="Ask the judge again instead of using cached answers")
    parser.addini("scorers_catalog", "A host catalog YAML for the `scorers` fixture and assert_score (default: the built-in one)", default="")


def pytest_configure(config: pytest.Config) -> None:
    model = config.getoption("--scorers-model") or None
    catalog = str(config.getini("scorers_catalog") or "")
    no_cache = bool(config.getoption("--scorers-no-cache"))
    if model or catalog or no_cache:
        from .judge.settings import JudgeSettings
        from .testing.assertions import defaults

        defaults.judge = JudgeSettings(model=model)
        defaults.catalog = str(config.rootpath / catalog) if catalog else None
        defaults.cache = not no_cache


def pytest_report_header(config: pytest.Config) -> str | None:
    model = config.getoption("--scorers-model")
    return f"llm-scorers judge: {model}" if model else None


@pytest.fixture
def scorers() -> Scorers:
    """Create scorers and assert on their scores; see the module docstring."""
    from .testing.assertions import Scorers, catalog_of, defaults

    return Scorers(catalog_of(None), defaults.judge)


@pytest.fixture(scope="session")
def scorers_judge_server() -> Iterator[JudgeServer]:
    from .testing import JudgeServer

    server = JudgeServer().start()
    yield server
    server.stop()


@pytest.fixture
def scorers_judge(scorers_judge_server: JudgeServer, monkeypatch: pytest.MonkeyPatch) -> JudgeServer:
    """The scripted judge server, reset, with `openai/...` judges pointed at it (and no
    other judge configured), so a test scripts the answers and runs real scorers offline.
    Its answers are scripted per test, so none is served from the response cache."""
    from .judge import JudgeSettings, capabilities
    from .testing.assertions import defaults

    scorers_judge_server.reset()
    capabilities.forget()
    monkeypatch.setenv("OPENAI_BASE_URL", scorers_judge_server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-loopback")
    for name in ("SCORERS_MODEL", "SCORERS_MODE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(defaults, "judge", JudgeSettings())
    monkeypatch.setattr(defaults, "cache", False)
    return scorers_judge_server
