"""The judge-quality scorecard: every shipped labelled set, every scorer it labels, judged
three times by one judge (not a test).

    python bench/judge_quality.py --model PROVIDER/MODEL [--base-url URL] [--sample N] [--repeats 3] [--set NAME ...]
                                  [--escalate-to PROVIDER/MODEL]

Printed per (set, scorer): the items judged, precision, recall, F1, balanced accuracy and
Cohen's kappa with bootstrap 95% intervals (first repeat, at the scorer's default threshold,
half its scale), the share of items whose verdict changed across the repeats, and the judge
calls and estimated cost per 100 items. Then the same rows as Markdown, ready for
docs/quality.md. Every figure comes from engine.runs.measures.stats, as `scorers eval` shows it.

With `--faithbench PATH/FaithBench.csv`, FaithBench (summaries labelled by people; CC BY-NC-SA
4.0, so it is read where it lies and never shipped) is scored too: a summary is flagged when
its worst label is Unwanted or Questionable.

With `--queue NAME` (repeatable), the golden set of a review queue of `--labels-store` (the
items whose label people settled or agreed on, docs/labelling.md) is scored for its queue's
scorer; the shipped sets are then scored only when named with `--set`.

Results are stored (--store): a rerun with the same settings resumes.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import datetime
import json
from pathlib import Path
from typing import Any

from engine import JudgeSettings, builtin_catalog
from engine.runs import run_repeated
from engine.runs.items import read_jsonl, select_items
from engine.runs.results import FigureEstimate
from engine.runs.measures.stats import agreement_of, human_flags, usage_cost
from engine.runs.tuning import labelled_of
from engine.runs.labels import queue_data, queue_name, read_queue
from engine.store import open_store

ROOT = Path(__file__).resolve().parent.parent
#: The labelled sets shipped in examples/ (see examples/README.md for their sources and licences).
SETS = ("halueval_qa.jsonl", "halueval_qa_pairs.jsonl", "begin_faithfulness.jsonl")
FIGURES = ("precision", "recall", "f1", "balanced_accuracy", "kappa")


def faithbench_items(path: Path) -> list[dict[str, Any]]:
    """FaithBench's rows as labelled items: the summary judged against its source."""
    with path.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    items = []
    for number, row in enumerate(rows, start=1):
        flagged = row["worst-label"].strip() in ("Unwanted", "Questionable")
        items.append({
            "id": f"faithbench-{number}", "output": row["summary"].strip(), "context": [row["source"].strip()],
            "metadata": {"llm": row["LLM"], "worst_label": row["worst-label"]}, "expected": {"hallucination": flagged, "faithfulness": flagged},
        })
    return items


def labelled_scorers(path: Path) -> list[str]:
    """The scorer ids a set's items carry labels for, in the order first met."""
    found: dict[str, None] = {}
    for item in read_jsonl(path):
        expected = item.get("expected") if isinstance(item, dict) else None
        if isinstance(expected, dict):
            found.update(dict.fromkeys(expected))
    return list(found)


def shown(estimate: FigureEstimate | None) -> str:
    if estimate is None or estimate.value is None:
        return "-"
    if estimate.low is None or estimate.high is None:
        return f"{estimate.value:.2f}"
    return f"{estimate.value:.2f} [{estimate.low:.2f}, {estimate.high:.2f}]"


def score_set(path: Path, scorer_id: str, arguments: argparse.Namespace) -> dict[str, Any]:
    """One row of the scorecard: the set judged `repeats` times by the scorer."""
    scorer = builtin_catalog().create(scorer_id, model=arguments.model, judge=JudgeSettings(base_url=arguments.base_url, escalate_to=arguments.escalate_to))
    items = faithbench_items(path) if path.suffix == ".csv" else queue_items(path, arguments) if queue_name(path) else path
    data = select_items(items, None, arguments.sample, arguments.seed)
    judge = scorer.judge.model
    run = f"quality-{path.stem}-{scorer_id}-{judge.replace('/', '_').replace('>', '-to-')}" + (f"-n{arguments.sample}s{arguments.seed}" if arguments.sample else "")
    # No response cache: every step is a real call, so calls and cost are those of a cold run;
    # the store still resumes a run that stopped.
    repeated = run_repeated(
        data, [scorer], repeat=arguments.repeats, run=run, store=arguments.store, concurrency=arguments.concurrency, cache=False,
        meta={"data": str(path)},
    )
    first = repeated.results[0]
    direction = scorer.plan.direction
    labelled = [
        dataclasses.replace(item, expected=human_flags(item.expected, scorer.pass_line.scale / 2, direction)) for item in labelled_of(first, scorer.id)
    ]
    agreement = agreement_of(labelled, scorer.pass_line.value, direction) if labelled else None
    binary = agreement.binary if agreement is not None else None
    stability = repeated.stability[scorer.id]
    judged = sum(result.summary[scorer.id].total for result in repeated.results) or 1
    store = open_store(arguments.store)
    assert store is not None
    try:  # what the stored results cost, also those an earlier invocation paid for
        usages = [usage for name in repeated.runs for usage in store.usage(name) if usage.scorer_id == scorer.id]
    finally:
        store.close()
    costs = [usage_cost(usage) for usage in usages]
    return {
        "set": path.name, "scorer": scorer_id, "judge": judge + _sent_on(getattr(first.summary[scorer.id], "cascade", None)), "date": datetime.date.today().isoformat(),
        "items": len(labelled), "repeats": arguments.repeats,
        **{name: getattr(binary, name) if binary is not None else None for name in FIGURES},
        "verdict_changed": None if stability.consistency is None else round(1 - stability.consistency, 4),
        "calls_per_100": round(100 * sum(usage.judge_calls + usage.cached_calls for usage in usages) / judged, 1),
        "cost_per_100": None if any(cost is None for cost in costs) else round(100 * sum(cost or 0.0 for cost in costs) / judged, 4),
    }


def queue_items(path: Path, arguments: argparse.Namespace) -> list[dict[str, Any]]:
    """A queue's golden set (`queue:NAME`), read from the store people labelled it in."""
    labels = open_store(arguments.labels_store)
    assert labels is not None
    try:
        return queue_data(labels, str(queue_name(path)))
    finally:
        labels.close()


def queue_scorer(name: str, arguments: argparse.Namespace) -> str:
    labels = open_store(arguments.labels_store)
    assert labels is not None
    try:
        return read_queue(labels, name).queue.scorer_id
    finally:
        labels.close()


def _sent_on(cascade: Any) -> str:
    """A cascade's share of items and cost that reached its strong judge, for the judge cell."""
    if cascade is None or not cascade.items:
        return ""
    cost = f", {cascade.strong_cost_share:.0%} of the cost" if cascade.strong_cost_share is not None else ""
    return f" ({cascade.escalated / cascade.items:.0%} of items sent on{cost})"


def markdown_row(row: dict[str, Any]) -> str:
    changed = "-" if row["verdict_changed"] is None else f"{row['verdict_changed']:.0%}"
    cost = "-" if row["cost_per_100"] is None else f"${row['cost_per_100']:.4f}"
    cells = [row["set"], row["scorer"], row["judge"], row["date"], str(row["items"]), *(shown(row[name]) for name in FIGURES), changed, f"{row['calls_per_100']:g}", cost]
    return "| " + " | ".join(cells) + " |"


HEADER = "| set | scorer | judge | date | items | precision | recall | F1 | balanced accuracy | κ | verdict changed (3 runs) | calls / 100 items | cost / 100 items |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True, help="The judge, as provider/model")
    parser.add_argument("--base-url", default=None, help="An OpenAI-compatible endpoint for the judge")
    parser.add_argument("--escalate-to", default=None, help="A strong judge: a cascade from --model to it (its row names both)")
    parser.add_argument("--sample", type=int, default=None, help="N items of each set, drawn at random (reproducible with --seed)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeats", type=int, default=3, help="Times every item is judged (distinct samples)")
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--store", default=str(Path(".scorers") / "quality.sqlite"))
    parser.add_argument("--examples", type=Path, default=ROOT / "examples", help="Where the labelled sets are")
    parser.add_argument("--set", action="append", choices=SETS, dest="sets", help="Only this shipped set (repeatable; default: all), e.g. for a slow local judge")
    parser.add_argument("--faithbench", type=Path, default=None, help="FaithBench.csv, scored too when given (not shipped: CC BY-NC-SA)")
    parser.add_argument("--json", action="store_true", help="Print the rows as JSON")
    parser.add_argument("--queue", action="append", default=[], help="A review queue whose golden set is scored too (repeatable)")
    parser.add_argument("--labels-store", default=str(Path(".scorers") / "results.sqlite"), help="The results store holding the queues")
    arguments = parser.parse_args()

    if arguments.faithbench is not None and not arguments.faithbench.is_file():
        parser.error(f"--faithbench {arguments.faithbench}: no such file")
    rows = []
    # The shipped sets, unless only queues are asked for.
    shipped = arguments.sets or ([] if arguments.queue else list(SETS))
    sets = [arguments.examples / name for name in shipped] + ([arguments.faithbench] if arguments.faithbench else [])
    sets += [Path(f"queue:{name}") for name in arguments.queue]
    for path in sets:
        name = path.name
        scorer_ids = [queue_scorer(name.split(":", 1)[1], arguments)] if queue_name(path) else labelled_scorers(path) if path.suffix != ".csv" else ["hallucination", "faithfulness"]
        for scorer_id in scorer_ids:
            rows.append(score_set(path, scorer_id, arguments))
            if not arguments.json:
                print(f"{name} with {scorer_id}: {rows[-1]['items']} labelled items judged {arguments.repeats} times", flush=True)
    if arguments.json:
        print(json.dumps(rows, indent=2, default=lambda value: value.model_dump()))
        return
    print()
    print(HEADER)
    print("|" + " --- |" * HEADER.count(" | ") + " --- |")
    for row in rows:
        print(markdown_row(row))


if __name__ == "__main__":
    main()
