"""What CI reads from `eval` beside the summary: how `--gate` compared each threshold (the
mean, or a bound of its 95% interval, decided in `runs/verdict.py`), and `--repeat N`'s
consistency table."""

from __future__ import annotations

from collections.abc import Iterable

from rich.table import Table

from ..runs import EvalResult
from ..runs.tuning import Stability
from .app import console
from .tables import figure, percent


def print_gates(result: EvalResult) -> None:
    """One line per gated scorer: the interval and the bound the threshold was compared with."""
    for item in result.summary.values():
        if item.mean_interval is None or item.threshold is None:
            continue
        interval = item.mean_interval
        verdict = "pass" if item.passed else "FAIL"
        known = interval.low is not None and interval.high is not None
        spread = f"95% interval [{figure(interval.low)}, {figure(interval.high)}]" if known else "no 95% interval from one score (its bounds are -inf and inf)"
        console.print(
            f"{item.scorer_id}: mean {figure(interval.value)}, {spread}; "
            f"the {item.gate} bound against the threshold {figure(item.threshold)}: {verdict}",
            highlight=False, soft_wrap=True,
        )


def consistency_table(stabilities: Iterable[Stability]) -> Table:
    """`eval --repeat N`: per scorer, the share of items whose verdict is the same in every
    repeat, and how much verdicts and scores move."""
    table = Table(title="consistency over repeated judgements", title_justify="left")
    for column in ("scorer", "repeats", "items", "consistent", "unstable items", "verdicts off the majority", "mean spread", "threshold"):
        table.add_column(column, justify="left" if column == "scorer" else "right", no_wrap=column == "scorer")
    for stability in stabilities:
        table.add_row(
            stability.scorer_id, str(stability.repeats), str(stability.items), percent(stability.consistency), str(stability.unstable),
            percent(stability.flip_rate), figure(stability.mean_spread), figure(stability.threshold),
        )
    return table
