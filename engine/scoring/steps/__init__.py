"""The step kinds a scorer's YAML may use, by the word after `kind:`.

Each kind is one module (`llm`, `reason`, `score`, `compute`) following `StepKind`; the
catalog (spec, compiler, name checks) and the scorer find a step's kind here and never
branch on kinds themselves. Another kind is one module and one `register_step_kind` call,
with no engine file changed (see docs/architecture.md).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

from ...errors import ConfigError
from .base import (
    Rule,
    StepBuilder,
    StepCall,
    StepFailed,
    StepJudge,
    StepKind,
    StepKindBase,
    StepSources,
    StepSpec,
    Written,
    attempt,
)
from .compute import ComputeKind, ComputeStep, ComputeStepPlan
from .llm import JudgeStepPlan, LLMKind, LLMStep
from .reason import ReasonKind, ReasonStep, ReasonStepPlan
from .reducers import ReducerSpec
from .score import ScoreKind, ScoreStep, ScoreStepPlan

AnyStepKind = StepKind[Any, Any]

_kinds: dict[str, AnyStepKind] = {}
_listeners: list[Callable[[], None]] = []


def register_step_kind(kind: AnyStepKind, replace: bool = False) -> None:
    """Make `kind` usable as `kind: <kind.name>` in every catalog loaded from now on."""
    fields = kind.spec.model_fields
    if "kind" not in fields or fields["kind"].annotation is str:
        raise ConfigError(f"step kind {kind.name!r}: its spec needs `kind: Literal[{kind.name!r}]`")
    if kind.name in _kinds and not replace:
        raise ConfigError(f"step kind {kind.name!r} is registered already (pass replace=True to replace it)")
    _kinds[kind.name] = kind
    for listener in _listeners:
        listener()


def unregister_step_kind(name: str) -> None:
    """Forget a kind registered before (a test's or a plug-in's); the built-in kinds stay."""
    if name in _BUILT_IN:
        raise ConfigError(f"step kind {name!r} is built in and cannot be removed")
    if _kinds.pop(name, None) is not None:
        for listener in _listeners:
            listener()


def step_kind(name: str) -> AnyStepKind:
    """The kind registered as `name` (the spec has already refused an unknown one)."""
    return _kinds[name]


def step_kinds() -> Mapping[str, AnyStepKind]:
    return MappingProxyType(_kinds)


def kinds_from_outside() -> Mapping[str, AnyStepKind]:
    """The kinds registered beside, or in place of, the built-in ones (a plug-in's, a test's):
    the built-in kinds are the engine's own source, these may come from anywhere."""
    return {name: kind for name, kind in _kinds.items() if _BUILT_IN.get(name) is not type(kind)}


def when_kinds_change(listener: Callable[[], None]) -> None:
    """Call `listener` after every registration (the catalog's spec rebuilds its step union)."""
    _listeners.append(listener)


_BUILT_IN: dict[str, type[AnyStepKind]] = {"llm": LLMKind, "reason": ReasonKind, "score": ScoreKind, "compute": ComputeKind}
for _built_in in _BUILT_IN.values():
    register_step_kind(_built_in())

__all__ = [
    "AnyStepKind",
    "ComputeStep",
    "ComputeStepPlan",
    "JudgeStepPlan",
    "LLMStep",
    "ReasonStep",
    "ReasonStepPlan",
    "ReducerSpec",
    "Rule",
    "ScoreStep",
    "ScoreStepPlan",
    "StepBuilder",
    "StepCall",
    "StepFailed",
    "StepJudge",
    "StepKind",
    "StepKindBase",
    "StepSources",
    "StepSpec",
    "Written",
    "attempt",
    "kinds_from_outside",
    "register_step_kind",
    "step_kind",
    "step_kinds",
    "unregister_step_kind",
    "when_kinds_change",
]
