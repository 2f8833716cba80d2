"""Scorers that prove what they mean: each scorer of a catalog run, without a judge, on answers
made from its own answer schemas (answers.py, trials.py), and held to properties a reader of
its YAML expects (properties.py): its score within its range and reaching both ends, moving
the way `direction:` says as the answers get worse by what their values mean (meanings.py),
its rules and skip conditions able to go both ways. `scorers show` prints the same trials as
a truth table (truth_table.py).

What is proved here is worked out when asked (`scorers check`, the workbench), not at every
load: a catalog loads as fast as it did.
"""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import ValidationError

from ...errors import ConfigError
from ...scoring.pass_line import scale_of
from ...scoring.plan import ScorerPlan
from ..root_setting import Compile
from ..source import CatalogSource
from ..spec import ScorerDefinition
from .computed import prove_computed
from .meanings import Meaning, schema_meanings
from .properties import proved, schema_paths
from .trials import Trials, run_trials
from .truth_table import TruthRow, truth_table
from .worked_examples import examples_against_meanings


def scorer_trials(source: CatalogSource, definition: ScorerDefinition, plan: ScorerPlan) -> Trials | None:
    """The scorer run on answers made from its schemas (None for a scorer that cannot run
    without options an author must give, and for one that asks no judge)."""
    if not plan.needs_judge:
        return None
    return run_trials(plan, {}, scorer_meanings(source, definition))


def scorer_meanings(source: CatalogSource, definition: ScorerDefinition) -> dict[str, Meaning]:
    """What the values of each judged step's answers mean, by field path (`analyze.verdicts[].verdict`)."""
    meanings: dict[str, Meaning] = {}
    for step_id, path in schema_paths(source, definition):
        meanings |= schema_meanings(path, step_id)
    return meanings


def prove_catalog(source: CatalogSource, compiled: Mapping[str, tuple[ScorerDefinition, ScorerPlan]], compile: Compile) -> list[ConfigError]:
    """The findings of the trials of the scorers `source` defines itself (compiled clean);
    `compile` compiles one of them with a setting changed (see root_setting.py)."""

    found: list[ConfigError] = []
    for scorer_id in source.scorers:
        if scorer_id not in compiled:
            continue
        definition, plan = compiled[scorer_id]
        if getattr(definition, "abstract", False):
            continue
        if not plan.needs_judge:
            found += prove_computed(source, definition, plan, _parent_plan(source, scorer_id, compiled, compile))
            continue
        trials = scorer_trials(source, definition, plan)
        if trials is not None:
            found += proved(source, definition, trials, plan.scores_range(plan.options_model()), compile)
            found += examples_against_meanings(source, scorer_id, trials.meanings)
    return found


def _parent_plan(source: CatalogSource, scorer_id: str, compiled: Mapping[str, tuple[ScorerDefinition, ScorerPlan]], compile: Compile) -> ScorerPlan | None:
    """The plan of the scorer `scorer_id` extends (compiled here when it is a built-in one the
    check did not compile: its proof was shipped)."""
    own = source.scorers.get(scorer_id)
    parent = str(own.get("extends") or "") if isinstance(own, Mapping) else ""
    if not parent:
        return None
    if parent in compiled and parent != scorer_id:
        return compiled[parent][1]
    inherited = source.fallback.resolved() if source.fallback is not None else {}
    if parent not in inherited:
        return None
    try:
        return compile(ScorerDefinition.model_validate({**inherited[parent], "id": parent}), inherited[parent])
    except (ConfigError, ValidationError):
        return None


def scorer_truth_table(source: CatalogSource, definition: ScorerDefinition, plan: ScorerPlan, threshold: float | None = None) -> list[TruthRow]:
    """A few answers made from the scorer's schemas, what it scores them, and pass or flag
    (at `threshold`, else the scorer's own pass line); empty when it cannot run alone."""
    trials = scorer_trials(source, definition, plan)
    if trials is None:
        return []
    return truth_table(trials, plan.pass_line.on_scale(scale_of(plan.options_model())).overridden(threshold))


__all__ = ["TruthRow", "prove_catalog", "scorer_trials", "scorer_truth_table"]
