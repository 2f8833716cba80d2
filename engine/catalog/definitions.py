"""A scorer's definition as the spec reads it: `extends` resolved, every key and value
validated, its id and step ids checked against the catalog around it, before anything is
compiled. What `scorers list` needs of a catalog, and where compiling a scorer starts.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from ..errors import CatalogErrors, ConfigError
from .source import CatalogSource, Place, position, validation_error
from .spec import ScorerDefinition
from .yaml_surprises import explained


def offered(source: CatalogSource, with_inherited: bool = True) -> list[str]:
    """The ids of the scorers a catalog offers, in order: its own, then the built-in ones it
    does not redefine (only its own with `with_inherited=False`)."""
    inherited = source.fallback.resolved() if source.fallback else {}
    return [*source.scorers, *(scorer_id for scorer_id in inherited if scorer_id not in source.scorers)] if with_inherited else list(source.scorers)


def definition_of(source: CatalogSource, scorer_id: str) -> tuple[ScorerDefinition, Any]:
    """A scorer's validated definition, and its mapping as written (with places, `extends`
    applied); raises ConfigError for the first problem found."""
    inherited = source.fallback.resolved() if source.fallback else {}
    raw = source.raw_definition(scorer_id) if scorer_id in source.scorers else inherited[scorer_id]
    if (replaced := replacement_problem(source, scorer_id)) is not None:
        raise replaced
    if (duplicate := duplicate_step_problem(raw, scorer_id)) is not None:
        raise duplicate
    try:
        return ScorerDefinition.model_validate({**raw, "id": scorer_id}), raw
    except ValidationError as exc:
        raise validation_error(exc, raw, f"scorers.{scorer_id}", source.path, ScorerDefinition) from None


def definitions(source: CatalogSource) -> dict[str, ScorerDefinition]:
    """Every scorer a catalog offers, validated, by id; every problem of every scorer is
    raised at once (CatalogErrors), one per scorer."""
    found: dict[str, ScorerDefinition] = {}
    problems: list[ConfigError] = []
    for scorer_id in offered(source):
        try:
            found[scorer_id] = definition_of(source, scorer_id)[0]
        except ConfigError as exc:
            problems.append(exc)
    if problems:
        raise CatalogErrors(unique_problems(problems))
    return found


def unique_problems(problems: list[ConfigError]) -> list[ConfigError]:
    """Each problem once, in file order: a mistake in a shared template, or in a `defaults:`
    block every scorer starts from, is found once per scorer or step but is one mistake."""
    seen: set[Any] = set()
    unique = []
    for problem in map(explained, problems):
        key = (problem.path, problem.line, problem.column, getattr(problem, "shows_at", None)) if problem.line is not None else str(problem)
        if key not in seen:
            seen.add(key)
            unique.append(problem)
    return sorted(unique, key=lambda problem: (problem.path or "", problem.line or 0, problem.column or 0))


def replacement_problem(source: CatalogSource, scorer_id: str) -> ConfigError | None:
    """A scorer of this file that takes the id of a built-in one must say it means to
    (`replaces: true`): else every use of that id, the built-in's runs and docs included,
    would silently get another scorer. A scorer that `extends` the built-in of its own id
    names it, and changes it on purpose."""
    raw = source.scorers.get(scorer_id)
    if not isinstance(raw, Mapping):
        return None
    inherited = source.fallback.resolved() if source.fallback else {}
    says = raw.get("replaces") is True
    if scorer_id in inherited and raw.get("extends") != scorer_id and not says:
        assert source.fallback is not None
        where = position(source.fallback.scorers, [scorer_id])
        builtin = f" ({where.file}:{where.line})" if where is not None else ""
        place = position(source.scorers, [scorer_id]) or Place(str(source.path), 0, 0)
        return ConfigError(
            f"scorers.{scorer_id}: a built-in scorer has this id{builtin}; write `replaces: true` in this scorer to replace it, "
            f"`extends: {scorer_id}` to change it, or choose another id",
            place.file, place.line or None, place.column,
        )
    if says and scorer_id not in inherited:
        place = position(raw, ["replaces"]) or Place(str(source.path), 0, 0)
        return ConfigError(f"scorers.{scorer_id}.replaces: no built-in scorer has the id {scorer_id!r}, so there is nothing to replace", place.file, place.line or None, place.column)
    return None


def duplicate_step_problem(raw: Any, scorer_id: str) -> ConfigError | None:
    """A second step with the id of an earlier one, at its own `id:` (the spec would only
    name the scorer)."""
    steps = raw.get("steps") if isinstance(raw, Mapping) else None
    if not isinstance(steps, list):
        return None
    seen: dict[Any, int] = {}
    for index, step in enumerate(steps):
        step_id = step.get("id") if isinstance(step, Mapping) else None
        if step_id is None:
            continue
        if step_id in seen:
            place = position(raw, ["steps", index, "id"], value=True)
            return ConfigError(f"scorers.{scorer_id}.steps.{index}.id: step id {step_id!r} is used twice (first by step {seen[step_id] + 1}); step ids must be unique", *(place or (None, None, None)))
        seen[step_id] = index
    return None
