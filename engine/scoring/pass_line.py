"""A scorer's pass line, as one frozen value every reader asks: the run's verdict, the
reasons a run asks for, a jury's verdicts, a cascade's escalation, review queues, monitors,
agreement with people, `calibrate` and `align`.

It means one thing everywhere: a score passes when it lies on the scorer's good side of the
line or on the line itself, and flags its item otherwise (`PassLine.passes` and
`PassLine.flags` are exact complements, so no two readers can disagree about one score).

Where the line lies is worked out once, when a scorer is made (`PassLine.of`): the
definition's `threshold:`, else half the scorer's scale. A run may move it for one scorer
(`--threshold SCORER=VALUE`, a jury's or a cascade's own threshold); `PassLine.overridden`
is the one place that does. Only a line someone set (the definition or a caller) is a gate
a run's mean must meet; the half-scale default only says which scores flag an item.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Literal

#: Which end of a scorer's scores is the good one.
Direction = Literal["higher_is_better", "lower_is_better"]

#: Who set the line: nobody (half the scale), the scorer's definition, or a caller (a run's
#: `--threshold`, a jury's or a cascade's own threshold).
SetBy = Literal["scale", "definition", "caller"]


def scale_of(options: Any) -> float:
    """The maximum score of a scorer with these options: its `scale` option, 1 without one."""
    scale = getattr(options, "scale", None)
    return float(scale) if isinstance(scale, (int, float)) and scale > 0 else 1.0


@dataclass(frozen=True)
class PassLine:
    """Where a score passes or flags its item, on which scale, and which side is better."""

    value: float
    direction: Direction = "higher_is_better"
    scale: float = 1.0
    set_by: SetBy = "caller"

    @classmethod
    def of(cls, threshold: float | None, direction: Direction, scale: float) -> PassLine:
        """A scorer's own line: its definition's `threshold`, else half its `scale`."""
        if threshold is not None:
            return cls(float(threshold), direction, scale, "definition")
        return cls(scale / 2, direction, scale, "scale")

    def on_scale(self, scale: float) -> PassLine:
        """The line of a scorer whose options set `scale`: a line nobody set stays at half of it."""
        if scale == self.scale:
            return self
        return dataclasses.replace(self, scale=scale, value=scale / 2 if self.set_by == "scale" else self.value)

    def overridden(self, value: float | None) -> PassLine:
        """This line, moved to `value` when a caller gives one (a run's threshold for the
        scorer, a jury's or a cascade's own): the one rule of "the run's, else the scorer's,
        else half the scale"."""
        return self if value is None else dataclasses.replace(self, value=float(value), set_by="caller")

    @property
    def gate(self) -> float | None:
        """The value a run's mean must meet, when someone set the line (None for the default)."""
        return None if self.set_by == "scale" else self.value

    def passes(self, score: float) -> bool:
        """Whether `score` passes: at most the line when lower is better, at least it
        otherwise. A score on the line passes."""
        return passes(score, self.value, self.direction)

    def flags(self, score: float) -> bool:
        """Whether `score` flags its item: strictly past the line on the worse side."""
        return not self.passes(score)

    def needed(self) -> str:
        """What a passing value must be, as a verdict says it: 'needs at most 0.2'."""
        return f"needs at most {self.value:g}" if self.direction == "lower_is_better" else f"needs at least {self.value:g}"


def passes(score: float, threshold: float, direction: Direction) -> bool:
    """Whether `score` passes a line at `threshold` (what `PassLine.passes` asks, for a line
    read back from a stored run or swept by `calibrate`). A score on the line passes."""
    return score <= threshold if direction == "lower_is_better" else score >= threshold


def flags(score: float, threshold: float, direction: Direction) -> bool:
    """Whether `score` flags its item: strictly past `threshold` on the scorer's worse side
    (the complement of `passes`)."""
    return not passes(score, threshold, direction)


def past_word(direction: Direction) -> str:
    """How a message says which scores flag: 'above' when lower is better, else 'below'."""
    return "above" if direction == "lower_is_better" else "below"
