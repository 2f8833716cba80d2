from __future__ import annotations

import os
import subprocess
from pathlib import Path
from collections.abc import Iterator
from typing import Any

import pytest
from helpers.chromium import launched_chromium

from engine.judge import capabilities
from engine.judge.middleware.cache import close_open_caches
from engine.testing import AnthropicServer, JudgeServer
from engine.testing.postgres import PostgresCluster, postgres_binaries


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto`: one worker more than the machine has cores. Many tests wait on processes,
    servers and browsers they started; with one worker a core, a 2-core CI run kept its CPU
    busy only about 70% of the time. Four workers on 2 cores ran the suite in 585 to 636 s
    against 631 s with three: the run is now bound by its CPU, not by waiting."""
    return (os.cpu_count() or 1) + 1


# A pytest-xdist worker starts with COLUMNS=80 and LINES=24 in its environment; the CLI's
# consoles, made when engine.cli is first imported, would keep that width for good and ignore
# the COLUMNS a test gives one invocation. Each worker sees the environment a plain run sees.
if os.environ.get("PYTEST_XDIST_WORKER"):
    os.environ.pop("COLUMNS", None)
    os.environ.pop("LINES", None)


@pytest.fixture(scope="session")
def judge_server() -> Iterator[JudgeServer]:
    server = JudgeServer().start()
    yield server
    server.stop()


@pytest.fixture
def judge(judge_server: JudgeServer, monkeypatch: pytest.MonkeyPatch) -> JudgeServer:
    """A scripted OpenAI-compatible server, reset for this test; the environment points the
    `openai` provider at it exactly as a user would point it at vLLM or llama.cpp's server."""
    judge_server.reset()
    capabilities.forget()
    monkeypatch.setenv("OPENAI_BASE_URL", judge_server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-secret-key-123")
    for name in ("SCORERS_MODEL", "SCORERS_MODE"):
        monkeypatch.delenv(name, raising=False)
    return judge_server


@pytest.fixture(scope="session")
def anthropic_server() -> Iterator[AnthropicServer]:
    server = AnthropicServer().start()
    yield server
    server.stop()


@pytest.fixture
def claude(anthropic_server: AnthropicServer, monkeypatch: pytest.MonkeyPatch) -> AnthropicServer:
    """A scripted Anthropic Messages server, reset for this test, reached through
    ANTHROPIC_BASE_URL as a user would reach a proxy."""
    anthropic_server.reset()
    capabilities.forget()
    monkeypatch.setenv("ANTHROPIC_BASE_URL", anthropic_server.base_url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-secret-456")
    return anthropic_server


@pytest.fixture(autouse=True)
def _no_ambient_judge(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Tests never reach a judge configured on the developer's machine, nor its response
    cache, price file, records of checked catalogs or the workbench's drafts: each test gets a
    cache of its own."""
    from engine.judge import PROVIDERS

    variables = {"SCORERS_MODEL", "SCORERS_MODE", "SCORERS_PRICES", *(name for provider in PROVIDERS.values() for name in provider.variables())}
    for name in variables:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("SCORERS_CACHE", str(tmp_path_factory.mktemp("cache") / "responses.sqlite"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.mktemp("config")))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("user-cache")))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path_factory.mktemp("user-data")))


@pytest.fixture(autouse=True)
def _builtin_catalog_compiled(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    """In this process the built-in catalog is compiled and proved when checked, as an
    author's catalog is: the proof of it that the package ships would stand in for the
    compilation the tests watch. tests/test_shipped_proof.py checks that proof, and when it is read."""
    from engine.catalog import verified

    monkeypatch.setattr(verified, "SHIPPED_PROOF", tmp_path_factory.getbasetemp() / "no-shipped-proof.json")


@pytest.fixture(scope="session")
def postgres_cluster() -> Iterator[PostgresCluster]:
    """A real PostgreSQL server for this session (CI installs Debian's `postgresql`)."""
    bin_dir = postgres_binaries()
    if bin_dir is None:
        pytest.skip("PostgreSQL is not installed (apt-get install postgresql; .ci/run does it)")
    pytest.importorskip("psycopg", reason="the postgres extra is not installed (pip install '.[postgres]')")
    cluster = PostgresCluster(bin_dir).start()
    yield cluster
    close_open_caches()  # caches shared per URL in this process: closed while their server runs
    cluster.stop()


@pytest.fixture
def postgres_url(postgres_cluster: PostgresCluster) -> str:
    """A fresh, empty database of the session's cluster."""
    return postgres_cluster.new_database()


@pytest.fixture(scope="session")
def chromium_process() -> Iterator[Any]:
    """Debian's chromium driven by Playwright, launched once per worker: a launch costs about
    a second of CPU, and each test opens profiles of its own in it (`chromium`)."""
    with launched_chromium() as launched:
        yield launched


@pytest.fixture
def chromium(chromium_process: Any) -> Iterator[Any]:
    """The worker's chromium, for one test: the browser contexts it opens (profiles: cookies,
    storage, pages; `new_page` opens one too) are closed after it, so no test sees another's."""
    yield chromium_process
    for context in list(chromium_process.contexts):
        context.close()


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 2 MB filesystem of its own (a tmpfs), so the disk really fills up."""
    mount = tmp_path / "disk"
    mount.mkdir()
    if os.name != "posix" or os.geteuid() != 0:
        pytest.skip("mounting a small filesystem needs root")
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mount)], capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a small filesystem here: {mounted.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)
