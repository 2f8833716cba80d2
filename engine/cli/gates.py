"""What CI reads from `eval`: `--gate`, a threshold gate on the mean or on a bound of its 95%
interval, so that a pipeline fails only when the judge is sure (`--gate lower` for a
lower-is-better scorer); and `--repeat N`'s consistency table."""

from __future__ import annotations

from collections.abc import Iterable

from rich.table import Table

from ..errors import ConfigError
from ..runs import EvalResult, ItemResult
from ..runs.results import run_passed
from ..runs.measures.stats import GATES, Gate, gate_passed, mean_estimate
from ..runs.tuning import Stability
from .app import console
from .tables import figure, percent


class GateScores:
    """The scores a gate on an interval needs, gathered as items complete (resumed ones too):
    floats only, so a long streamed run stays small."""

    def __init__(self, gate: str) -> None:
        if gate not in GATES:
            raise ConfigError(f"--gate must be one of {', '.join(GATES)}, got {gate!r}")
        self.gate: Gate = gate
        self.scores: dict[str, list[float]] = {}

    def add(self, item: ItemResult) -> None:
        if self.gate == "mean":
            return
        for scorer_id, outcome in item.results.items():
            if outcome.ok and outcome.score is not None:
                self.scores.setdefault(scorer_id, []).append(outcome.score)

    def apply(self, result: EvalResult) -> EvalResult:
        """The result with each threshold's verdict taken at the gate, and the run's verdict again."""
        if self.gate == "mean":
            return result
        summary = dict(result.summary)
        for scorer_id, item in summary.items():
            if item.threshold is None:
                continue
            estimate = mean_estimate(self.scores.get(scorer_id, []))
            passed = item.count > 0 and gate_passed(estimate, item.threshold, item.direction, self.gate)
            summary[scorer_id] = item.model_copy(update={"gate": self.gate, "mean_interval": estimate, "passed": passed})
        passed = run_passed(summary, result.counts.failed, result.max_errors, stopped=result.stopped_by is not None or result.stopped is not None)
        return result.model_copy(update={"summary": summary, "passed": passed})


def print_gates(result: EvalResult) -> None:
    """One line per gated scorer: the interval and the bound the threshold was compared with."""
    for item in result.summary.values():
        if item.mean_interval is None or item.threshold is None:
            continue
        interval = item.mean_interval
        verdict = "pass" if item.passed else "FAIL"
        console.print(
            f"{item.scorer_id}: mean {figure(interval.value)}, 95% interval [{figure(interval.low)}, {figure(interval.high)}]; "
            f"the {item.gate} bound against the threshold {figure(item.threshold)}: {verdict}",
            highlight=False, soft_wrap=True,
        )  # fmt: skip


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
        )  # fmt: skip
    return table
