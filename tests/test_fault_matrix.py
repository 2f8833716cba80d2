"""Every command that makes or changes a run, against the same faults.

One row per surface (`SURFACES`), one column per fault (`FAULTS`). Each cell runs the surface
on a scripted judge and a store that already holds a bystander (a live run of another name),
then asserts what a user would check: the exit status (or the return value), that the run
did not pass, the counts, and that no stored row of the bystander was lost. A surface names
the faults that cannot be made on it, each with why (`not_applicable`; "open:" where one could
be and is not yet): `test_the_matrix_has_no_silent_cell` prints the whole matrix and those
reasons. A new command joins the matrix with one `Surface(...)` line.

The faults: the judge fails every call; it fails half of the items; no item can be scored;
all but one cannot; the budget is reached mid-run (the spend the judge saw never above it);
SIGTERM arrives mid-run; the store is on a read-only disk; the run's name belongs to a run of
another kind; `kill -9` mid-run, then the same command again (each step of each item asked at
most once by the resume); a full disk; two processes on one run in PostgreSQL. A cell whose
fault cannot be made here (no root to mount a disk, no PostgreSQL) fails: it never skips.
"""

from __future__ import annotations

import json
import re
import os
import signal
import subprocess
import sys
import time
import urllib.error
from collections.abc import Callable
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from helpers.receiver import Receiver
from helpers.scripted import FIRST_CALL_HOLD, PER_CALL, answer_fitting, numbered_claims, script_hallucination, script_priced
from typer.testing import CliRunner

from engine import ConfigError, LiveScorer, StoreError, create_hallucination_scorer, run_evals
from engine.cli import app
from engine.judge.prices import cost_of
from engine.judge.protocol import TokenUsage
from engine.store import KeepsAlerts, open_store
from engine.testing import JudgeServer, Reply, Request

runner = CliRunner()
SCORERS = str(Path(sys.executable).with_name("scorers"))
PYTHON_SURFACE = str(Path(__file__).parent / "helpers" / "surface_process.py")
BYSTANDER = "agent-v1"  # a live run every cell's store holds before the cell runs
OTHER_KIND = "taken"  # a run of another kind than the surface's, in the "name of another kind" cells
ITEMS = 6
CHEAP, STRONG = "openai/gpt-4o-mini", "openai/gpt-4o"  # the cascade's two judges
ITEM = re.compile(r"\bok (\d+)\b")  # the item a request is about (its output is "ok N")


@dataclass
class World:
    """What one cell works in: the judge, a store holding the bystander, the data to score."""

    judge: JudgeServer
    tmp: Path
    store: Path | str  # a SQLite file, or a PostgreSQL URL in the two-processes column
    fault: str
    data: Path = field(init=False)
    labelled: Path = field(init=False)
    pairs: Path = field(init=False)
    run: str = "cell"
    receiver: str = ""  # the monitor's webhook
    receiving: Receiver | None = None  # the receiver behind it
    asked_before_the_resume: int = 0
    stored_before_the_resume: set[str] = field(default_factory=set)  # the items a kill left stored (in the run or its RUN-... runs)

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
    report: str = ""  # a process's standard output alone: what it reports, without its progress


# --------------------------------------------------------------------------------- the faults


def _items(world: World, outputs: list[str], with_context: list[bool]) -> None:
    rows = [
        {"id": f"i{n}", "input": f"question {n}", "output": output, **({"context": ["facts"]} if context else {}), "expected": {"hallucination": "WRONG" in output}}
        for n, (output, context) in enumerate(zip(outputs, with_context))
    ]
    world.data.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    world.labelled.write_text(world.data.read_text(encoding="utf-8"), encoding="utf-8")
    # A pair is not scorable where an item lacks its context: one of its outputs is empty.
    pairs = [{"id": f"p{n}", "input": f"question {n}", "outputs": {"a": output if context else "", "b": f"other {output}"}}
             for n, (output, context) in enumerate(zip(outputs, with_context))]
    world.pairs.write_text("".join(json.dumps(row) + "\n" for row in pairs), encoding="utf-8")


def _script_preference(judge: JudgeServer, **usage: Any) -> None:
    def verdict(request: Request) -> Reply:
        if "FAIL" in request.prompt:
            return Reply.fail(400, "scripted judge failure")
        return Reply(answer={"comparison": "scripted", "verdict": "response_1"}, **usage)

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
    _script_preference(world.judge)
    _items(world, ["ok"] * ITEMS, [False] * ITEMS)


def fault_all_but_one_not_scorable(world: World) -> None:
    script_hallucination(world.judge)
    _script_preference(world.judge)
    _items(world, ["ok"] * ITEMS, [True] + [False] * (ITEMS - 1))


PRICED: dict[str, Any] = {"usage": (1000, 200), "cached_tokens": 400}  # every answer of the budget column


def fault_budget_reached(world: World) -> None:
    script_priced(world.judge)
    world.judge.on("Reason", Reply(answer={"reason": "scripted"}, **PRICED))
    _script_preference(world.judge, **PRICED)
    world.judge.fallback = lambda request: Reply(answer=answer_fitting(request), **PRICED)
    _items(world, [f"claim {n}" for n in range(ITEMS)], [True] * ITEMS)


def fault_mid_run(world: World) -> None:
    """Slow answers, so a signal or a kill finds some items done and more in flight (and two
    processes started together are at work together)."""
    script_hallucination(world.judge, delay=0.4)
    _script_preference(world.judge, delay=0.4)
    _items(world, [f"ok {n}" for n in range(ITEMS)], [True] * ITEMS)


def fault_killed_while_verdicts_are_asked(world: World) -> None:
    """Slow verdicts: a kill finds some items stored and the verdicts of others in flight,
    their claims already answered."""
    script_hallucination(world.judge)
    world.judge.on("HallucinationVerdicts", lambda request: Reply(answer={"verdicts": [
        {"statement": claim, "verdict": "no", "reason": "scripted"} for claim in numbered_claims(request.prompt)]}, delay=0.3))
    _script_preference(world.judge, delay=0.3)
    _items(world, [f"ok {n}" for n in range(ITEMS)], [True] * ITEMS)


def fault_scorable(world: World) -> None:
    """Data the judge scores without trouble: the fault is the store's, not the judge's."""
    script_hallucination(world.judge)
    _script_preference(world.judge)
    _items(world, [f"ok {n}" for n in range(ITEMS)], [True] * ITEMS)


def fault_name_of_another_kind(world: World) -> None:
    fault_scorable(world)
    world.run = OTHER_KIND


FAULTS: dict[str, Callable[[World], None]] = {
    "judge fails every call": fault_judge_fails_every_call,
    "judge fails half": fault_judge_fails_half,
    "nothing scorable": fault_nothing_scorable,
    "all but one not scorable": fault_all_but_one_not_scorable,
    "budget reached": fault_budget_reached,
    "SIGTERM": fault_mid_run,
    "read-only store": fault_scorable,
    "name of another kind": fault_name_of_another_kind,
    "kill -9, then again": fault_killed_while_verdicts_are_asked,
    "full disk": fault_scorable,
    "two processes on one PostgreSQL run": fault_mid_run,  # slow answers: both processes are at work together
}
#: What every surface's exit status is under each fault (a Python call: None, or the error raised).
EXPECTED_STATUS = {
    "judge fails every call": 1, "judge fails half": 1, "nothing scorable": 1, "all but one not scorable": 1, "budget reached": 1,
    "SIGTERM": 130, "read-only store": 2, "name of another kind": 2,
    "kill -9, then again": 0,  # the same command again finishes the run
    "full disk": 1,  # the run stops at the first save that fails, with its cause
    # They share the run's items; two `monitor --send`: one posts the alert, the other waits
    # for that post and reports it, so both say the receiver took it.
    "two processes on one PostgreSQL run": 0,
}
BUDGET = 2 * 3 * PER_CALL + FIRST_CALL_HOLD  # about two items' worth of the six


# ------------------------------------------------------------------------------- the surfaces


def _cli(*arguments: str) -> Outcome:
    shown = runner.invoke(app, list(arguments))
    passed: bool | None = None
    counts: dict[str, int] | None = None
    if "--json" in arguments and shown.stdout.strip().startswith("{"):
        payload = json.loads(shown.stdout)
        if "run" in payload or "runs" in payload:  # a stored run says whether it passed (one output's score, a send of alerts: their exit status)
            assert isinstance(payload.get("passed"), bool), f"its --json does not say whether the run passed: {sorted(payload)}"
        passed = payload.get("passed")
        if isinstance(passed, bool) and "counts" in payload:
            counts = payload["counts"]["outcomes"]
        elif isinstance(passed, bool) and "pairs" in payload:  # pairwise: its one scorer's verdict counts the pairs
            [judged] = payload["verdict"]["scorers"].values()
            counts = {"scored": judged["scored"], "error": judged["failed"], "not_scorable": judged["not_scorable"]}
    return Outcome(shown.exit_code, passed, counts, shown.output)


def _budget(world: World) -> list[str]:
    return ["--max-cost", f"{BUDGET:.8f}"] if world.fault == "budget reached" else []


def eval_args(world: World) -> list[str]:
    return ["eval", str(world.data), "--scorer", "hallucination", "--store", str(world.store), "--run", world.run, "--concurrency", "2", "--no-cache",
            *_budget(world)]


def cascade_args(world: World) -> list[str]:
    return [*eval_args(world), "--model", CHEAP, "--escalate-to", STRONG]


def reasons_on_demand_args(world: World) -> list[str]:
    return [*eval_args(world), "--reasons", "on-demand"]


#: One output's judging is three calls, within BUDGET: `scorers run`'s budget cell judges it
#: with a jury of three (nine calls, about $0.0015), under a budget that holds them all in no
#: order: the last call needs the other eight settled (at least $0.00126) and its own hold
#: (its step's max_tokens at the cheapest output price, $0.00082), more than this budget.
ONE_OUTPUT_JURY = ("openai/gpt-4o-mini", "openai/gpt-4.1-nano", "openai/gpt-5-nano")
ONE_OUTPUT_BUDGET = 2 * PER_CALL + FIRST_CALL_HOLD


def run_args(world: World) -> list[str]:
    first = json.loads(world.data.read_text(encoding="utf-8").splitlines()[-1])
    context = ["--context", first["context"][0]] if "context" in first else []
    budget = [f"--max-cost={ONE_OUTPUT_BUDGET:.8f}", *(f"--model={model}" for model in ONE_OUTPUT_JURY)] if world.fault == "budget reached" else []
    return ["run", "hallucination", "--output", first["output"], *context, *budget]


def compare_args(world: World) -> list[str]:
    variant = world.tmp / "variant.yaml"
    variant.write_text("scorers:\n  hallucination:\n    extends: hallucination\n    description: a variant\n", encoding="utf-8")
    return ["compare", str(world.labelled), "--scorer", "hallucination", "--config", str(variant), "--store", str(world.store), "--run", world.run,
            "--no-cache", *_budget(world)]


def calibrate_args(world: World) -> list[str]:
    return ["calibrate", str(world.labelled), "--scorer", "hallucination", "--store", str(world.store), "--run", world.run, "--no-cache", *_budget(world)]


def pairwise_args(world: World) -> list[str]:
    return ["pairwise", str(world.pairs), "--scorer", "preference", "--store", str(world.store), "--as", world.run, "--concurrency", "2", *_budget(world)]


def rescore_source(world: World) -> None:
    """The stored run to re-score, judged before the cell (as the fault has it)."""
    run_evals(str(world.data), create_hallucination_scorer(), run="source", store=world.store, min_coverage=0.0, max_errors="100%")


def rescore_args(world: World) -> list[str]:
    return ["rescore", "--run", "source", "--scorer", "hallucination", "--as", world.run, "--store", str(world.store), "--no-cache", "--concurrency", "2",
            *_budget(world)]


#: The fewest labelled items align takes: 34 of each label, so that dev and test hold 10 of each.
ALIGN_ITEMS = 68
#: The steps the hallucination scorer asks of each item (the scripted judge finds one claim in "ok N").
ITEM_STEPS = ("Claims", "HallucinationVerdicts", "Reason")


def align_args(world: World) -> list[str]:
    # align's runs are named `PREFIX-baseline`, `PREFIX-...`: the name taken is the first one's.
    # Each item's output is "ok N" (N its own), so a request tells which item it is about.
    rows = [json.loads(line) for line in world.labelled.read_text(encoding="utf-8").splitlines()]
    many = []
    for n in range(ALIGN_ITEMS):
        row = rows[n % len(rows)]
        output = f"ok {n}" if row["output"].startswith("ok") else f"{row['output']} {n}"
        many.append({**row, "id": f"a{n}", "output": output, "expected": {"hallucination": n % 2 == 0}})
    data = world.tmp / "align.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in many), encoding="utf-8")
    return ["align", str(data), "--scorer", "hallucination", "--store", str(world.store), "--run", world.run, "--trials", "1", "--no-cache", *_budget(world)]


def align_alone(world: World) -> tuple[Outcome, list[Request]]:
    """The same align, alone and uninterrupted, on a store of its own: what it reports, and
    the judge requests it makes."""
    asked = len(world.judge.requests)
    alone = World(judge=world.judge, tmp=world.tmp, store=world.tmp / "alone.sqlite", fault=world.fault)
    shown = runner.invoke(app, align_args(alone))
    return Outcome(shown.exit_code, shown.exit_code == 0, None, shown.output, shown.stdout), world.judge.requests[asked:]


def align_stored_some(world: World) -> bool:
    """Some of align's items are stored (it writes its results every half second)."""
    return bool(_stored_items(world.store, world.run))


def monitor_args(world: World) -> list[str]:
    """The monitor's judge is its receiver: down when the judge fails every call, slow when
    it fails half; the monitor reads the bystander's replies (all below 0.5, so it alerts)."""
    monitors = world.tmp / "monitors.yaml"
    monitors.write_text(
        "monitors:\n  rising:\n    scorer: hallucination\n    statistic: mean\n    below: 0.5\n    window: 5\n    min_samples: 5\n"
        f"    alert:\n      - {{webhook: '{world.receiver}', retries: 1, backoff: 0.01}}\n", encoding="utf-8")
    return ["monitor", "--monitors", str(monitors), "--store", str(world.store), "--send"]


def _posting(world: World) -> bool:
    """The monitor's webhook post is in flight: its receiver holds it."""
    return world.receiving is not None and world.receiving.attempts >= 1


def queue_source(world: World) -> None:
    """The stored run the queue is made from, judged before the cell (as the fault has it)."""
    rescore_source(world)


def queue_args(world: World) -> list[str]:
    return ["queue", "create", world.run, "--from-run", "source", "--scorer", "hallucination", "--store", str(world.store)]


def python_args(surface: str) -> Callable[[World], list[str]]:
    def arguments(world: World) -> list[str]:
        budget = [f"{BUDGET:.8f}"] if world.fault == "budget reached" else []
        return [sys.executable, PYTHON_SURFACE, surface, str(world.data), str(world.store), world.run, *budget]

    return arguments


def plugin_args(world: World) -> list[str]:
    """A host project's test over the data, with the plugin's `assert_score` (its own process)."""
    tests = world.tmp / "host" / "test_replies.py"
    tests.parent.mkdir(exist_ok=True)
    tests.write_text(
        "import json\nimport pytest\nfrom engine.testing import assert_score\n\n"
        f"ROWS = [json.loads(line) for line in open({str(world.data)!r}, encoding='utf-8')]\n\n\n"
        "@pytest.mark.parametrize('row', ROWS, ids=[row['id'] for row in ROWS])\n"
        "def test_reply(row):\n    assert_score(row['output'], scorer='hallucination', context=row.get('context'), below=0.5)\n", encoding="utf-8")
    budget = [f"--scorers-max-cost={BUDGET:.8f}"] if world.fault == "budget reached" else []
    return [sys.executable, "-m", "pytest", str(tests), "-q", "-p", "no:cacheprovider", "--scorers-no-cache", *budget]


def _process(world: World, command: list[str]) -> subprocess.Popen[str]:
    environment = {**os.environ, "OPENAI_BASE_URL": world.judge.base_url, "OPENAI_API_KEY": "sk-test-secret-key-123", "SCORERS_DEBUG": ""}
    full = command if command[0] == sys.executable else [SCORERS, *command]
    return subprocess.Popen(full, env=environment, cwd=world.tmp, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _finished(process: subprocess.Popen[str]) -> Outcome:
    stdout, stderr = process.communicate(timeout=120)
    return Outcome(process.returncode, process.returncode == 0, None, stdout + stderr, stdout)


def as_process(world: World, command: list[str]) -> Outcome:
    return _finished(_process(world, command))


def workbench_run(world: World) -> Outcome:
    """The workbench's Run button: a sample of the data set through the page's API, then the
    stored run's verdict (the one the page shows)."""
    import urllib.request

    from engine.runs.stored.reading import stored_verdict
    from engine.workbench.server import Workbench

    folder = world.tmp / "catalog"
    folder.mkdir(exist_ok=True)
    try:
        started = Workbench(folder, world.store, data=world.data, max_cost=BUDGET if world.fault == "budget reached" else None).start()
    except ConfigError as refused:
        return Outcome(2, None, None, str(refused))
    except StoreError as failed:  # a store that cannot be opened (a full disk): it does not start, in one line
        return Outcome(1, False, None, str(failed))
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
        opened = open_store(world.store, reading=True)
        assert opened is not None
        with closing(opened):
            info = opened.get_run(status["run"])
            assert info is not None and info.kind == "workbench"
            verdict = stored_verdict(opened, info)
            counts = {item.scorer_id: item for item in opened.summary(info.name)}["hallucination"]
        return Outcome(None, verdict.passed, {"scored": counts.count, "error": counts.errors, "not_scorable": counts.not_scorable}, "; ".join(verdict.reasons))
    finally:
        started.stop()


def workbench_process_args(world: World) -> list[str]:
    folder = world.tmp / "catalog"
    folder.mkdir(exist_ok=True)
    return ["workbench", str(folder), "--store", str(world.store), "--data", str(world.data), "--no-browser", "--port", "0"]


def workbench_started(world: World, process: subprocess.Popen[str]) -> Callable[[str, dict[str, Any]], Any]:
    """Press the Run button of a workbench started as a process: its link (with the token) is
    read from what it printed, the session's key from its page. Returns how to call its API."""
    import urllib.request

    assert process.stderr is not None
    url = ""
    while not url:
        line = process.stderr.readline()
        assert line, f"the workbench ended before printing its link: {process.communicate()}"
        found = re.search(r"(http://127\.0\.0\.1:\d+/\S*token=\S+)", line)
        url = found.group(1) if found is not None else ""
    with urllib.request.urlopen(url) as page:
        token = re.search(r"token=([^&\s]+)", url)
        key = re.search(r'content="([^"]+)"[^>]*workbench-session|workbench-session"[^>]*content="([^"]+)"', page.read().decode())
    assert token is not None and key is not None
    base = url.split("/?")[0].rstrip("/")
    headers = {"Content-Type": "application/json", "Cookie": f"scorers_workbench={token.group(1)}", "X-Workbench-Session": key.group(1) or key.group(2)}

    def api(path: str, body: dict[str, Any]) -> Any:
        with urllib.request.urlopen(urllib.request.Request(f"{base}{path}", data=json.dumps(body).encode(), headers=headers)) as answered:
            return json.loads(answered.read().decode())

    api("/api/run", {"scorer": "hallucination", "data": str(world.data), "size": ITEMS, "seed": 1, "files": {}})
    return api


def served_to_the_end(world: World, command: list[str], started: Callable[[World, subprocess.Popen[str]], Any]) -> Outcome:
    """A server started again: its Run pressed again (the same draft on the same sample
    resumes the run), waited for to the end, then stopped."""
    process = _process(world, command)
    api = started(world, process)
    deadline = time.monotonic() + 60
    while (run := api("/api/status", {})["run"])["status"] == "running" and time.monotonic() < deadline:
        time.sleep(0.1)
    process.send_signal(signal.SIGTERM)
    stopped = _finished(process)
    return Outcome(stopped.status, run["status"] == "complete", {"scored": run["scored"], "error": run["failed"]}, stopped.text + json.dumps(run))


def run_evals_python(world: World) -> Outcome:
    try:
        result = run_evals(str(world.data), create_hallucination_scorer(), run=world.run, store=world.store, concurrency=2,
                           max_cost=BUDGET if world.fault == "budget reached" else None)
    except ConfigError as refused:
        return Outcome(2, None, None, str(refused))
    except StoreError as failed:  # a store that cannot be opened: the call fails, in one line
        return Outcome(1, False, None, str(failed))
    return Outcome(None, result.passed, dict(result.counts.outcomes), "; ".join(result.verdict.reasons))


def live_python(world: World) -> Outcome:
    rows = [json.loads(line) for line in world.data.read_text(encoding="utf-8").splitlines()]
    try:
        live = LiveScorer(create_hallucination_scorer(), store=world.store, run=world.run, max_cost=BUDGET if world.fault == "budget reached" else None)
    except ConfigError as refused:
        return Outcome(2, None, None, str(refused))
    except StoreError as failed:  # a store that cannot be opened: the call fails, in one line
        return Outcome(1, False, None, str(failed))
    for row in rows:
        live.submit(row["output"], input=row["input"], context=row.get("context"), run_id=row["id"])
    assert live.close(timeout=60)
    stats = live.stats
    counts = {"scored": stats.scored.get("hallucination", 0), "error": stats.errors.get("hallucination", 0), "not_scorable": stats.not_scorable.get("hallucination", 0)}
    return Outcome(None, None, counts)


ALL = tuple(FAULTS)
JUDGED = ("judge fails every call", "judge fails half", "nothing scorable", "all but one not scorable")
WITHOUT_BUDGET = (*JUDGED, "SIGTERM", "read-only store", "name of another kind", "kill -9, then again", "full disk")


@dataclass(frozen=True)
class Surface:
    name: str
    #: The surface as a process: `scorers` arguments, or a whole command line (sys.executable
    #: ...); None for one that lives in the test's process (the faults that need a process are not its).
    command: Callable[[World], list[str]] | None
    #: The faults that cannot be made on this surface, each with why (printed with the matrix):
    #: every other fault is a cell that runs and asserts.
    not_applicable: dict[str, str] = field(default_factory=dict)
    #: In-process, where it tells more than the process's status (counts, a Python result).
    run: Callable[[World], Outcome] | None = None
    #: Where this surface's exit status differs from EXPECTED_STATUS, and why (in a comment).
    statuses: dict[str, int] = field(default_factory=dict)
    #: What the surface needs in the store before the cell (judged before the cell's count).
    prepare: Callable[[World], None] | None = None
    #: The kind of run it writes: the "name of another kind" cell gives it a run of another.
    kind: str = "batch"
    #: Whether it reads its JSON (--json) when run in process.
    json: bool = True
    #: Judge requests made before a signal finds it under way.
    under_way: int = 4
    #: How many times one run of it asks each step of an item (compare: once per variant).
    asks_each_step: int = 1
    #: What says its process is at work, for a signal or a kill (default: the judge is asked).
    busy: Callable[[World], bool] | None = None
    #: What starts its work once its process is up (the workbench's Run button), if anything does.
    started: Callable[[World, subprocess.Popen[str]], Any] | None = None
    #: What must hold, besides verdicts asked, before a kill finds it under way.
    killed_once: Callable[[World], bool] | None = None
    #: Two processes on one run at once: the second is refused (exit 2, in one line) while
    #: the first does the whole run, where the surface does not split a run between processes.
    one_at_a_time: str = ""
    #: The budget its "budget reached" cell gives it (US dollars).
    budget: float = BUDGET

    @property
    def faults(self) -> tuple[str, ...]:
        return tuple(fault for fault in FAULTS if fault not in self.not_applicable)

    def outcome(self, world: World) -> Outcome:
        if self.run is not None:
            return self.run(world)
        assert self.command is not None
        command = self.command(world)
        if command[0] == sys.executable:
            return as_process(world, command)
        return _cli(*command, *(["--json"] if self.json else []))


NO_BUDGET = "it asks no judge, so it spends nothing: no --max-cost to reach (every surface that asks one takes a budget)"
ASKS_NO_JUDGE = "it asks no judge: it reads scores already stored, so no judge fault reaches it"
STORES_NO_RUN = "it stores no run: nothing to resume, to share between processes or to find under a name of another kind"
SURFACES = [
    Surface("eval", eval_args),
    Surface("a cascade (eval --escalate-to)", cascade_args),
    Surface("eval --reasons on-demand", reasons_on_demand_args),
    # One output without the context its scorer needs is a value the user did not give: 2.
    # Its store is the response cache, on the cell's disk; its SIGTERM comes with the first call.
    Surface("run", run_args, {
        "name of another kind": STORES_NO_RUN, "kill -9, then again": STORES_NO_RUN, "two processes on one PostgreSQL run": STORES_NO_RUN,
    }, statuses={"nothing scorable": 2, "all but one not scorable": 2, "read-only store": 0, "full disk": 0}, under_way=1, budget=ONE_OUTPUT_BUDGET),
    Surface("compare", compare_args, asks_each_step=2),
    Surface("calibrate", calibrate_args),
    # Each pair is asked in both orders: each step of an item twice.
    Surface("pairwise", pairwise_args, asks_each_step=2, one_at_a_time="is being run by another process"),
    Surface("rescore", rescore_args, prepare=rescore_source),
    # One align at a time: it is one search, each step chosen from the last, ending in one variant.
    Surface("align", align_args, one_at_a_time="is being run by another process", killed_once=align_stored_some),
    # A slow receiver takes the alert (the monitor waits for it).
    Surface("monitor --send", monitor_args, {
        "nothing scorable": ASKS_NO_JUDGE, "all but one not scorable": ASKS_NO_JUDGE, "budget reached": NO_BUDGET,
        "name of another kind": "it names no run: it writes alerts, keyed by monitor and episode",
    }, statuses={"judge fails half": 0}, busy=_posting),
    Surface("a review queue (queue create)", queue_args, {
        **{fault: ASKS_NO_JUDGE for fault in JUDGED}, "budget reached": NO_BUDGET,
        "SIGTERM": "one transaction that asks no judge: nothing is under way for a signal to find",
        "kill -9, then again": "one transaction that asks no judge: nothing is under way for a kill to find",
        "name of another kind": "a queue's name is not a run's: no run of another kind can hold it",
    }, prepare=queue_source, json=False, kind="queue", one_at_a_time="exists already"),
    Surface("the workbench's run", workbench_process_args, {
        "name of another kind": "it names its runs itself (workbench-SCORER-FINGERPRINT-...): no name is given that another kind could hold",
        "two processes on one PostgreSQL run": "one server runs one run at a time, and its name is its own draft's",
    # A server stopped by SIGTERM stops as asked (0); the run it was running is what is checked.
    }, run=workbench_run, kind="workbench", started=workbench_started, statuses={"SIGTERM": 0}),
    # A library call owns no signal: SIGTERM ends its process as Python's default does.
    Surface("run_evals", python_args("run_evals"), run=run_evals_python, statuses={"SIGTERM": -signal.SIGTERM}),
    Surface("live scoring", python_args("live"), run=live_python, kind="live", statuses={"SIGTERM": -signal.SIGTERM}),
    # A host project's tests: they fail where the scores are not there; pytest's own statuses.
    Surface("the pytest plugin", plugin_args, {
        "read-only store": "it writes nothing: no store, and its response cache is off (--scorers-no-cache)",
        "full disk": "it writes nothing: no store, and its response cache is off (--scorers-no-cache)",
        "name of another kind": STORES_NO_RUN, "kill -9, then again": STORES_NO_RUN, "two processes on one PostgreSQL run": STORES_NO_RUN,
    }, statuses={"SIGTERM": -signal.SIGTERM}),
]
#: Cells left to `pytest -m slow`, to keep CI's run within its 12 minutes on 2 cores: a process
#: killed, stopped or doubled on the surfaces that are eval run with one option more, or eval
#: from Python (each goes through the runner, store and lease of eval's own cells, which stay;
#: 15 to 20 seconds each, two processes a cell), and two of the pytest plugin's partial
#: failures, whose verdict is the one function its "judge fails every call" cell goes through.
SLOW_CELLS = frozenset(
    [(surface, fault)
     for surface in ("eval --reasons on-demand", "a cascade (eval --escalate-to)", "run_evals")
     for fault in ("kill -9, then again", "two processes on one PostgreSQL run", "SIGTERM")]
    + [("the pytest plugin", "judge fails half"), ("the pytest plugin", "all but one not scorable")]
)
CELLS = [
    pytest.param(surface, fault, id=f"{surface.name} / {fault}", marks=[pytest.mark.slow] if (surface.name, fault) in SLOW_CELLS else [])
    for surface in SURFACES for fault in surface.faults
]


# ----------------------------------------------------------------------------------- the cells


def _live_run(store: Path | str, name: str) -> None:
    live = LiveScorer(create_hallucination_scorer(options={"context": ["facts"]}), store=store, run=name)
    for number in range(5):
        live.submit(f"reply {number}", input="q", run_id=f"r{number}")
    assert live.close(timeout=30)


def _bystanders(judge: JudgeServer, store: Path | str, surface: Surface) -> dict[str, Any]:
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


def _rows(store: Path | str) -> dict[str, Any]:
    opened = open_store(store, reading=True)
    assert opened is not None
    with closing(opened):
        return {
            (record.run, record.item_id, record.scorer_id): (record.score, record.scorer_hash)
            for run in opened.runs()
            if run.name == BYSTANDER or run.name.startswith(OTHER_KIND)
            for record in opened.query(run=run.name)
        }


def _stored_items(store: Path | str, run: str) -> set[str]:
    """The items stored, without an error, in the run `run` or in the runs named `run`-... (align's)."""
    opened = open_store(store, reading=True)
    assert opened is not None
    with closing(opened):
        names = [info.name for info in opened.runs() if info.name == run or info.name.startswith(f"{run}-")]
        return {record.item_id for name in names for record in opened.query(run=name, errors=False)}


def _records(store: Path | str, run: str) -> list[Any]:
    opened = open_store(store, reading=True)
    assert opened is not None
    with closing(opened):
        return list(opened.query(run=run))


def _spent_as_the_judge_saw_it(requests: list[Request]) -> float:
    """What the answers the judge gave cost: each of the budget column's answers is PRICED."""
    usage = TokenUsage(prompt_tokens=1000, completion_tokens=200, total_tokens=1200, cached_prompt_tokens=400)
    models = [str(request.body.get("model", "")) for request in requests]
    costs = [cost_of(model if "/" in model else f"openai/{model}", usage) for model in models]
    assert None not in costs, "a judge without a price in the budget column"
    return sum(cost for cost in costs if cost is not None)


def _asked_more_than(once: int, requests: list[Request]) -> dict[tuple[str, str | None], int]:
    """(item, step) asked more than `once` times among `requests`."""
    asked: dict[tuple[str, str | None], int] = {}
    for request in requests:
        found = ITEM.search(request.prompt)
        if found is not None and not request.is_reask:
            key = (found.group(1), request.schema_name)
            asked[key] = asked.get(key, 0) + 1
    return {key: count for key, count in asked.items() if count > once}


def _signalled(world: World, command: list[str], number: int, after: int = 4, started: Callable[[World, subprocess.Popen[str]], Any] | None = None,
               busy: Callable[[World], bool] | None = None, killed_once: Callable[[World], bool] | None = None) -> Outcome:
    """The surface's process, sent `number` once some items are done and more in flight (a
    kill: once verdicts are asked, and `killed_once` holds), or once `busy` says it is at work."""
    def verdicts_asked() -> int:  # an item's verdicts, or a pair's
        return len(world.judge.requests_for("HallucinationVerdicts")) + len(world.judge.requests_for("PreferenceVerdict"))

    asked, verdicts = len(world.judge.requests), verdicts_asked()
    process = _process(world, command)
    if started is not None:
        started(world, process)
    deadline = time.monotonic() + 60

    def under_way() -> bool:
        if busy is not None:
            return busy(world)
        if number == signal.SIGKILL:
            return verdicts_asked() >= verdicts + 3 and (killed_once is None or killed_once(world))
        return len(world.judge.requests) >= asked + after

    while not under_way() and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.05)
    assert process.poll() is None, f"the process ended before the signal: {process.communicate()}"
    process.send_signal(number)
    return _finished(process)


def _heard_everything_sent(judge: JudgeServer) -> int:
    """The judge's count of requests once it has read what a killed process sent: a request
    written to the socket just before the kill is read by the server after it, and would be
    counted as the resume's own (CI saw an item's verdicts "asked twice" that way)."""
    heard, quiet_since = len(judge.requests), time.monotonic()
    deadline = quiet_since + 10
    while time.monotonic() < deadline:
        time.sleep(0.1)
        if len(judge.requests) != heard or judge.in_flight:
            heard, quiet_since = len(judge.requests), time.monotonic()
        elif time.monotonic() - quiet_since >= 1.0:
            break
    return heard


def _make_the_disk(fault: str, disk: Path) -> None:
    """Turn the cell's disk read-only, or fill it: a fault that cannot be made fails the cell."""
    if fault == "read-only store":
        remounted = subprocess.run(["mount", "-o", "remount,ro", str(disk)], capture_output=True, text=True)
        assert remounted.returncode == 0, f"cannot make the filesystem read-only here: {remounted.stderr.strip()}"
    else:
        fill(disk)


def fill(disk: Path) -> None:
    """Take every byte of `disk`."""
    descriptor = os.open(disk / "filler", os.O_WRONLY | os.O_CREAT)
    try:
        while True:
            os.write(descriptor, b"\0" * 16384)
    except OSError:
        pass
    finally:
        os.close(descriptor)


@pytest.mark.parametrize(("surface", "fault"), CELLS)
def test_every_surface_under_every_fault(surface: Surface, fault: str, judge: JudgeServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         request: pytest.FixtureRequest) -> None:
    monkeypatch.setenv("SCORERS_RETRIES", "0")  # a failing judge fails now, not after its backoff
    on_disk = fault in ("read-only store", "full disk")
    disk = request.getfixturevalue("small_disk") if on_disk else tmp_path
    store: Path | str = request.getfixturevalue("postgres_url") if fault == "two processes on one PostgreSQL run" else disk / "results.sqlite"
    if surface.name == "run" or surface.name == "the pytest plugin":
        monkeypatch.setenv("SCORERS_CACHE", str(disk / "responses.sqlite"))
    before = _bystanders(judge, store, surface)
    world = World(judge=judge, tmp=tmp_path, store=store, fault=fault)
    FAULTS[fault](world)
    receiver = _receiver(surface, fault)
    world.receiving = receiver
    with receiver:
        world.receiver = "http://127.0.0.1:9/down" if fault == "judge fails every call" else receiver.url
        if surface.prepare is not None:
            surface.prepare(world)
        if on_disk:
            _make_the_disk(fault, disk)
        asked = len(judge.requests)
        outcome = _cell(surface, fault, world)
        if fault == "full disk":
            (disk / "filler").unlink()  # room again: every row stored before is there to read
        _check(surface, fault, world, outcome, asked, receiver)  # the receiver still up: a check may send again
    assert _rows(store) == before, "a stored row of another run was lost or changed"


def _receiver(surface: Surface, fault: str) -> Receiver:
    """The monitor's receiver: slow where the judge is (it waits for it); holding its first
    post where a signal or a kill must find one in flight; a little slow where two monitors
    run at once, so the second finds the first posting."""
    if fault == "judge fails half":
        return Receiver(delay=2.0)
    if surface.name == "monitor --send" and fault in ("SIGTERM", "kill -9, then again"):
        return Receiver(hold_first=30.0)
    if surface.name == "monitor --send" and fault == "two processes on one PostgreSQL run":
        return Receiver(delay=1.0)
    return Receiver()


def _cell(surface: Surface, fault: str, world: World) -> Outcome:
    if fault not in ("SIGTERM", "kill -9, then again", "two processes on one PostgreSQL run"):
        return surface.outcome(world)
    assert surface.command is not None, f"{surface.name}: {fault} needs the surface as a process"
    command = surface.command(world)
    if fault == "SIGTERM":
        return _signalled(world, command, signal.SIGTERM, surface.under_way, surface.started, surface.busy)
    if fault == "kill -9, then again":
        killed = _signalled(world, command, signal.SIGKILL, started=surface.started, busy=surface.busy, killed_once=surface.killed_once)
        assert killed.status == -signal.SIGKILL, killed.text
        world.asked_before_the_resume = _heard_everything_sent(world.judge)
        world.stored_before_the_resume = _stored_items(world.store, world.run)
        return served_to_the_end(world, command, surface.started) if surface.started is not None else as_process(world, command)
    # Both started before either is waited for: at work on the run together.
    first, second = _process(world, command), _process(world, command)
    one, other = _finished(first), _finished(second)
    if surface.one_at_a_time:
        refused = [outcome for outcome in (one, other) if outcome.status == 2]
        assert len(refused) == 1 and surface.one_at_a_time in refused[0].text and "Traceback" not in refused[0].text, (one.text, other.text)
        return other if refused[0] is one else one
    assert one.status == other.status, (one.text, other.text)
    return one


def _check(surface: Surface, fault: str, world: World, outcome: Outcome, asked: int, receiver: Receiver) -> None:
    expected = surface.statuses.get(fault, EXPECTED_STATUS[fault])
    if outcome.status is None:  # a Python call: it returns; its result says it did not pass
        assert expected in (1, 130), (surface.name, fault, outcome)
    else:
        assert outcome.status == expected, (surface.name, fault, outcome.text)
        assert "Traceback" not in outcome.text
    if expected != 0:
        assert outcome.passed is not True, outcome.text
    if fault in ("read-only store", "name of another kind") and expected != 0:
        assert len(world.judge.requests) == asked, "refused before any judge call"
    if fault == "budget reached":
        spent = _spent_as_the_judge_saw_it(world.judge.requests[asked:])
        assert 0 < spent <= surface.budget, f"spent {spent:.6f} of a budget of {surface.budget:.6f}"
    if fault == "kill -9, then again":
        # A resumed item continues from its stored steps or starts over, never both.
        assert _asked_more_than(surface.asks_each_step, world.judge.requests[world.asked_before_the_resume:]) == {}
    if fault == "two processes on one PostgreSQL run" and surface.kind == "live":  # two hosts, each its own replies
        assert len(_records(world.store, world.run)) == 2 * ITEMS
    elif fault == "two processes on one PostgreSQL run":
        assert _asked_more_than(surface.asks_each_step, world.judge.requests[asked:]) == {}, "an item was judged by both processes"
    if surface.name == "align" and fault in ("kill -9, then again", "two processes on one PostgreSQL run"):
        _check_align_did_the_job_once(fault, world, outcome, world.judge.requests[asked:])
    if surface.kind == "workbench" and fault == "SIGTERM":
        opened = open_store(world.store, reading=True)
        assert opened is not None
        with closing(opened):
            [stopped] = [run for run in opened.runs() if run.kind == "workbench"]
            kept = len(opened.query(run=stopped.name))
        # Marked stopped (a rerun of the same draft resumes it), not left "running" nor complete.
        assert stopped.status == "interrupted" and kept < ITEMS, (stopped.status, kept)
    if surface.name == "monitor --send" and fault == "judge fails half":
        assert receiver.bodies, "the slow receiver never got the alert"
    if surface.name == "monitor --send" and fault in ("SIGTERM", "kill -9, then again", "two processes on one PostgreSQL run"):
        _check_the_alert_arrived_once(world, fault, receiver)
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


def _outbox(store: Path | str) -> tuple[list[Any], list[Any]]:
    """The stored alerts and their deliveries."""
    opened = open_store(store, reading=True)
    assert isinstance(opened, KeepsAlerts)
    with closing(opened):
        return opened.alerts(), opened.deliveries(pending_only=False)


def _check_the_alert_arrived_once(world: World, fault: str, receiver: Receiver) -> None:
    """One alert stored for the episode, delivered, with one Idempotency-Key whatever reached
    the receiver. Stopped by SIGTERM while posting, the alert is left pending, and the next
    send delivers it with one request; killed while posting, the command again delivered it
    (that a delivered alert is never sent again is test_alerts_arrive's)."""
    if fault == "SIGTERM":
        [alert], [delivery] = _outbox(world.store)
        assert delivery.state == "pending" and delivery.claimed_by is None, delivery  # not lost, not marked delivered, free to send
        held = receiver.attempts
        again = as_process(world, monitor_args(world))
        assert again.status == 0, again.text
        assert receiver.attempts == held + 1, "the next send posted the kept alert more than once"
    [alert], [delivery] = _outbox(world.store)
    assert alert.kind == "alert" and delivery.state == "delivered", (alert, delivery)
    if fault == "two processes on one PostgreSQL run":
        assert len(receiver.bodies) == 1, f"two monitors at once sent the alert {len(receiver.bodies)} times"
    else:  # the post held when the signal or the kill came reached the receiver: it saw it twice, with one key
        assert receiver.attempts == 2 and {headers["Idempotency-Key"] for headers in receiver.headers} == {f"{alert.episode}-alert"}


def _item_steps(requests: list[Request]) -> list[tuple[str, str | None]]:
    """(item, step) of each request about one item (its output "ok N"), re-asks left out."""
    return [(found.group(1), request.schema_name) for request in requests if (found := ITEM.search(request.prompt)) and not request.is_reask]


def _check_align_did_the_job_once(fault: str, world: World, outcome: Outcome, requests: list[Request]) -> None:
    """Two aligns at once asked the judge what one align asks: each step of each item once,
    and the optimizer once. Align killed and run again asked again only the steps of the
    items the kill left unstored, each once, and reports what an uninterrupted align reports."""
    if fault == "two processes on one PostgreSQL run":  # the refused one asked nothing
        each_once = [(str(number), step) for number in range(ALIGN_ITEMS) for step in ITEM_STEPS]
        assert sorted(step for step in _item_steps(requests) if step[1] in ITEM_STEPS) == sorted(each_once)
        assert [request.schema_name for request in requests if request.schema_name not in ITEM_STEPS] == ["InstructionRewrite"]
        assert len(requests) == len(each_once) + 1
        return
    resumed = _item_steps(world.judge.requests[world.asked_before_the_resume:])
    alone, asked_alone = align_alone(world)
    assert alone.status == 0, alone.text
    assert outcome.report == alone.report, (outcome.report, alone.report)
    # The resume asks each step of each item the kill left unstored once, and nothing of a stored one.
    stored = {item.removeprefix("a") for item in world.stored_before_the_resume}
    assert stored, "the kill came before any item was stored"
    left = [(item, step) for item, step in _item_steps(asked_alone) if item not in stored or step not in ITEM_STEPS]
    assert sorted(resumed) == sorted(left)


def test_the_matrix_has_no_silent_cell(capsys: pytest.CaptureFixture[str]) -> None:
    """Every surface meets every fault: a cell that runs and asserts, or a reason why the
    fault cannot be made on it (printed; `open:` marks one that could be and is not yet)."""
    width = max(len(surface.name) for surface in SURFACES)
    lines = [f"{'':{width}}  " + " ".join(f"{number:>2}" for number in range(len(FAULTS)))]
    lines += [f"{number:>2} {fault}" for number, fault in enumerate(FAULTS)]
    for surface in SURFACES:
        unknown = set(surface.not_applicable) - set(FAULTS)
        assert not unknown, f"{surface.name}: no such fault {sorted(unknown)}"
        assert all(reason.strip() for reason in surface.not_applicable.values()), surface.name
        marks = ["ok" if fault in surface.faults else "op" if surface.not_applicable[fault].startswith("open:") else "na" for fault in FAULTS]
        lines.append(f"{surface.name:{width}}  " + " ".join(f"{mark:>2}" for mark in marks))
    for surface in SURFACES:
        lines += [f"{surface.name} / {fault}: {reason}" for fault, reason in surface.not_applicable.items()]
    asserted = sum(len(surface.faults) for surface in SURFACES)
    lines.append(f"{asserted} of {len(SURFACES) * len(FAULTS)} cells asserted; ok: asserted, na: cannot apply, op: open")
    with capsys.disabled():
        print("\n" + "\n".join(lines))
    assert len(CELLS) == asserted
