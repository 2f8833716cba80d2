"""How close a batch run gets to the provider's limit: every figure of the engine's judge-call
performance, against a bare `AsyncOpenAI` loop measured in the same run (not a test).

    python bench/bench_judge_calls.py [--items 200] [--latency 0.5] [--concurrency 64] [--stream-items 100000]
                                      [--scheduling-latency 2] [--batch-only | --startup-only | --calls-only] [--deepeval-python PATH]

The loopback judge (engine.testing.JudgeServer) runs in a child process, so its work does not
share the engine's interpreter; every answer takes `--latency` seconds. Printed:
1. a cold 200-item hallucination batch (3 judge calls an item, response cache and results store
   on, as `scorers eval` runs it), the median of 3 runs alternating with the bare loops below,
   each with a new cache and store: wall time, items/s, requests, and the ratio to a bare
   AsyncOpenAI loop sending the very same request bodies as independent requests with as many
   in flight (aim: at most 1.10x), and to one sending them three in a row per item, as many
   items at a time; then the same batch with a middleware answering every call after
   `--scheduling-latency` seconds (the scheduling alone, against whole rounds of `concurrency`
   calls; a long latency keeps a loaded CPU from blurring it); then DeepEval's
   HallucinationMetric over the same items against the same judge, `evaluate` at
   max_concurrent = `concurrency`, run by bench/deepeval_hallucination.py in the interpreter
   `--deepeval-python` names (by default this one, if it has DeepEval): with DeepEval's
   defaults, then tuned (its result cache off, one HTTP client shared by its calls): items/s,
   requests per item, and the engine's items/s against each (aim: at least 2x);
2. CPU time per judge call at zero latency: the engine's, the bare loop's (the HTTP client), and
   the engine's own work (a middleware answers each call, so neither Instructor nor HTTP runs),
   each the least of 5 alternating rounds started from a collected heap;
3. the same batch again under a new run name: wall time and requests (must be 0);
4. how fast `scorers --help`, `scorers list` and `scorers check` start (best of five; the
   catalog compiled, and unchanged since it was last found clean), beside a process that only
   imports the libraries the command line is built on;
5. peak RSS of a process scoring a 100,000-item JSONL file (a scorer that needs no judge);
6. calls per item and items/s on the shipped HaluEval items (examples/halueval_qa.jsonl, half
   of them hallucinated, repeated to --items with a copy number in each output so no two are
   the same question), judge latency `--latency`, `--concurrency` calls in flight, reasons for
   failing items only (`scorers eval`'s default), response cache and store on: the default
   hallucination scorer, its one-call variant (examples/variants/one-call/) and the three-scorer
   suite (hallucination, faithfulness, answer relevancy), each beside DeepEval's metrics over
   the same items and judge, tuned as in figure 1 (HallucinationMetric; then Hallucination,
   Faithfulness and AnswerRelevancy metrics together), with the ratios the issue aims at and
   each side's ceiling (concurrency / (calls an item x latency)). `--calls-only` runs just this.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import math
import multiprocessing
import os
import platform
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def _serve(connection: Connection, latency: float) -> None:
    """The child process: a scripted hallucination judge whose answers follow from the prompt."""
    from engine.testing import JudgeServer, Request

    server = JudgeServer().start()
    server.latency = latency

    def between(prompt: str, tag: str) -> str:
        found = re.search(rf"<{tag}>\n(.*?)\n</{tag}>", prompt, re.DOTALL)
        return found.group(1) if found else ""

    def claims(request: Request) -> dict[str, Any]:
        return {"claims": [claim.strip() for claim in between(request.prompt, "output").split(". ") if claim.strip()]}

    def verdicts(request: Request) -> dict[str, Any]:
        found = [json.loads(line.split(". ", 1)[1]) for line in re.findall(r"^\d+\. \".*\"$", request.prompt, re.MULTILINE)]
        return {"verdicts": [{"statement": claim, "verdict": "yes" if "wrong" in claim else "no", "reason": "scripted"} for claim in found]}

    server.on("Claims", claims)
    server.on("HallucinationVerdicts", verdicts)
    server.on("Reason", {"reason": "The score follows from the verdicts."})
    server.fallback = deepeval_answer
    connection.send(server.base_url)
    while True:
        command = connection.recv()
        if command == "count":
            connection.send(len(server.requests))
        elif command == "peak":
            connection.send(server.max_in_flight)
        elif command == "bodies":
            connection.send([(request.schema_name, request.body) for request in server.requests])
        elif command == "reset":
            server.requests.clear()
            server.max_in_flight = server.in_flight
            connection.send(None)
        else:
            server.stop()
            connection.send(None)
            return


def deepeval_answer(request: Any) -> Any:
    """DeepEval's HallucinationMetric asks for its answers under its own schema names
    (json_schema mode); they are told apart by the schema's shape, whatever they are called:
    a list of verdicts (one per context: the bench's items have one) or a reason."""
    from engine.testing import Reply

    properties = (request.answer_schema or {}).get("properties") or {}
    if "verdicts" in properties:
        return {"verdicts": [{"verdict": "yes", "reason": "scripted"}]}
    if "reason" in properties:
        return {"reason": "The score follows from the verdicts."}
    return Reply.fail(400, f"the bench has no answer for schema {request.schema_name!r} (properties {sorted(properties)})")


class Judge:
    """A judge server in a child process, and the line to talk to it."""

    def __init__(self, latency: float) -> None:
        context = multiprocessing.get_context("spawn")
        self.connection, child = context.Pipe()
        self.process = context.Process(target=_serve, args=(child, latency), daemon=True)
        self.process.start()
        self.base_url: str = self.connection.recv()

    def ask(self, command: str) -> Any:
        self.connection.send(command)
        return self.connection.recv()

    def stop(self) -> None:
        self.ask("stop")
        self.process.join(5)


def bare_loop(base_url: str, chains: list[list[dict[str, Any]]], concurrency: int, independent: bool = False) -> tuple[float, float]:
    """Send each chain's bodies one after another, `concurrency` chains at a time, with the
    bare client and no validation; with `independent`, every body on its own, `concurrency`
    requests in flight (the floor for this many calls); (wall seconds, CPU seconds)."""
    import openai

    async def main() -> None:
        client = openai.AsyncOpenAI(base_url=base_url, api_key="bench", max_retries=0)
        slots = asyncio.Semaphore(concurrency)

        async def chain(bodies: list[dict[str, Any]]) -> None:
            async with slots:
                for body in bodies:
                    # The answer's bytes read to the end and nothing parsed: the least a client
                    # receiving the same (streamed) answers can do. Left unread, a response would
                    # hold its connection; parsed by the SDK's stream, it would cost more than
                    # the engine's own reading of the events.
                    async with client.chat.completions.with_streaming_response.create(**body) as answer:
                        await answer.read()

        if independent:
            await asyncio.gather(*(chain([body]) for bodies in chains for body in bodies))
        else:
            await asyncio.gather(*(chain(bodies) for bodies in chains))
        await client.close()

    started, cpu = time.perf_counter(), time.process_time()
    asyncio.run(main())
    return time.perf_counter() - started, time.process_time() - cpu


class AnswersItself:
    """A middleware that answers every step as the scripted judge would, without passing the
    call on: what is left is the engine's own work (rendering, validation, cache, records,
    store), without Instructor or the HTTP client."""

    async def __call__(self, request: Any, call_next: Any) -> Any:
        from engine.judge import JudgeAnswer

        prompt = request.messages[-1]["content"]
        output = re.search(r"<output>\n(.*?)\n</output>", prompt, re.DOTALL)
        if request.step == "preprocess":
            answer: Any = {"claims": [claim.strip() for claim in (output.group(1) if output else "").split(". ") if claim.strip()]}
        elif request.step == "analyze":
            found = [json.loads(line.split(". ", 1)[1]) for line in re.findall(r"^\d+\. \".*\"$", prompt, re.MULTILINE)]
            answer = {"verdicts": [{"statement": claim, "verdict": "yes" if "wrong" in claim else "no", "reason": "scripted"} for claim in found]}
        else:
            answer = {"reason": "The score follows from the verdicts."}
        return JudgeAnswer(value=request.response_model.model_validate(answer), usage=None)


class AnswersAfter(AnswersItself):
    """As AnswersItself, each answer after `latency` seconds: the batch's scheduling alone,
    without the HTTP client's or Instructor's CPU."""

    def __init__(self, latency: float) -> None:
        self.latency = latency

    async def __call__(self, request: Any, call_next: Any) -> Any:
        await asyncio.sleep(self.latency)
        return await super().__call__(request, call_next)


def engine_batch(
    data: list[dict[str, Any]], concurrency: int, store: Path, cache: Path | bool, run: str, middleware: tuple[Any, ...] = ()
) -> tuple[float, float]:
    from engine import create_hallucination_scorer, run_evals

    scorer = create_hallucination_scorer(middleware=middleware)
    started, cpu = time.perf_counter(), time.process_time()
    result = run_evals(data, [scorer], concurrency=concurrency, store=store, cache=cache, run=run, keep_results=False)
    elapsed, spent = time.perf_counter() - started, time.process_time() - cpu
    assert result.counts.completed == len(data), result.errors[:3]
    return elapsed, spent


def chains_of(bodies: list[tuple[str | None, dict[str, Any]]]) -> list[list[dict[str, Any]]]:
    """The logged requests as 3-call chains (claims, verdicts, reason), one per item."""
    by_step: dict[str | None, list[dict[str, Any]]] = {}
    for name, body in bodies:
        by_step.setdefault(name, []).append(body)
    steps = [by_step["Claims"], by_step["HallucinationVerdicts"], by_step["Reason"]]
    return [list(chain) for chain in zip(*steps)]


#: Rounds of each zero-latency measure (figure 2), alternating; the least CPU of each is shown.
ZERO_LATENCY_ROUNDS = 5
#: Runs of each batch at the judge's latency (figure 1), alternating; the median of each is shown.
LATENCY_ROUNDS = 3


def _seconds(runs: list[float]) -> str:
    return ", ".join(f"{run:.2f} s" for run in runs)

DEEPEVAL_RUNNER = ROOT / "bench" / "deepeval_hallucination.py"
NO_DEEPEVAL = "DeepEval is not installed: pass --deepeval-python /path/to/python of an environment that has it"


def deepeval_problem(python: str) -> str | None:
    """Why `python` cannot run DeepEval, or None if it can (DeepEval is looked for, not
    imported: that takes seconds)."""
    probe = "import importlib.util, sys; sys.exit(importlib.util.find_spec('deepeval') is None)"
    try:
        found = subprocess.run([python, "-c", probe], capture_output=True, timeout=60)
    except OSError as error:
        return f"cannot run it ({error.strerror})"
    except subprocess.TimeoutExpired:
        return "it did not answer within 60 s"
    return None if found.returncode == 0 else "DeepEval is not installed there"


def deepeval_batch(
    python: str, data: list[dict[str, Any]], concurrency: int, judge: Judge, warmup: Judge, folder: Path, tuned: bool, metrics: str = "hallucination"
) -> dict[str, Any]:
    """DeepEval's HallucinationMetric over `data` in its own interpreter, its judge model sent
    to `judge` (warmed up on `warmup`), with its defaults or `tuned`: the runner's figures,
    and the requests `judge` saw."""
    items = folder / "deepeval-items.json"
    items.write_text(json.dumps([{key: item[key] for key in ("input", "output", "context")} for item in data]), encoding="utf-8")
    work = folder / "deepeval"  # DeepEval writes its cache and last run (.deepeval/) in the working folder
    work.mkdir(exist_ok=True)
    judge.ask("reset")
    command = [python, str(DEEPEVAL_RUNNER), str(items), "--base-url", judge.base_url, "--concurrency", str(concurrency), "--warmup-base-url", warmup.base_url]
    command += ["--tuned"] if tuned else []
    command += ["--metrics", metrics]
    try:
        ran = subprocess.run(command, cwd=work, capture_output=True, text=True, timeout=900)
    except subprocess.TimeoutExpired:
        return {"failed": "no result after 900 s"}
    requests, peak = judge.ask("count"), judge.ask("peak")
    judge.ask("reset")
    lines = ran.stdout.strip().splitlines()
    if ran.returncode or not lines:
        return {"failed": (ran.stderr.strip().splitlines() or [f"exit status {ran.returncode}"])[-1]}
    return {**json.loads(lines[-1]), "requests": requests, "peak": peak, "concurrency": concurrency, "tuned": tuned}


STARTUP_COMMANDS = (["--help"], ["list"], ["check"], ["check", str(ROOT / "docs" / "examples" / "tone")])


def startup_times(folder: Path) -> dict[str, dict[str, tuple[float, float]]]:
    """Wall and CPU seconds (best of five each) of `scorers --help`, `list` and `check`
    (the built-in catalog, then a host's), run as an installed package runs them: with its
    bytecode cached (written under `folder` on a first run, so the checkout stays clean).
    `cold`: each run compiles the catalog (no record of it: a fresh cache folder per run);
    `warm`: the catalog is unchanged since it was last found clean, so it is not compiled;
    `edited` (a host's catalog): it is compiled, the built-in one beside it is remembered,
    as after the host's files were edited."""
    scorers = Path(sys.executable).parent / "scorers"
    environment = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}
    environment["PYTHONPYCACHEPREFIX"] = str(folder / "bytecode")
    times: dict[str, dict[str, tuple[float, float]]] = {}
    for arguments in STARTUP_COMMANDS:
        label = " ".join(["scorers", *(Path(argument).name if "/" in argument else argument for argument in arguments)])
        host = len(arguments) > 1
        for kind in ("cold", "warm", "edited") if host else ("cold", "warm"):
            runs = []
            for attempt in range(6):  # the first one writes the bytecode (and, warm, the record)
                # A cache folder of its own for every cold run; one for all warm runs of a command.
                environment["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="user-cache-", dir=folder) if kind == "cold" or not attempt else environment["XDG_CACHE_HOME"]
                if kind == "edited":
                    records = Path(environment["XDG_CACHE_HOME"]) / "llm-scorers" / "catalogs"
                    if not attempt:
                        subprocess.run([str(scorers), "check"], check=True, capture_output=True, env=environment)
                        # None when the built-in catalog was read from the proof the package ships.
                        builtin = set(records.iterdir()) if records.is_dir() else set()
                    for record in (set(records.iterdir()) if records.is_dir() else set()) - builtin:
                        record.unlink()  # the host's catalog is new to it
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                started = time.perf_counter()
                subprocess.run([str(scorers), *arguments], check=True, capture_output=True, env=environment)
                wall = time.perf_counter() - started
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                if attempt:
                    runs.append((wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime))
            times.setdefault(label, {})[kind] = min(runs)
            if arguments == ["--help"]:
                break  # no catalog is read
    return times


# What any command of the CLI loads before the engine does anything: the floor of its start-up.
LIBRARIES_ALONE = (
    "import typer.main, rich.console, jinja2.sandbox, yaml, pydantic\n"
    "class First(pydantic.BaseModel):  # the first model loads pydantic's schema builder and its plugins\n"
    "    value: int\n"
)


def libraries_alone_time() -> tuple[float, float]:
    """Wall and CPU seconds (best of five) of a process importing only what the CLI is built
    on: the baseline the start-up figures are read against, on this machine, in this run."""
    runs = []
    for attempt in range(6):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", LIBRARIES_ALONE], check=True)
        wall = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if attempt:
            runs.append((wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime))
    return min(runs)


def print_startup_times(folder: Path) -> None:
    load = os.getloadavg()[0]
    print(f"\n4. start-up, best of 5, wall / CPU seconds (load average {load:.1f} on {os.cpu_count()} CPUs)")
    for label, kinds in startup_times(folder).items():
        shown = "  ".join(f"{kind}: {wall:.2f} / {cpu:.2f}" for kind, (wall, cpu) in kinds.items())
        print(f"   {label:<22} {shown}")
    wall, cpu = libraries_alone_time()
    print(f"   {'baseline':<22} {wall:.2f} / {cpu:.2f}: Typer, Rich, Jinja, PyYAML and pydantic imported, one model built, nothing else")


STREAM_PROBE = textwrap.dedent(
    """
    import json, resource, sys, time
    from engine import JudgeSettings, load_scorers, run_evals
    catalog = load_scorers(sys.argv[1])
    scorer = catalog.create("length-check", model="openai/none", judge=JudgeSettings(base_url="http://127.0.0.1:9/v1", api_key="unused"))
    started = time.perf_counter()
    result = run_evals(sys.argv[2], [scorer], concurrency=64, store=sys.argv[3], run="stream", keep_results=False, cache=False)
    assert result.counts.completed == int(sys.argv[4]), result.counts
    try:  # the process's own peak: Linux keeps ru_maxrss across exec (it would show the parent's)
        with open("/proc/self/status") as status:
            peak_kb = next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
    except OSError:
        peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"seconds": time.perf_counter() - started, "peak_rss_mb": peak_kb / 1024}))
    """
)


def stream_memory(folder: Path, items: int) -> dict[str, float]:
    catalog = folder / "scorers.yaml"
    catalog.write_text(
        "scorers:\n  length-check:\n    name: Length check\n    description: 1 when the output is short\n"
        "    direction: higher_is_better\n    steps:\n      - id: score\n        kind: score\n"
        "        score: \"1 if (output | length) < 80 else 0\"\n",
        encoding="utf-8",
    )
    data = folder / "many.jsonl"
    with data.open("w", encoding="utf-8") as handle:
        for n in range(items):
            handle.write(json.dumps({"id": f"item-{n}", "input": f"question {n}", "output": f"answer number {n} " * (1 + n % 5), "context": [f"fact {n}"]}) + "\n")
    probe = subprocess.run(
        [sys.executable, "-c", STREAM_PROBE, str(catalog), str(data), str(folder / "stream.sqlite"), str(items)],
        check=True, capture_output=True, text=True,
    )
    return dict(json.loads(probe.stdout.strip().splitlines()[-1]))


def print_deepeval(runs: list[dict[str, Any]] | None, items: int, engine_wall: float, requests: int, latency: float, concurrency: int) -> None:
    """Figure 1's comparison with DeepEval: items/s and requests per item of each run, and the
    engine's items/s against it, beside the most the engine's calls allow."""
    if runs is None:
        print(f"   {NO_DEEPEVAL}")
        return
    ours = items / engine_wall
    ceiling = items / (requests * latency / concurrency)  # every slot busy all the time
    for run in runs:
        how = "tuned (result cache off, one shared HTTP client)" if run["tuned"] else "defaults"
        if "failed" in run:
            print(f"   DeepEval, {how}: the run failed: {run['failed']}")
            continue
        theirs = run["scored"] / run["seconds"]
        print(f"   DeepEval {run['version']} HallucinationMetric, evaluate(max_concurrent={run['concurrency']}), {how}: "
              f"{run['seconds']:6.2f} s  {theirs:6.1f} items/s  {run['requests']} requests ({run['requests'] / items:.2f} an item)")
        if run["scored"] != run["items"]:  # a rate over part of the items compares nothing
            print(f"      scored {run['scored']} of {run['items']} items, so no ratio; first error: {run['error']}")
        else:
            print(f"      ratio engine / DeepEval items/s: {ours / theirs:.2f}x  (aim: at least 2x; the engine {ours:.1f} items/s, "
                  f"{requests / items:.2f} requests an item: at most {ceiling:.1f} items/s at this latency and concurrency)")


HALUEVAL = ROOT / "examples" / "halueval_qa.jsonl"
ONE_CALL = ROOT / "examples" / "variants" / "one-call" / "scorers.yaml"
#: The copy number each output of the repeated HaluEval items carries: "... [12]".
COPY = re.compile(r"\[(\d+)\]")


def halueval_items(count: int) -> list[dict[str, Any]]:
    """The shipped HaluEval items, repeated to `count`, each output marked with its copy
    number so no two items ask the same question."""
    shipped = [json.loads(line) for line in HALUEVAL.read_text(encoding="utf-8").splitlines() if line.strip()]
    items = []
    for n in range(count):
        item = dict(shipped[n % len(shipped)])
        items.append({**item, "id": f"{item['id']}-{n}", "output": f"{item['output']} [{n}]"})
    return items


def _serve_halueval(connection: Connection, latency: float, hallucinated: list[bool]) -> None:
    """A judge for figure 6 that knows which items are hallucinated (by the copy number in the
    text it is shown): the engine's schemas by name, DeepEval's by their shape."""
    from engine.testing import JudgeServer, Reply, Request

    server = JudgeServer().start()
    server.latency = latency

    def wrong(request: Request) -> bool:
        found = COPY.search(request.prompt)
        return bool(found) and hallucinated[int(found.group(1))]

    def output_of(request: Request) -> str:
        found = re.search(r"<output>\n(.*?)\n</output>", request.prompt, re.DOTALL)
        return found.group(1) if found else "the output"

    def numbered(request: Request) -> list[str]:
        return [json.loads(line.split(". ", 1)[1]) for line in re.findall(r"^\d+\. \".*\"$", request.prompt, re.MULTILINE)]

    def verdicts(yes_when_wrong: bool, request: Request) -> dict[str, Any]:
        bad = wrong(request)
        verdict = ("yes" if bad else "no") if yes_when_wrong else ("no" if bad else "yes")
        return {"verdicts": [{"statement": claim, "verdict": verdict, "reason": "scripted"} for claim in numbered(request)]}

    def deepeval(request: Request) -> Any:
        properties = (request.answer_schema or {}).get("properties") or {}
        for listed in ("truths", "claims", "statements"):
            if listed in properties:
                return {listed: [f"the statement of the output {COPY.search(request.prompt).group(0) if COPY.search(request.prompt) else ''}"]}
        if "verdicts" in properties:  # one per context, claim or statement: the bench's items have one each
            relevancy = "statement" in request.prompt.lower() and "relevan" in request.prompt.lower()
            return {"verdicts": [{"verdict": "yes" if relevancy or not wrong(request) else "no", "reason": "scripted"}]}
        if "reason" in properties:
            return {"reason": "The score follows from the verdicts."}
        return Reply.fail(400, f"the bench has no answer for schema {request.schema_name!r} (properties {sorted(properties)})")

    server.on("Claims", lambda request: {"claims": [output_of(request)]} if "<output>" in request.prompt else deepeval(request))
    server.on("HallucinationVerdicts", lambda request: verdicts(True, request))
    server.on("FaithfulnessVerdicts", lambda request: verdicts(False, request))
    server.on("AnswerRelevancyStatements", lambda request: {"statements": [output_of(request)]})
    server.on("AnswerRelevancyVerdicts", lambda request: {"verdicts": [{"statement": claim, "verdict": "yes", "reason": "scripted"} for claim in numbered(request)]})
    server.on("ClaimVerdicts", lambda request: {"verdicts": [{"statement": output_of(request), "verdict": "yes" if wrong(request) else "no", "reason": "scripted"}]})
    server.on("Reason", {"reason": "The score follows from the verdicts."})
    server.fallback = deepeval
    connection.send(server.base_url)
    while True:
        command = connection.recv()
        if command == "count":
            connection.send(len(server.requests))
        elif command == "peak":
            connection.send(server.max_in_flight)
        elif command == "reset":
            server.requests.clear()
            server.max_in_flight = server.in_flight
            connection.send(None)
        else:
            server.stop()
            connection.send(None)
            return


class HaluEvalJudge(Judge):
    """Figure 6's judge in a child process."""

    def __init__(self, latency: float, hallucinated: list[bool]) -> None:
        context = multiprocessing.get_context("spawn")
        self.connection, child = context.Pipe()
        self.process = context.Process(target=_serve_halueval, args=(child, latency, hallucinated), daemon=True)
        self.process.start()
        self.base_url = self.connection.recv()


#: Figure 6's engine runs: (label, scorer ids, catalog of the variant or None).
ENGINE_RUNS: tuple[tuple[str, tuple[str, ...], Path | None], ...] = (
    ("hallucination", ("hallucination",), None),
    ("hallucination, one-call variant", ("hallucination",), ONE_CALL),
    ("suite: hallucination, faithfulness, answer relevancy", ("hallucination", "faithfulness", "answer-relevancy"), None),
)
#: Figure 6's DeepEval runs: (label, its metrics), and the engine runs each is set beside with the aim of the ratio.
DEEPEVAL_RUNS = (("HallucinationMetric", "hallucination"), ("Hallucination, Faithfulness and AnswerRelevancy metrics", "hallucination,faithfulness,answer_relevancy"))
AIMS = {0: (0, 0.78), 1: (0, 1.3), 2: (1, 1.3)}  # engine run -> (DeepEval run, aim of engine items/s / DeepEval items/s)


def halueval_calls(arguments: argparse.Namespace, deepeval_python: str | None, folder: Path) -> None:
    """Figure 6: calls per item and items/s, the engine's runs beside DeepEval's."""
    from engine import JudgeSettings, load_scorers, run_evals
    from engine.catalog import builtin_catalog

    items = halueval_items(arguments.items)
    hallucinated = [bool(item["expected"]["hallucination"]) for item in items]
    judge, warmup = HaluEvalJudge(arguments.latency, hallucinated), HaluEvalJudge(0.0, hallucinated)
    engine_rows: list[tuple[str, float, int, float, int]] = []
    deepeval_rows: list[dict[str, Any] | None] = []

    def engine_run(number: int, label: str, scorer_ids: tuple[str, ...], catalog: Path | None, concurrency: int) -> None:
        source = load_scorers(catalog) if catalog is not None else builtin_catalog()
        for base_url, data in ((warmup.base_url, items[:8]), (judge.base_url, items)):  # warm up, then the timed run
            os.environ["OPENAI_BASE_URL"] = base_url
            scorers = [source.create(scorer_id) for scorer_id in scorer_ids]
            judge.ask("reset")
            started = time.perf_counter()
            result = run_evals(
                data, scorers, concurrency=concurrency, store=folder / f"calls-{number}-{base_url[-5:]}.sqlite",
                cache=folder / f"calls-cache-{number}-{base_url[-5:]}.sqlite", run=f"calls-{number}", keep_results=False, reasons="failing",
            )
            elapsed = time.perf_counter() - started
        assert result.counts.completed == len(items), result.errors[:3]
        engine_rows.append((label, elapsed, judge.ask("count"), load_average(), judge.ask("peak")))

    try:
        os.environ["OPENAI_API_KEY"] = "bench"
        for number, (label, scorer_ids, catalog) in enumerate(ENGINE_RUNS):
            engine_run(number, label, scorer_ids, catalog, arguments.concurrency)
        for label, metrics in DEEPEVAL_RUNS:
            judge.ask("reset")
            deepeval_rows.append(
                deepeval_batch(deepeval_python, items, arguments.concurrency, judge, warmup, folder, tuned=True, metrics=metrics) if deepeval_python else None
            )
        suite = deepeval_rows[1]
        if suite is not None and "peak" in suite and suite["peak"] > arguments.concurrency:
            # DeepEval's max_concurrent bounds test cases, not calls: its suite had more calls in
            # flight than the engine's bound. The engine again, with as many in flight.
            label, scorer_ids, catalog = ENGINE_RUNS[2]
            engine_run(len(ENGINE_RUNS), f"{label}, {suite['peak']} calls in flight as DeepEval had", scorer_ids, catalog, suite["peak"])
    finally:
        judge.stop()
        warmup.stop()
    count = len(items)
    print(f"\n6. {count} HaluEval items ({sum(hallucinated)} hallucinated), judge latency {arguments.latency * 1000:.0f} ms, "
          f"concurrency {arguments.concurrency}; reasons for failing items only; cache and store on")
    for label, elapsed, requests, load, peak in engine_rows:
        ceiling = count / (requests * arguments.latency / max(peak, 1))
        print(f"   engine {label}: {elapsed:6.2f} s  {count / elapsed:6.1f} items/s  {requests / count:.2f} calls an item"
              f"  (at most {peak} calls in flight: ceiling {ceiling:.1f} items/s; load {load:.1f})")
    for (label, metrics), run in zip(DEEPEVAL_RUNS, deepeval_rows):
        if run is None:
            print(f"   DeepEval {label}: {NO_DEEPEVAL}")
        elif "failed" in run:
            print(f"   DeepEval {label}: the run failed: {run['failed']}")
        else:
            ceiling = count / (run["requests"] * arguments.latency / max(run["peak"], 1))
            print(f"   DeepEval {run['version']} {label}, tuned: {run['seconds']:6.2f} s  {run['scored'] / run['seconds']:6.1f} items/s"
                  f"  {run['requests'] / count:.2f} calls an item  (at most {run['peak']} calls in flight: ceiling {ceiling:.1f} items/s;"
                  f" scored {run['scored']} of {run['items']})")
    aims = {**AIMS, **({len(ENGINE_RUNS): AIMS[2]} if len(engine_rows) > len(ENGINE_RUNS) else {})}
    for engine_index, (deepeval_index, aim) in aims.items():
        run = deepeval_rows[deepeval_index]
        label, elapsed, requests, _, _ = engine_rows[engine_index]
        if run is None or "failed" in run or run["scored"] != run["items"]:
            continue
        ratio = (count / elapsed) / (run["scored"] / run["seconds"])
        calls = (run["requests"] / count) / (requests / count)
        print(f"   ratio engine {label} / DeepEval {DEEPEVAL_RUNS[deepeval_index][0]} items/s: {ratio:.2f}x (aim: at least {aim}x; "
              f"calls an item {requests / count:.2f} against {run['requests'] / count:.2f}: at most {calls:.2f}x at equal latency)")


def load_average() -> float:
    return os.getloadavg()[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=200, help="Items of the hallucination batch (figures 1 to 3)")
    parser.add_argument("--latency", type=float, default=0.5, help="Seconds per judge answer")
    parser.add_argument("--concurrency", type=int, default=64, help="Judge calls in flight (DeepEval's max_concurrent)")
    parser.add_argument("--stream-items", type=int, default=100_000, help="Items of the streamed file (figure 5)")
    parser.add_argument("--scheduling-latency", type=float, default=2.0,
                        help="Seconds per answer when measuring the scheduling alone (long, so a loaded CPU does not blur it)")
    parser.add_argument("--batch-only", action="store_true", help="Only figures 1 to 3: the batch, CPU per call, the re-run")
    parser.add_argument("--startup-only", action="store_true", help="Only figure 4: how fast `scorers --help`, `list` and `check` start")
    parser.add_argument("--calls-only", action="store_true", help="Only figure 6: calls per item and items/s on HaluEval items, beside DeepEval's metrics")
    parser.add_argument("--deepeval-python", metavar="PATH",
                        help="The Python of an environment with DeepEval installed, for figure 1's comparison "
                        "(default: this interpreter, if it has DeepEval; else the figure says it is not installed)")
    arguments = parser.parse_args()
    deepeval_python: str | None = arguments.deepeval_python or sys.executable
    problem = None if arguments.startup_only else deepeval_problem(str(deepeval_python))
    if problem:
        if arguments.deepeval_python:
            parser.error(f"--deepeval-python {arguments.deepeval_python}: {problem}")
        deepeval_python = None

    print(f"machine: {platform.platform()}, Python {platform.python_version()}, {os.cpu_count()} CPUs; load average {' '.join(f'{value:.2f}' for value in os.getloadavg())}")
    folder = Path(tempfile.mkdtemp(prefix="bench-judge-calls-"))
    if arguments.startup_only:
        print_startup_times(folder)
        return
    if arguments.calls_only:
        halueval_calls(arguments, deepeval_python, folder)
        return
    os.environ["OPENAI_API_KEY"] = "bench"
    os.environ["SCORERS_CACHE"] = str(folder / "warmup-cache.sqlite")
    data = [
        {"id": f"i{n}", "input": f"question {n}?", "output": f"The answer is {n}. It is wrong {n}. More {n}", "context": [f"fact {n}"]}
        for n in range(arguments.items)
    ]

    slow, fast = Judge(arguments.latency), Judge(0.0)
    try:
        # Warm up both clients (imports, connections) on the zero-latency judge.
        os.environ["OPENAI_BASE_URL"] = fast.base_url
        engine_batch(data[:8], 8, folder / "warmup.sqlite", False, "warmup")
        warm_chains = chains_of(fast.ask("bodies"))
        bare_loop(fast.base_url, warm_chains, 8)
        fast.ask("reset")

        # 2. CPU per judge call at zero latency: the least of ZERO_LATENCY_ROUNDS alternating
        # rounds of each, as a second or two of CPU moves with whatever else the machine does.
        engine_rounds, bare_rounds, own_rounds = [], [], []
        for round_number in range(ZERO_LATENCY_ROUNDS):
            # Each measure starts from a collected heap, so a full collection owed to earlier
            # rounds' garbage does not land in whichever measure happens to cross its threshold.
            gc.collect()
            engine_rounds.append(engine_batch(data, arguments.concurrency, folder / f"zero-{round_number}.sqlite", False, "zero"))
            calls_zero = fast.ask("count")
            chains = chains_of(fast.ask("bodies"))
            fast.ask("reset")
            gc.collect()
            bare_rounds.append(bare_loop(fast.base_url, chains, arguments.concurrency))
            assert fast.ask("count") == calls_zero
            fast.ask("reset")
            gc.collect()
            own_rounds.append(engine_batch(
                data, arguments.concurrency, folder / f"own-{round_number}.sqlite", folder / f"own-cache-{round_number}.sqlite", "own", (AnswersItself(),)
            ))
        (engine_wall0, engine_cpu), (bare_wall0, bare_cpu), (own_wall, own_cpu) = (min(rounds, key=lambda r: r[1]) for rounds in (engine_rounds, bare_rounds, own_rounds))

        # 1. The cold batch at `latency` (a new response cache and results store each time),
        # alternating with bare loops sending the same bodies as independent requests and as
        # chains (one item at a time per slot): the median of each, every run printed, as a
        # few seconds of wall time move with whatever else the machine does.
        os.environ["OPENAI_BASE_URL"] = slow.base_url
        engine_runs, bare_runs, chained_runs = [], [], []
        for round_number in range(LATENCY_ROUNDS):
            bare_runs.append(bare_loop(slow.base_url, chains, arguments.concurrency, independent=True)[0])
            slow.ask("reset")
            cache, results = folder / f"responses-{round_number}.sqlite", folder / f"results-{round_number}.sqlite"
            engine_runs.append(engine_batch(data, arguments.concurrency, results, cache, "cold")[0])
            requests = slow.ask("count")
            slow.ask("reset")
            chained_runs.append(bare_loop(slow.base_url, chains, arguments.concurrency)[0])
            slow.ask("reset")
        engine_wall, bare_wall, chained_wall = (statistics.median(runs) for runs in (engine_runs, bare_runs, chained_runs))

        # Figure 1 beside DeepEval's HallucinationMetric: the same items, the same judge, its defaults then tuned.
        deepeval = [deepeval_batch(deepeval_python, data, arguments.concurrency, slow, fast, folder, tuned) for tuned in (False, True)] if deepeval_python else None

        # 1b. Scheduling alone: every answer after `latency`, no HTTP, no Instructor.
        answers_after = AnswersAfter(arguments.scheduling_latency)
        scheduled_wall, _ = engine_batch(data, arguments.concurrency, folder / "scheduled.sqlite", False, "scheduled", (answers_after,))

        # 3. The unchanged batch under a new run name.
        rerun_wall, _ = engine_batch(data, arguments.concurrency, results, cache, "again")  # the last cold run's cache and store
        rerun_requests = slow.ask("count")
    finally:
        slow.stop()
        fast.stop()

    items = arguments.items
    print(f"\n1. {items}-item hallucination batch, judge latency {arguments.latency * 1000:.0f} ms, concurrency {arguments.concurrency}")
    print(f"   engine (cache + store on): {engine_wall:6.2f} s  {items / engine_wall:6.1f} items/s  {requests} requests  (runs: {_seconds(engine_runs)})")
    print(f"   bare AsyncOpenAI loop, {len(chains) * 3} independent requests, {arguments.concurrency} in flight: {bare_wall:6.2f} s"
          f"  (runs: {_seconds(bare_runs)}; floor {len(chains) * 3 * arguments.latency / arguments.concurrency:.2f} s)")
    print(f"   bare AsyncOpenAI loop, the same requests as 3-call chains, {arguments.concurrency} chains at a time: {chained_wall:6.2f} s"
          f"  (runs: {_seconds(chained_runs)})")
    print(f"   (medians of {LATENCY_ROUNDS} alternating runs of each; ratios of the run pairs: "
          f"{', '.join(f'{engine / bare:.3f}' for engine, bare in zip(engine_runs, bare_runs))})")
    print(f"   ratio engine / bare independent requests: {engine_wall / bare_wall:.3f}x  (aim: at most 1.10x)")
    print(f"   ratio engine / bare chains: {engine_wall / chained_wall:.3f}x")
    rounds = math.ceil(len(chains) * 3 / arguments.concurrency)
    print(f"   scheduling alone (a middleware answers each call after {arguments.scheduling_latency:g} s; no HTTP, no Instructor): "
          f"{scheduled_wall:.2f} s against {rounds * arguments.scheduling_latency:.2f} s for {rounds} full rounds of {arguments.concurrency} calls"
          f" ({scheduled_wall / (rounds * arguments.scheduling_latency):.3f}x)")
    print_deepeval(deepeval, items, engine_wall, requests, arguments.latency, arguments.concurrency)
    print(f"\n2. CPU per judge call at zero latency ({calls_zero} calls; the least of {ZERO_LATENCY_ROUNDS} alternating rounds of each)")
    print(f"   engine: {engine_cpu / calls_zero * 1000:.2f} ms  (wall {engine_wall0:.2f} s)")
    print(f"   bare AsyncOpenAI loop: {bare_cpu / calls_zero * 1000:.2f} ms  (wall {bare_wall0:.2f} s)")
    print(f"   engine with a middleware answering instead of a model: {own_cpu / calls_zero * 1000:.2f} ms  (wall {own_wall:.2f} s)")
    above = engine_cpu - bare_cpu
    print(f"   so: the engine and Instructor add {above / calls_zero * 1000:.2f} ms a call to the HTTP client's {bare_cpu / calls_zero * 1000:.2f} ms"
          f" ({above / bare_cpu:.0%} of it; aim: at most 50%); the engine's own work, run alone: {own_cpu / calls_zero * 1000:.2f} ms"
          f" ({own_cpu / bare_cpu:.0%})")
    if own_cpu > above:
        # Instructor's share is the difference of three noisy figures: not printed when it would be negative.
        print("   (the engine run alone costs more than the difference above: Instructor's share is within the noise)")
    print(f"\n3. unchanged re-run under a new run name: {rerun_wall:.2f} s, {rerun_requests} requests")
    if arguments.batch_only:
        return
    print_startup_times(folder)
    streamed = stream_memory(folder, arguments.stream_items)
    print(f"\n5. {arguments.stream_items:,} streamed items (no judge): peak RSS {streamed['peak_rss_mb']:.0f} MB, {streamed['seconds']:.1f} s")
    halueval_calls(arguments, deepeval_python, folder)
    print(f"\n(this process's peak RSS: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB; files in {folder})")


if __name__ == "__main__":
    main()
