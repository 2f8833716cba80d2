"""Whether a run passed: the one place it is decided, for every runner and every view.

`eval`, `run_evals`, `compare`, `rescore`, `pairwise`, `align`, the Batch API runner, the
workbench, the report and `scorers results` all hand their counts to `decide` (a stored run's
through `stored_verdict` in `runs/stored/reading.py`), so a run that one of them calls passed
cannot be called failed by another. A run passes only when all of these hold:

- it was not stopped early (by the judge, the store, the budget or the user);
- every scorer scored at least one item;
- every scorer covered at least `min_coverage` of the items (a share, 1.0 by default): an
  item that failed or that the scorer could not judge is not covered, and is listed with
  its reason; a lower floor is the caller's explicit choice, and the verdict says so (failed
  items within `max_errors` are the caller's explicit allowance too, and are not held
  against the floor a second time);
- no more items failed than `max_errors` allows;
- every scorer with a threshold (the run's, else its YAML `threshold:`) met it: its mean, or
  the chosen bound of the mean's 95% interval (`gate`), on the pass side of the line, a
  value on the line passing (the scorer's `PassLine`, `scoring/pass_line.py`);
- with `min_confidence`, no scored item's confidence (the chance its pass/fail would be the
  same were the judge asked again) fell below it, where the judge gave one.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ..errors import ConfigError
from ..scoring.pass_line import Direction, PassLine, passes
from ..store import ScoreStats

Gate = Literal["mean", "lower", "upper"]
GATES: tuple[Gate, ...] = ("mean", "lower", "upper")


class Standard(BaseModel):
    """What a run must meet to pass, as its caller set it (each field has a flag of `eval`)."""

    model_config = ConfigDict(frozen=True)

    thresholds: dict[str, float] = Field(default_factory=dict, description="Per scorer id, the pass line (--threshold); else its YAML threshold")
    gate: Gate = Field(default="mean", description="What a threshold is compared with: the mean, or a bound of its 95% interval (--gate)")
    min_coverage: float = Field(default=1.0, description="The share of the items each scorer must score (--min-coverage)")
    max_errors: int | str | None = Field(default=None, description="Failed items allowed: N, or 'N%' of the items (--max-errors)")
    min_confidence: float | None = Field(default=None, ge=0, le=1, description="The least confidence a scored item may have (--min-confidence)")

    @field_validator("gate")
    @classmethod
    def _known_gate(cls, value: str) -> str:
        if value not in GATES:
            raise ValueError(f"gate must be one of {', '.join(GATES)}, got {value!r}")
        return value

    @field_validator("min_coverage")
    @classmethod
    def _share(cls, value: float) -> float:
        if not 0.0 <= value <= 1.0:
            raise ValueError(f"min_coverage is a share of the items, from 0 to 1 (0.95 for 95%), got {value!r}")
        return value

    @classmethod
    def of(
        cls,
        thresholds: Mapping[str, float] | None = None,
        *,
        gate: str = "mean",
        min_coverage: float = 1.0,
        max_errors: int | str | None = None,
        min_confidence: float | None = None,
    ) -> Standard:
        """The standard from a caller's arguments, every mistake a one-line `ConfigError`
        naming the argument (checked before any judge is called)."""
        for name, value in (thresholds or {}).items():
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
                raise ConfigError(f"the threshold of {name} must be a number, got {value!r}", parameter="thresholds")
        if gate not in GATES:
            raise ConfigError(f"gate must be one of {', '.join(GATES)}, got {gate!r}", parameter="gate")
        if isinstance(min_coverage, bool) or not isinstance(min_coverage, (int, float)) or not 0.0 <= min_coverage <= 1.0:
            raise ConfigError(f"min_coverage is a share of the items, from 0 to 1 (0.95 for 95%), got {min_coverage!r}", parameter="min_coverage")
        error_budget(max_errors, 0)
        if min_confidence is not None and (isinstance(min_confidence, bool) or not isinstance(min_confidence, (int, float)) or not 0.0 <= min_confidence <= 1.0):
            raise ConfigError(f"min_confidence is a probability, from 0 to 1, got {min_confidence!r}", parameter="min_confidence")
        return cls(
            thresholds={name: float(value) for name, value in (thresholds or {}).items()}, gate=gate, min_coverage=float(min_coverage), max_errors=max_errors,
            min_confidence=None if min_confidence is None else float(min_confidence),
        )

    def line_for(self, scorer_id: str, line: PassLine) -> PassLine:
        """The scorer's pass line in this run: its own `line` moved to the caller's threshold
        for it, when there is one."""
        return line.overridden(self.thresholds.get(scorer_id))


class ScorerVerdict(BaseModel):
    """One scorer's part of the verdict."""

    scorer_id: str
    passed: bool
    scored: int
    items: int = Field(description="Items the scorer had to score: scored, failed and not scorable")
    failed: int = 0
    not_scorable: int = 0
    coverage: float | None = Field(description="scored / items (None when there was no item)")
    threshold: float | None = None
    compared: float | None = Field(default=None, description="What met the threshold or not: the mean, or the gate's bound of its interval")
    reasons: list[str] = Field(default_factory=list)


class Verdict(BaseModel):
    """Whether a run passed, and every reason it did not, each one line a user reads."""

    passed: bool
    reasons: list[str] = Field(default_factory=list)
    scorers: dict[str, ScorerVerdict] = Field(default_factory=dict)
    min_coverage: float = 1.0
    max_errors: int = Field(default=0, description="Failed items allowed, as a number of this run's items")
    failed_items: int = 0
    items: int = 0

    def coverage_line(self) -> str:
        """'hallucination: 13 of 20 items scored (65%): 5 failed, 2 not scorable' for each
        scorer, as every view shows it beside a figure."""
        return "; ".join(
            f"{item.scorer_id}: {coverage_of(item.scored, item.items, failed=item.failed, not_scorable=item.not_scorable)}" for item in self.scorers.values()
        )


def coverage_of(scored: int, items: int, *, failed: int = 0, not_scorable: int = 0, not_run: int = 0) -> str:
    """How many items a figure stands on, in the words every view uses (the CLI, the report,
    the workbench): "13 of 20 items scored (65%): 5 failed, 2 not scorable". `not_run`: items
    of the data with no outcome at all (a run that stopped)."""
    total = items + not_run
    share = f" ({scored / total:.0%})" if total and scored != total else ""
    parts = [f"{failed} failed" if failed else "", f"{not_scorable} not scorable" if not_scorable else "", f"{not_run} not run" if not_run else ""]
    shown = ", ".join(part for part in parts if part)
    return f"{scored} of {total} item{'' if total == 1 else 's'} scored{share}" + (f": {shown}" if shown else "")


def stats_coverage(stats: ScoreStats, items: int | None = None) -> str:
    """`coverage_of` a scorer's stored counts; `items`: the items the run was given, when some
    got no outcome (a run that stopped)."""
    return coverage_of(stats.count, stats.total, failed=stats.errors, not_scorable=stats.not_scorable, not_run=max((items or 0) - stats.total, 0))


def error_budget(max_errors: int | str | None, items: int) -> int:
    """How many failed items a run may have and still pass: N, or N% of its items."""
    if max_errors is None:
        return 0
    if isinstance(max_errors, str):
        found = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(%?)\s*", max_errors)
        if not found:
            raise ConfigError(f"the error budget {max_errors!r}: expected a number of items (5) or a share of them (5%)", parameter="max_errors")
        number, percent = float(found.group(1)), found.group(2)
        if percent:
            if number > 100:
                raise ConfigError(f"the error budget {max_errors!r}: a share is at most 100%", parameter="max_errors")
            return int(items * number / 100)
        if number != int(number):
            raise ConfigError(f"the error budget {max_errors!r}: a number of items is a whole number", parameter="max_errors")
        return int(number)
    if isinstance(max_errors, bool) or not isinstance(max_errors, int) or max_errors < 0:
        raise ConfigError(f"the error budget must be a number of items (>= 0) or a share such as '5%', got {max_errors!r}", parameter="max_errors")
    return max_errors


def gate_value(mean: float | None, interval: tuple[float | None, float | None] | None, gate: Gate) -> float | None:
    """What a threshold is compared with: the mean, or a bound of its 95% interval. A mean
    with no interval (a single score) is bounded nowhere: its lower bound is -inf and its
    upper +inf, never the mean itself."""
    if mean is None or gate == "mean":
        return mean
    low, high = interval if interval is not None else (None, None)
    if gate == "lower":
        return low if low is not None else -math.inf
    return high if high is not None else math.inf


def gate_passes(mean: float | None, interval: tuple[float | None, float | None] | None, threshold: float, direction: Direction, gate: Gate) -> bool:
    """Whether a threshold gate passes: the mean (or the gate's bound of its interval) on the
    pass side of the line. Nothing scored never passes."""
    value = gate_value(mean, interval, gate)
    return value is not None and passes(value, threshold, direction)


def judge_scorer(
    stats: ScoreStats, line: PassLine | None, standard: Standard, interval: tuple[float | None, float | None] | None = None,
    confidences: Sequence[float] = (),
) -> ScorerVerdict:
    """One scorer's verdict from its counts, its mean held to `line` when someone set that
    line (the run or the definition; not the half-scale default); `interval` is the 95%
    interval of its mean, when the gate compares a bound of it; `confidences`, its scored
    items' (where the judge gave one), when the standard has a least confidence."""
    threshold = line.gate if line is not None else None
    items = stats.count + stats.errors + stats.not_scorable
    coverage = stats.count / items if items else None
    # Failed items that --max-errors allows are the caller's explicit allowance: they do not
    # count against the coverage floor too (they are still not scored, and shown as such).
    excused = min(stats.errors, error_budget(standard.max_errors, items))
    reasons: list[str] = []
    compared: float | None = None
    if not stats.count:
        errors = f"{stats.errors} error{'' if stats.errors == 1 else 's'}"
        reasons.append(f"nothing was scored by {stats.scorer_id}: {stats.not_scorable} not scorable, {errors}")
    else:
        if items and (stats.count + excused) / items < standard.min_coverage:
            floor = f"{standard.min_coverage:.0%}" + (" (--min-coverage)" if standard.min_coverage < 1 else "")
            covered = coverage_of(stats.count, items, failed=stats.errors, not_scorable=stats.not_scorable)
            reasons.append(f"{stats.scorer_id}: below the coverage floor {floor}: {covered}")
        if line is not None and threshold is not None:
            compared = gate_value(stats.mean, interval, standard.gate)
            if compared is None or not line.passes(compared):
                what = "mean" if standard.gate == "mean" else f"{standard.gate} bound of the mean's 95% interval"
                shown = "-" if compared is None else f"{compared:.4g}" if math.isfinite(compared) else f"{compared:.4g} (one score gives no interval)"
                reasons.append(f"threshold not met by {stats.scorer_id}: {what} {shown}, {line.needed()}")
        bound = standard.min_confidence
        unsure = [confidence for confidence in confidences if bound is not None and confidence < bound]
        if unsure:
            reasons.append(
                f"{stats.scorer_id}: {len(unsure)} of {len(confidences)} item(s) judged with less confidence than --min-confidence {bound:g} "
                f"(the least {min(unsure):.2f})"
            )
    return ScorerVerdict(
        scorer_id=stats.scorer_id, passed=not reasons, scored=stats.count, items=items, failed=stats.errors, not_scorable=stats.not_scorable,
        coverage=coverage, threshold=threshold, compared=compared if compared is None or math.isfinite(compared) else None, reasons=reasons,
    )


def decide(
    scorers: Sequence[ScorerVerdict],
    standard: Standard,
    *,
    items: int,
    failed_items: int,
    stopped_by: str | None = None,
    stopped: str | None = None,
) -> Verdict:
    """The run's verdict from its scorers' verdicts and what stopped it (`stopped_by`: a
    failure that ended it; `stopped`: the budget or the user, before the end)."""
    reasons: list[str] = []
    if stopped_by is not None:
        reasons.append(f"the run stopped: {stopped_by}")
    if stopped is not None:
        reasons.append(f"the run stopped before the end: {stopped}")
    allowed = error_budget(standard.max_errors, items)
    if stopped_by is None:  # the cause that stopped it is the one thing to fix; the rest follows from it
        for scorer in scorers:
            reasons += scorer.reasons
        if not scorers:
            reasons.append("nothing was scored: the run has no scorer")
        if failed_items > allowed:
            reasons.append(f"{failed_items} of {items} items failed (--max-errors allows {allowed})")
    return Verdict(
        passed=not reasons, reasons=reasons, scorers={scorer.scorer_id: scorer for scorer in scorers}, min_coverage=standard.min_coverage,
        max_errors=allowed, failed_items=failed_items, items=items,
    )


__all__ = [
    "GATES",
    "Gate",
    "ScorerVerdict",
    "Standard",
    "Verdict",
    "coverage_of",
    "stats_coverage",
    "decide",
    "error_budget",
    "gate_passes",
    "gate_value",
    "judge_scorer",
]
