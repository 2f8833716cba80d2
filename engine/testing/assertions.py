"""An assertion on a score that reads well in a test and, when it fails, says why: the
score, the judge's reason, and what each step of the judge found (claims, verdicts, ...).

    from engine.testing import assert_score

    assert_score(reply, scorer="hallucination", context=docs, below=0.2)
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..catalog import Catalog, builtin_catalog, load_scorers
from ..errors import ConfigError
from ..judge.middleware.budget import SpendLimit
from ..judge.settings import JudgeSettings
from ..scoring import AnyScorer, RunInput, ScoreResult
from ..scoring.assembly import within_budget


@dataclass
class Defaults:
    """What scorers created by name use unless told otherwise (the pytest plugin sets them
    from `--scorers-model` and the `scorers_catalog` ini option)."""

    judge: JudgeSettings = JudgeSettings()
    catalog: str | None = None
    #: Answer repeated questions from the response cache (`--scorers-no-cache` turns it off).
    cache: bool = True
    #: The test session's budget (`--scorers-max-cost`): every scorer made here asks through it.
    spend_limit: SpendLimit | None = None


defaults = Defaults()


def catalog_of(path: str | os.PathLike[str] | None) -> Catalog:
    chosen = path or defaults.catalog
    return load_scorers(Path(chosen)) if chosen else builtin_catalog()


#: How a test gives the arguments an error may be about; a key and an address come from the
#: environment only, which the message itself names.
_TEST_ADVICE = {"model": " (or pass model=, or run pytest with --scorers-model provider/model)"}


def assert_score(
    output: Any,
    scorer: str | AnyScorer,
    *,
    below: float | None = None,
    above: float | None = None,
    at_most: float | None = None,
    at_least: float | None = None,
    context: Sequence[str] | None = None,
    input: Any = None,  # noqa: A002 - the run's field
    ground_truth: Any = None,
    options: Mapping[str, Any] | None = None,
    model: str | None = None,
    models: Sequence[str] | None = None,
    catalog: str | os.PathLike[str] | None = None,
) -> ScoreResult:
    """Score `output` and fail unless the score is `below` / `above` (strictly) or
    `at_most` / `at_least` the given values. `scorer` is an id of the catalog (built-in, or
    `catalog=`) or a scorer object. A scorer made here from its id asks the judge within the
    session's budget (`--scorers-max-cost`), and raises `BudgetReached` past it. Returns the
    result, for further checks."""
    __tracebackhide__ = True
    bounds = {"below": below, "above": above, "at_most": at_most, "at_least": at_least}
    if all(value is None for value in bounds.values()):
        raise ConfigError("assert_score needs a bound: below=, above=, at_most= or at_least=")
    if isinstance(scorer, str):
        judge = defaults.judge.given(model, models=tuple(models) if models else None)
        try:
            scorer = within_budget(catalog_of(catalog).create(scorer, options=options, cache=defaults.cache, judge=judge), defaults.spend_limit)
        except ConfigError as exc:  # said as a test's author gives it: here a key comes from the environment only
            raise ConfigError(exc.message + _TEST_ADVICE.get(exc.parameter or "", ""), exc.path, exc.line, exc.column) from None
    elif model or models or options:
        raise ConfigError("assert_score: model=, models= and options= apply to a scorer given by id; this one is already made")
    result = scorer.score(RunInput(output=output, input=input, ground_truth=ground_truth, context=context))
    failed = [
        f"{name.replace('_', ' ')} {value:g}"
        for name, value in bounds.items()
        if value is not None and not _holds(name, result.score, value)
    ]
    if failed:
        better = "lower" if scorer.plan.direction == "lower_is_better" else "higher"
        raise AssertionError(f"{result.scorer_id} scored {result.score:g}, expected {' and '.join(failed)} ({better} is better)\n{explain(result)}")
    return result


def _holds(bound: str, score: float, value: float) -> bool:
    return {"below": score < value, "above": score > value, "at_most": score <= value, "at_least": score >= value}[bound]


def explain(result: ScoreResult) -> str:
    """The reason, then what each judge step answered, one finding a line."""
    lines = [f"reason: {result.reason}"] if result.reason else []
    for verdict in result.judges or []:
        lines.append(f"judge {verdict.model}: {verdict.score:g} - {verdict.reason or ''}".rstrip(" -"))
    for record in result.steps.values():
        if record.kind != "llm" or record.skipped or not isinstance(record.result, Mapping):
            continue
        for name, value in record.result.items():
            if isinstance(value, list):
                lines.append(f"{name}:")
                lines.extend(f"  - {_finding(item)}" for item in value)
            else:
                lines.append(f"{name}: {value}")
    return "\n".join(lines)


def _finding(item: Any) -> str:
    if isinstance(item, Mapping):
        return "; ".join(f"{key}: {value}" for key, value in item.items())
    return str(item)


class Scorers:
    """What the pytest plugin's `scorers` fixture gives a test: scorers of one catalog, judged
    by one model unless told otherwise."""

    def __init__(self, catalog: Catalog, judge: JudgeSettings) -> None:
        self.catalog = catalog
        self.judge = judge

    def create(
        self,
        scorer_id: str,
        options: Mapping[str, Any] | None = None,
        *,
        judge: JudgeSettings | None = None,
        model: str | None = None,
        cache: bool | None = None,
    ) -> AnyScorer:
        """A scorer of the catalog, judged by `--scorers-model` unless `model=` or `judge=` (a
        JudgeSettings) says otherwise, within the session's budget (`--scorers-max-cost`)."""
        settings = (judge or self.judge).given(model)
        cache = defaults.cache if cache is None else cache  # an unchanged suite re-run asks the judge nothing
        return within_budget(self.catalog.create(scorer_id, options=options, judge=settings, cache=cache), defaults.spend_limit)

    def score(self, output: Any, scorer: str, *, context: Sequence[str] | None = None, **fields: Any) -> ScoreResult:
        return self.create(scorer).score(RunInput(output=output, context=context, **fields))

    def assert_score(self, output: Any, scorer: str | AnyScorer, **expectations: Any) -> ScoreResult:
        """`assert_score` with this fixture's catalog and judge."""
        __tracebackhide__ = True
        if isinstance(scorer, str):
            models = expectations.pop("models", None)
            judge = self.judge.given(expectations.pop("model", None), models=tuple(models) if models else None)
            scorer = self.create(scorer, options=expectations.pop("options", None), judge=judge)
        return assert_score(output, scorer, **expectations)
