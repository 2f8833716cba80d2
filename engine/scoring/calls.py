"""The four ways to score one output, shared by a scorer and a jury: `run`/`arun` take the
run's fields, `score`/`ascore` one RunInput. Each names the run and opens its span; what
scoring is, the subclass says in `_ascore`."""

from __future__ import annotations

import uuid
from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any

from ..sync import run_sync
from .context import GetContext
from .plan import ScorerPlan
from .results import ScoreResult
from .run_input import RunInput
from .tracing import record_score, scorer_span


class ScoringCalls(ABC):
    @property
    @abstractmethod
    def scored_by(self) -> tuple[ScorerPlan, str]:
        """The plan scored and the judge's model, as the run's span names them."""

    @abstractmethod
    async def _ascore(self, given: RunInput, get_context: GetContext | None, sample: int) -> ScoreResult:
        """Score `given`, which has a run id."""

    def run(
        self,
        output: Any = None,
        input: Any = None,  # noqa: A002 - the name users know from the run's fields
        ground_truth: Any = None,
        run_id: str | None = None,
        context: list[str] | None = None,
        get_context: GetContext | None = None,
        turns: list[Any] | None = None,
        expected_trajectory: list[Any] | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> ScoreResult:
        """Score one output (sync wrapper of `arun`)."""
        given = RunInput(
            output=output, input=input, ground_truth=ground_truth, run_id=run_id, context=context, turns=turns,
            expected_trajectory=expected_trajectory, metadata=metadata,
        )
        return self.score(given, get_context=get_context)

    async def arun(
        self,
        output: Any = None,
        input: Any = None,  # noqa: A002
        ground_truth: Any = None,
        run_id: str | None = None,
        context: list[str] | None = None,
        get_context: GetContext | None = None,
        turns: list[Any] | None = None,
        expected_trajectory: list[Any] | None = None,
        metadata: Mapping[str, Any] | None = None,
        sample: int = 0,
    ) -> ScoreResult:
        """Score one output; the fields are those of `RunInput`. `get_context` is for this
        run only and wins over the scorer's own. `sample` numbers a repeated judgement of the
        same output (each judge request carries it)."""
        given = RunInput(
            output=output, input=input, ground_truth=ground_truth, run_id=run_id, context=context, turns=turns,
            expected_trajectory=expected_trajectory, metadata=metadata,
        )
        return await self.ascore(given, get_context=get_context, sample=sample)

    def score(self, given: RunInput, get_context: GetContext | None = None) -> ScoreResult:
        """Score one run input (sync wrapper of `ascore`)."""
        return run_sync(self.ascore(given, get_context=get_context))

    async def ascore(self, given: RunInput, get_context: GetContext | None = None, sample: int = 0) -> ScoreResult:
        """Score one run input: what `arun` does, with the fields in one value."""
        given = given if given.run_id else given.with_run_id(str(uuid.uuid4()))
        assert given.run_id is not None
        plan, model = self.scored_by
        with scorer_span(plan.id, plan.fingerprint, given.run_id, model) as span:
            result = await self._ascore(given, get_context, sample)
            record_score(span, result.score, result.reason)
            return result
