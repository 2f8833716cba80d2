"""Every setting of the catalog format has its row in engine/catalog/setting_rules.py: its
unit, and what it is held to. The walk below reads the spec's pydantic models (a catalog
file, a scorer with every registered step kind, a monitor, a queue) as a user writes them.

When a test here fails for a new setting: add a row `SettingRule("PATH", Unit.X, (relations...))`
to RULES in engine/catalog/setting_rules.py, with PATH as printed (`*` for any key or item)."""

from __future__ import annotations

import types
import typing
from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel

from engine.catalog.monitors import Monitor
from engine.catalog.queues import QueueSpec
from engine.catalog.traces import TracesSpec
from engine.catalog.setting_rules import BY_PATH
from engine.catalog.spec import CatalogFile, ScorerDefinition


def _fields(model: type[BaseModel], prefix: str) -> Iterator[str]:
    for name, info in model.model_fields.items():
        path = f"{prefix}.{info.alias or name}" if prefix else info.alias or name
        yield path
        yield from _inside(info.annotation, path)


def _inside(annotation: Any, path: str) -> Iterator[str]:
    origin, arguments = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Annotated:
        yield from _inside(arguments[0], path)
    elif origin is typing.Union or origin is types.UnionType:
        for argument in arguments:
            yield from _inside(argument, path)
    elif origin in (list, tuple, dict) and arguments:
        member = arguments[-1] if origin is dict else arguments[0]
        if any(isinstance(kind, type) and issubclass(kind, BaseModel) for kind in _members(member)):
            yield f"{path}.*"
        yield from _inside(member, f"{path}.*")
    elif isinstance(annotation, type) and issubclass(annotation, BaseModel):
        yield from _fields(annotation, path)


def _members(annotation: Any) -> list[Any]:
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _members(typing.get_args(annotation)[0])
    if origin is typing.Union or origin is types.UnionType:
        return [member for argument in typing.get_args(annotation) for member in _members(argument)]
    return [annotation]


def settings() -> set[str]:
    found = set(_fields(CatalogFile, ""))
    for prefix, model in (("scorers.*", ScorerDefinition), ("monitors.*", Monitor), ("queues.*", QueueSpec), ("traces", TracesSpec)):
        found |= {prefix, *_fields(model, prefix)}
    # An option's declaration is JSON Schema; its default is the value a scorer that extends
    # another gives the option, held to what the declaration says of it. The traces section's
    # lists and maps of plain values are held item by item: each scorer, field and rate.
    items = {f"traces.{kind}.{part}.*" for kind in ("llm", "agent") for part in ("scorers", "fields")}
    return found | {"scorers.*.options.*.default", "traces.sampling.*", "traces.where.*", *items}


def test_every_setting_of_the_format_has_a_row() -> None:
    missing = sorted(settings() - set(BY_PATH))
    assert not missing, (
        f"settings without a row: {missing}; add `SettingRule(PATH, Unit.X)` (and its relations) for each "
        "to RULES in engine/catalog/setting_rules.py"
    )


def test_every_row_names_a_setting_of_the_format() -> None:
    # A row left behind by a setting that was renamed or removed holds nothing.
    assert sorted(set(BY_PATH) - settings()) == []


def test_a_step_kind_registered_later_is_walked_too() -> None:
    # The walk reads the step kinds registered now: every built-in kind's keys are there.
    assert {"scorers.*.steps.*.prompt", "scorers.*.steps.*.values.*.where", "scorers.*.steps.*.on_skip.not_scorable"} <= settings()
