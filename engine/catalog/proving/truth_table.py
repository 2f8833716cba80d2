"""A scorer's truth table: what it scores a handful of answers made from its schemas (every
verdict good, every one bad, mixed, none), and whether each passes or flags, so an author
sees "every statement judged 'yes' scores 1, the best" before any judge is called.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...scoring.pass_line import PassLine
from .trials import Trial, Trials

#: The scenarios a truth table shows, in this order, when they ran.
_SHOWN = ("all good", "all bad", "first values", "rotated 0", "rotated 1", "one item", "empty lists")
_MOST_ROWS = 8


@dataclass(frozen=True)
class TruthRow:
    answer: str
    score: float | None
    #: "pass", "flag", "not scorable" or "refused" (the answer breaks a rule of its step).
    outcome: str


def answer_in_short(trial: Trial) -> str:
    """A scenario's answers in a few words: `3 claims; verdicts yes, no, yes`."""
    parts = [_step_in_short(answer) for answer in trial.answers.values()]
    return "; ".join(part for part in parts if part) or "no answer"


def _step_in_short(answer: Any) -> str:
    if not isinstance(answer, Mapping):
        return ""
    parts: list[str] = []
    for key, value in answer.items():
        if isinstance(value, list):
            choices = [_choices_of(item) for item in value]
            if not value:
                parts.append(f"no {key}")
            elif any(choices):
                parts.append(f"{key} " + ", ".join(choice or "-" for choice in choices))
            else:
                parts.append(f"{len(value)} {key.removesuffix('s') if len(value) == 1 else key}")
        elif isinstance(value, Mapping):
            inner = _step_in_short(value)
            if inner:
                parts.append(f"{key}: {inner}")
        elif isinstance(value, (bool, int, float)) or _is_word(value):
            parts.append(f"{key} {_shown(value)}")
    return "; ".join(parts)


def _choices_of(item: Any) -> str:
    if not isinstance(item, Mapping):
        return ""
    return "/".join(_shown(value) for value in item.values() if isinstance(value, (bool, int, float)) or _is_word(value))


def _is_word(value: Any) -> bool:
    return isinstance(value, str) and 0 < len(value) <= 20 and not any(char.isdigit() for char in value)


def _shown(value: Any) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def truth_table(trials: Trials, line: PassLine) -> list[TruthRow]:
    """A few rows of `trials`: the answer in short, its score, and pass or flag at `line`."""
    rows: list[TruthRow] = []
    seen: set[str] = set()
    chosen = [trial for label in _SHOWN if (trial := trials.named(label)) is not None]
    chosen += [trial for trial in trials.trials if trial.scenario.label.startswith("values")]
    for trial in chosen:
        answer = answer_in_short(trial)
        if answer in seen:
            continue
        seen.add(answer)
        rows.append(TruthRow(answer, trial.score, _outcome(trial, line)))
        if len(rows) == _MOST_ROWS:
            break
    return rows


def _outcome(trial: Trial, line: PassLine) -> str:
    if trial.score is not None:
        return "pass" if line.passes(trial.score) else "flag"
    if trial.not_scorable is not None:
        return "not scorable"
    if trial.refused is not None:
        return "refused"
    return "fails"
