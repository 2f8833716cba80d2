"""Every command that makes or changes a run, against the same faults.

One row per surface (`SURFACES`), one column per fault (`FAULTS`). Each cell runs the surface
on a scripted judge and a store that already holds a bystander (a live run of another name),
then asserts what a user would check: the exit status (or the return value), that the run
did not pass, the counts, and that no stored row of the bystander was lost. A surface says
which faults apply to it; a new command joins the matrix with one `Surface(...)` line.

The faults: the judge fails every call; it fails half of the items; no item can be scored;
all but one cannot; the budget is reached mid-run; SIGTERM arrives mid-run; the store is on a
read-only disk; the run's name belongs to a run of another kind.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from helpers.scripted import FIRST_CALL_HOLD, PER_CALL, script_hallucination, script_priced
from typer.testing import CliRunner

from engine import ConfigError, LiveScorer, SQLiteStore, create_hallucination_scorer, run_evals
from engine.cli import app
from engine.testing import JudgeServer, Reply, Request

runner = CliRunner()
SCORERS = str(Path(sys.executable).with_name("scorers"))
BYSTANDER = "agent-v1"  # a live run every cell's store holds before the cell runs
OTHER_KIND = "taken"  # a run of another kind than the surface's, in the "name of another kind" cells
ITEMS = 6


@dataclass
class World:
    """What one cell works in: the judge, a store holding the bystander, the data to score."""

    judge: JudgeServer
    tmp: Path
    store: Path
    fault: str
    data: Path = field(init=False)
    labelled: Path = field(init=False)
    pairs: Path = field(init=False)
    run: str = "cell"

    def __post_init__(self) -> None:
        self.data = self.tmp / "items.jsonl"
        self.labelled = self.tmp / "labelled.jsonl"
        self.pairs = self.tmp / "pairs.jsonl"


@dataclass
class Outcome:
    """What a surface came to: its exit status (None for a Python call), whether it passed,
    and its counts (scored, errors, not scorable; None where the surface has none)."""

    status: int | None
    passed: bool | None
    counts: dict[str, int] | None = None
    text: str = ""


# --------------------------------------------------------------------------------- the faults


def _items(world: World, outputs: list[str], with_context: list[bool]) -> None:
    rows = [
        {"id": f"i{n}", "input": f"question {n}", "output": output, **({"context": ["facts"]} if context else {}), "expected": {"hallucination": "WRONG" in output}}
        for n, (output, context) in enumerate(zip(outputs, with_context))
    ]
    world.data.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    world.labelled.write_text(world.data.read_text(encoding="utf-8"), encoding="utf-8")
    pairs = [{"id": f"p{n}", "input": f"question {n}", "outputs": {"a": output, "b": f"other {output}"}} for n, output in enumerate(outputs)]
    world.pairs.write_text("".join(json.dumps(row) + "\n" for row in pairs), encoding="utf-8")


def _script_preference(judge: JudgeServer) -> None:
    def verdict(request: Request) -> Reply:
        if "FAIL" in request.prompt:
            return Reply.fail(400, "scripted judge failure")
        return Reply(answer={"comparison": "scripted", "winner": "A"})

    judge.on("PreferenceVerdict", verdict)


def fault_judge_fails_every_call(world: World) -> None:
    world.judge.fallback = Reply.fail(500, "the judge is down")
    _items(world, ["ok"] * ITEMS, [True] * ITEMS)


def fault_judge_fails_half(world: World) -> None:
    script_hallucination(world.judge)
    _script_preference(world.judge)
    _items(world, ["ok", "FAIL"] * (ITEMS // 2), [True] * ITEMS)


def fault_nothing_scorable(world: World) -> None:
    script_hallucination(world.judge)
    _items(world, ["ok"] * ITEMS, [False] * ITEMS)


def fault_all_but_one_not_scorable(world: World) -> None:
    script_hallucination(world.judge)
    _items(world, ["ok"] * ITEMS, [True] + [False] * (ITEMS - 1))


def fault_budget_reached(world: World) -> None:
    script_priced(world.judge)
    _items(world, [f"claim {n}" for n in range(ITEMS)], [True] * ITEMS)


def fault_sigterm(world: World) -> None:
    script_hallucination(world.judge, delay=0.4)
    _items(world, [f"ok {n}" for n in range(ITEMS)], [True] * ITEMS)


def fault_read_only_store(world: World) -> None:
    script_hallucination(world.judge)
    _items(world, ["ok"] * ITEMS, [True] * ITEMS)


def fault_name_of_another_kind(world: World) -> None:
    script_hallucination(world.judge)
    _script_preference(world.judge)
    _items(world, ["ok"] * ITEMS, [True] * ITEMS)
    world.run = OTHER_KIND


FAULTS: dict[str, Callable[[World], None]] = {
    "judge fails every call": fault_judge_fails_every_call,
    "judge fails half": fault_judge_fails_half,
    "nothing scorable": fault_nothing_scorable,
    "all but one not scorable": fault_all_but_one_not_scorable,
    "budget reached": fault_budget_reached,
    "SIGTERM": fault_sigterm,
    "read-only store": fault_read_only_store,
    "name of another kind": fault_name_of_another_kind,
}
#: What every surface's exit status is under each fault (a Python call: None, or the error raised).
EXPECTED_STATUS = {
    "judge fails every call": 1, "judge fails half": 1, "nothing scorable": 1, "all but one not scorable": 1, "budget reached": 1,
    "SIGTERM": 130, "read-only store": 2, "name of another kind": 2,
}
BUDGET = 2 * 3 * PER_CALL + FIRST_CALL_HOLD  # about two items' worth of the six


# ------------------------------------------------------------------------------- the surfaces


def _cli(world: World, *arguments: str) -> Outcome:
    shown = runner.invoke(app, list(arguments))
    passed: bool | None = None
    counts: dict[str, int] | None = None
    if "--json" in arguments and shown.stdout.strip().startswith("{"):
        payload = json.loads(shown.stdout)
        passed = payload.get("passed")
        if isinstance(passed, bool) and "counts" in payload:
            counts = payload["counts"]["outcomes"]
    return Outcome(shown.exit_code, passed, counts, shown.output)


def _budget(world: World) -> list[str]:
    return ["--max-cost", f"{BUDGET:.8f}"] if world.fault == "budget reached" else []


def eval_cli(world: World) -> Outcome:
    return _cli(world, "eval", str(world.data), "--scorer", "hallucination", "--store", str(world.store), "--run", world.run, "--json",
                "--concurrency", "2", *_budget(world))


def run_cli(world: World) -> Outcome:
    first = json.loads(world.data.read_text(encoding="utf-8").splitlines()[-1])
    context = ["--context", first["context"][0]] if "context" in first else []
    return _cli(world, "run", "hallucination", "--output", first["output"], *context, "--json")


def compare_cli(world: World) -> Outcome:
    variant = world.tmp / "variant.yaml"
    variant.write_text("scorers:\n  hallucination:\n    extends: hallucination\n    description: a variant\n", encoding="utf-8")
    return _cli(world, "compare", str(world.labelled), "--scorer", "hallucination", "--config", str(variant), "--store", str(world.store),
                "--run", world.run, "--json")


def calibrate_cli(world: World) -> Outcome:
    return _cli(world, "calibrate", str(world.labelled), "--scorer", "hallucination", "--store", str(world.store), "--run", world.run, "--json")


def pairwise_cli(world: World) -> Outcome:
    return _cli(world, "pairwise", str(world.pairs), "--scorer", "preference", "--store", str(world.store), "--as", world.run, "--json")


def rescore_source(world: World) -> None:
    """The stored run to re-score, judged before the cell (as the fault has it)."""
    run_evals(str(world.data), create_hallucination_scorer(), run="source", store=world.store, min_coverage=0.0, max_errors="100%")


def rescore_cli(world: World) -> Outcome:
    return _cli(world, "rescore", "--run", "source", "--scorer", "hallucination", "--as", world.run, "--store", str(world.store), "--json")


def align_cli(world: World) -> Outcome:
    # align's runs are named `PREFIX-baseline`, `PREFIX-...`: the name taken is the first one's.
    prefix = world.run.removesuffix("-baseline") if world.fault == "name of another kind" else world.run
    rows = [json.loads(line) for line in world.labelled.read_text(encoding="utf-8").splitlines()]
    many = [{**rows[n % len(rows)], "id": f"a{n}", "output": f"{rows[n % len(rows)]['output']} {n}", "expected": {"hallucination": n % 2 == 0}} for n in range(80)]
    data = world.tmp / "align.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in many), encoding="utf-8")
    return _cli(world, "align", str(data), "--scorer", "hallucination", "--store", str(world.store), "--run", prefix, "--json",
                "--trials", "1", "--no-cache", *_budget(world))


def monitor_cli(world: World) -> Outcome:
    monitors = world.tmp / "monitors.yaml"
    monitors.write_text("monitors:\n  rising: {scorer: hallucination, statistic: mean, below: 0.5, window: 5, min_samples: 5}\n", encoding="utf-8")
    return _cli(world, "monitor", "--monitors", str(monitors), "--store", str(world.store), "--send", "--json")


def workbench_run(world: World) -> Outcome:
    """The workbench's Run button: a sample of the data set through the page's API, then the
    stored run's verdict (the one the page shows)."""
    import urllib.request

    from engine.runs.stored.reading import stored_verdict
    from engine.workbench.server import Workbench

    folder = world.tmp / "catalog"
    folder.mkdir(exist_ok=True)
    started = Workbench(folder, world.store, data=world.data).start()
    try:

        def post(path: str, body: dict[str, Any]) -> tuple[int, Any]:
            headers = {"Content-Type": "application/json", "Cookie": f"scorers_workbench={started.token}", "X-Workbench-Session": started.session_key}
            request = urllib.request.Request(f"http://127.0.0.1:{started.port}{path}", data=json.dumps(body).encode(), headers=headers)
            try:
                with urllib.request.urlopen(request) as response:
                    return response.status, json.loads(response.read().decode())
            except urllib.error.HTTPError as refused:
                return refused.code, json.loads(refused.read().decode())

        code, answer = post("/api/run", {"scorer": "hallucination", "data": str(world.data), "size": ITEMS, "seed": 1, "files": {}})
        if code != 200:
            return Outcome(2, None, None, json.dumps(answer))
        deadline = time.monotonic() + 60
        status = answer
        while time.monotonic() < deadline:
            status = post("/api/status", {})[1]["run"]
            if status["status"] != "running":
                break
            time.sleep(0.1)
        with SQLiteStore(world.store, reading=True) as opened:
            info = opened.get_run(status["run"])
            assert info is not None and info.kind == "workbench"
            verdict = stored_verdict(opened, info)
            counts = {item.scorer_id: item for item in opened.summary(info.name)}["hallucination"]
        return Outcome(None, verdict.passed, {"scored": counts.count, "error": counts.errors, "not_scorable": counts.not_scorable}, "; ".join(verdict.reasons))
    finally:
        started.stop()


def run_evals_python(world: World) -> Outcome:
    try:
        result = run_evals(str(world.data), create_hallucination_scorer(), run=world.run, store=world.store, concurrency=2,
                           max_cost=BUDGET if world.fault == "budget reached" else None)
    except ConfigError as refused:
        return Outcome(2, None, None, str(refused))
    return Outcome(None, result.passed, dict(result.counts.outcomes), "; ".join(result.verdict.reasons))


def live_python(world: World) -> Outcome:
    rows = [json.loads(line) for line in world.data.read_text(encoding="utf-8").splitlines()]
    try:
        live = LiveScorer(create_hallucination_scorer(), store=world.store, run=world.run)
    except ConfigError as refused:
        return Outcome(2, None, None, str(refused))
    for row in rows:
        live.submit(row["output"], input=row["input"], context=row.get("context"), run_id=row["id"])
    assert live.close(timeout=60)
    stats = live.stats
    counts = {"scored": stats.scored["hallucination"], "error": stats.errors["hallucination"], "not_scorable": stats.not_scorable.get("hallucination", 0)}
    return Outcome(None, None, counts)


@dataclass(frozen=True)
class Surface:
    name: str
    run: Callable[[World], Outcome]
    faults: tuple[str, ...]
    #: The `scorers` arguments of a CLI surface, for the SIGTERM column (a real process).
    command: Callable[[World], list[str]] | None = None
    #: Where this surface's exit status differs from EXPECTED_STATUS, and why (in the name).
    statuses: dict[str, int] = field(default_factory=dict)
    #: What the surface needs in the store before the cell (judged before the cell's count).
    prepare: Callable[[World], None] | None = None
    #: The kind of run it writes: the "name of another kind" cell gives it a run of another.
    kind: str = "batch"


def _eval_command(world: World) -> list[str]:
    return ["eval", str(world.data), "--scorer", "hallucination", "--store", str(world.store), "--run", world.run, "--concurrency", "1"]


JUDGED = ("judge fails every call", "judge fails half", "nothing scorable", "all but one not scorable")
SURFACES = [
    Surface("eval", eval_cli, (*JUDGED, "budget reached", "SIGTERM", "read-only store", "name of another kind"), _eval_command),
    # One output without the context its scorer needs is a value the user did not give: 2.
    Surface("run", run_cli, ("judge fails every call", "nothing scorable"), statuses={"nothing scorable": 2}),
    Surface("compare", compare_cli, (*JUDGED, "read-only store", "name of another kind")),
    Surface("calibrate", calibrate_cli, (*JUDGED, "read-only store", "name of another kind")),
    Surface("pairwise", pairwise_cli, ("judge fails every call", "judge fails half", "read-only store", "name of another kind")),
    Surface("rescore", rescore_cli, ("judge fails every call", "judge fails half", "name of another kind"), prepare=rescore_source),
    Surface("align", align_cli, ("judge fails every call", "budget reached", "read-only store", "name of another kind")),
    Surface("monitor --send", monitor_cli, ("read-only store",)),
    Surface("the workbench's run", workbench_run, JUDGED),
    Surface("run_evals", run_evals_python, (*JUDGED, "budget reached", "name of another kind")),
    Surface("live scoring", live_python, ("judge fails every call", "judge fails half", "nothing scorable", "name of another kind"), kind="live"),
]
CELLS = [pytest.param(surface, fault, id=f"{surface.name} / {fault}") for surface in SURFACES for fault in surface.faults]


# ----------------------------------------------------------------------------------- the cells


def _live_run(store: Path, name: str) -> None:
    live = LiveScorer(create_hallucination_scorer(options={"context": ["facts"]}), store=store, run=name)
    for number in range(5):
        live.submit(f"reply {number}", input="q", run_id=f"r{number}")
    assert live.close(timeout=30)


def _bystanders(judge: JudgeServer, store: Path, surface: Surface) -> dict[str, Any]:
    """A live run of 5 replies, and a run of another kind than the surface's under the name
    OTHER_KIND (or, for align, the name of its first run): what every cell must leave exactly
    as it was."""
    script_hallucination(judge)
    _live_run(store, BYSTANDER)
    taken = f"{OTHER_KIND}-baseline" if surface.name == "align" else OTHER_KIND
    if surface.kind == "live":
        run_evals([{"id": f"b{n}", "output": "ok", "context": ["facts"]} for n in range(3)], create_hallucination_scorer(), run=taken, store=store)
    else:
        _live_run(store, taken)
    judge.reset()
    return _rows(store)


def _rows(store: Path) -> dict[str, Any]:
    with SQLiteStore(store, reading=True) as opened:
        return {
            (record.run, record.item_id, record.scorer_id): (record.score, record.scorer_hash)
            for run in opened.runs()
            if run.name == BYSTANDER or run.name.startswith(OTHER_KIND)
            for record in opened.query(run=run.name)
        }


def _sigterm(command: list[str], world: World) -> Outcome:
    environment = {**os.environ, "OPENAI_BASE_URL": world.judge.base_url, "OPENAI_API_KEY": "sk-test-secret-key-123", "SCORERS_DEBUG": ""}
    process = subprocess.Popen([SCORERS, *command], env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while len(world.judge.requests) < 4 and time.monotonic() < deadline:  # some items done, more in flight
        time.sleep(0.05)
    process.send_signal(signal.SIGTERM)
    stdout, stderr = process.communicate(timeout=60)
    return Outcome(process.returncode, False, None, stdout + stderr)


@pytest.mark.parametrize(("surface", "fault"), CELLS)
def test_every_surface_under_every_fault(surface: Surface, fault: str, judge: JudgeServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> None:
    monkeypatch.setenv("SCORERS_RETRIES", "0")  # a failing judge fails now, not after its backoff
    disk = request.getfixturevalue("small_disk") if fault == "read-only store" else tmp_path
    store = disk / "results.sqlite"
    before = _bystanders(judge, store, surface)
    world = World(judge=judge, tmp=tmp_path, store=store, fault=fault)
    FAULTS[fault](world)
    if surface.prepare is not None:
        surface.prepare(world)
    if fault == "read-only store":
        remounted = subprocess.run(["mount", "-o", "remount,ro", str(disk)], capture_output=True, text=True)
        if remounted.returncode != 0:
            pytest.skip(f"cannot make the filesystem read-only here: {remounted.stderr.strip()}")
    asked = len(judge.requests)

    if fault == "SIGTERM":
        assert surface.command is not None, f"{surface.name}: a SIGTERM cell needs the command"
        outcome = _sigterm(surface.command(world), world)
    else:
        outcome = surface.run(world)

    expected = surface.statuses.get(fault, EXPECTED_STATUS[fault])
    if outcome.status is None:  # a Python call: it returns; its result says it did not pass
        assert expected in (1, 130), (surface.name, fault, outcome)
        assert outcome.passed is not True, outcome.text
    else:
        assert outcome.status == expected, (surface.name, fault, outcome.text)
        assert "Traceback" not in outcome.text
    assert outcome.passed is not True, outcome.text
    if fault in ("read-only store", "name of another kind"):
        assert len(judge.requests) == asked, "refused before any judge call"
    if outcome.counts is not None:
        counted = outcome.counts
        if fault == "judge fails half":
            assert counted["error"] >= 1 and counted["scored"] >= 1, counted
        if fault == "nothing scorable":
            assert counted["scored"] == 0 and counted["not_scorable"] >= 1, counted
        if fault == "all but one not scorable":
            assert counted["scored"] == 1 and counted["not_scorable"] == ITEMS - 1, counted
        if fault == "judge fails every call":
            assert counted["scored"] == 0, counted
    assert _rows(store) == before, "a stored row of another run was lost or changed"
