"""Where YAML becomes scorers: catalog files are read and validated against the spec,
`extends:` is resolved, and every definition is compiled into a frozen plan.

No model is called and nothing is stored here: a catalog can be checked offline.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..judge import JudgeConfig, JudgeMiddleware, NoJudge, StructuredMode, connect, resolve_judge
from ..scoring import Scorer
from ..scoring.plan import ScorerPlan
from .compile import compile_catalog
from .source import CatalogSource, builtin_catalog_path
from .spec import ScorerDefinition


class Catalog:
    """The scorers of one catalog file. A host catalog also holds the built-in scorers it
    does not redefine, compiled against its own prompt and schema folders first, so its
    templates shadow the built-in ones everywhere."""

    def __init__(self, source: CatalogSource) -> None:
        self.source = source
        self.path = source.path
        self._scorers = compile_catalog(source)

    def ids(self) -> list[str]:
        return list(self._scorers)

    def _entry(self, scorer_id: str) -> tuple[ScorerDefinition, ScorerPlan]:
        if scorer_id not in self._scorers:
            raise ConfigError(f"unknown scorer {scorer_id!r}; known scorers: {', '.join(self._scorers)}")
        return self._scorers[scorer_id]

    def plan(self, scorer_id: str) -> ScorerPlan:
        return self._entry(scorer_id)[1]

    def definition(self, scorer_id: str) -> ScorerDefinition:
        return self._entry(scorer_id)[0]

    def __contains__(self, scorer_id: object) -> bool:
        return scorer_id in self._scorers

    def create(
        self,
        scorer_id: str,
        model: str | JudgeConfig | None = None,
        options: Mapping[str, Any] | None = None,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        mode: StructuredMode | None = None,
        middleware: Sequence[JudgeMiddleware] = (),
    ) -> Scorer:
        """A runnable scorer. `model` is 'provider/model' (or a full JudgeConfig); without it,
        the SCORERS_MODEL environment variable, then the scorer's default model are used.
        `mode` (or SCORERS_MODE) picks how structured answers are requested. Every judge call
        passes through `middleware` (a cache, a limiter, a tracer ...), the first listed first.

        A scorer without judge steps (`plan.needs_judge` is False) ignores the judge
        settings and middleware: it needs no model and no key, and its runs make no request."""
        plan = self.plan(scorer_id)
        if not plan.needs_judge:
            return Scorer(plan, NoJudge(), dict(options or {}))
        config = resolve_judge(model, plan.default_model, owner=scorer_id, base_url=base_url, api_key=api_key, mode=mode)
        scorer = Scorer(plan, connect(config, middleware), dict(options or {}))
        config.endpoint()  # a missing key fails now rather than mid-run, once the options are known good
        return scorer


@cache
def _builtin_source() -> CatalogSource:
    return CatalogSource(builtin_catalog_path(), None)


@cache
def builtin_catalog() -> Catalog:
    """The catalog shipped with the package (loaded once)."""
    return Catalog(_builtin_source())


def load_scorers(path: str | os.PathLike[str]) -> Catalog:
    """A host application's catalog: its own scorers, prompts and schemas (relative to the
    YAML file), which shadow the built-in ones of the same name."""
    return Catalog(CatalogSource(Path(path), _builtin_source()))


__all__ = ["Catalog", "ScorerDefinition", "builtin_catalog", "builtin_catalog_path", "load_scorers"]
