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
instead of answering from the response cache), `--scorers-max-cost USD` (a budget for the
whole test session: every judge call of the scorers the plugin makes goes through one spend
limit, and a test whose call would pass it fails with `BudgetReached`; under pytest-xdist each
worker holds an equal share, so the session in all stays within it).

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
    group.addoption(
        "--scorers-max-cost", metavar="USD", type=float, default=None,
        help="A budget for the whole session: a test whose judge call would take the spend past it fails",
    )
    parser.addini("scorers_catalog", "A host catalog YAML for the `scorers` fixture and assert_score (default: the built-in one)", default="")


def pytest_configure(config: pytest.Config) -> None:
    model = config.getoption("--scorers-model") or None
    catalog = str(config.getini("scorers_catalog") or "")
    no_cache = bool(config.getoption("--scorers-no-cache"))
    max_cost: float | None = config.getoption("--scorers-max-cost")
    if max_cost is not None and not max_cost > 0:
        raise pytest.UsageError(f"--scorers-max-cost must be a positive number of US dollars, got {max_cost:g}")
    if model or catalog or no_cache:
        from .judge.settings import JudgeSettings
        from .testing.assertions import defaults

        defaults.judge = JudgeSettings(model=model)
        defaults.catalog = str(config.rootpath / catalog) if catalog else None
        defaults.cache = not no_cache
    if max_cost is not None:
        from .judge.middleware.budget import SpendLimit
        from .testing.assertions import defaults

        # Each pytest-xdist worker is a process of its own: an equal share each keeps the session within the budget.
        # (A worker's config carries its `workerinput`; the environment would also reach a pytest this session starts.)
        workers = int(getattr(config, "workerinput", {}).get("workercount", 1))
        named = "--scorers-max-cost" if workers == 1 else f"--scorers-max-cost ${max_cost:g} shared by {workers} pytest-xdist workers"
        defaults.spend_limit = SpendLimit(max_cost / workers, named=named)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """What the session's judge calls spent of its budget, where a run's spend is looked for."""
    if terminalreporter.config.getoption("--scorers-max-cost") is None:
        return
    from .testing.assertions import defaults

    limit = defaults.spend_limit
    if limit is None or terminalreporter.config.pluginmanager.getplugin("dsession") is not None:  # pytest-xdist's controller asks no judge
        return
    refused = f"; {limit.refused} judge call(s) refused: the budget was reached" if limit.refused else ""
    terminalreporter.write_line(f"llm-scorers: ${limit.total:.4f} spent of the ${limit.max_cost:g} budget ({limit.named}){refused}")


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
