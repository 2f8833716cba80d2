"""What the score reads of the steps before it: a judged step whose answer never reaches the
score costs a judge call and has no say in the number (declarations.py names it at its step),
and two named values written alike compute one number under two names, most often a block
copied from the one above that still reads the first step's answer (named at the copy).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from ..scoring.plan import StepPlan
from ..scoring.steps.judged import JudgedPlan
from ..scoring.steps.reason import ReasonStepPlan
from .source import Place, position

#: Keys of a value that say nothing of what it computes: two values alike but for these are
#: one number under two names (what an empty list scores is each one's own choice).
_ASIDE = frozenset({"empty"})


def never_scored(steps: Sequence[StepPlan]) -> list[StepPlan]:
    """The judged steps (the reason aside) whose answers never reach the score: no step toward
    it reads them, and no later step but the reason does (the end of a chain nothing scores)."""
    reached: set[str] = set()
    waiting = [step for step in steps if "score" in step.provides()]
    while waiting:
        step = waiting.pop()
        if step.id not in reached:
            reached.add(step.id)
            waiting += [earlier for earlier in steps[: steps.index(step)] if earlier.provides() & step.reads]
    unread: list[StepPlan] = []
    for index, step in enumerate(steps):
        later = [other for other in steps[index + 1 :] if not isinstance(other, ReasonStepPlan)]
        if isinstance(step, JudgedPlan) and not isinstance(step, ReasonStepPlan) and step.id not in reached and not any(step.provides() & other.reads for other in later):
            unread.append(step)
    return unread if reached else []


def _value_alike(values: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    """(name, first) for each named value written as an earlier one is, `first` its name."""
    seen: dict[str, str] = {}
    for name, value in values.items():
        written = repr(sorted((key, repr(held)) for key, held in value.items() if key not in _ASIDE)) if isinstance(value, Mapping) else repr(value)
        first = seen.setdefault(written, str(name))
        if first != name:
            yield str(name), first


def values_copied(steps: Sequence[StepPlan], raw: Any, label: str) -> Iterator[tuple[str, str, Place | None]]:
    """(code, message, place) for each named value written as an earlier one of its step is,
    named at its `items:` (or its expression) with the judged steps that never reach the score,
    one of which it was likely meant to read."""
    written = raw.get("steps") if isinstance(raw, Mapping) else None
    unread = never_scored(steps)
    for index, step in enumerate(written if isinstance(written, list) else []):
        values = step.get("values") if isinstance(step, Mapping) else None
        if not isinstance(values, Mapping):
            continue
        for name, first in _value_alike(values):
            copy = values[name]
            earlier = position(raw, ["steps", index, "values", first])
            line = f" (line {earlier.line})" if earlier is not None and earlier.line else ""
            named = " or ".join(f"`{other.id}`" for other in unread)
            hint = f"; the judged step {named} never reaches the score: should `{name}` read it?" if unread else ""
            yield "value-copied", (
                f"{label}.{step.get('id')}.values.{name}: written exactly as `{first}` is{line}, so the two compute one number under two names{hint}"
            ), position(raw, ["steps", index, "values", name, *(["items"] if isinstance(copy, Mapping) and "items" in copy else [])], value=True)
