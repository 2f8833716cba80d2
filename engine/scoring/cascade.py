"""A cascade from a cheap judge to a strong one: the cheap judge scores every output, and an
output goes to the strong judge only when the cheap one is unsure:

- its score lies within `margin` of the pass line (the threshold given, else the scorer's
  `threshold:`, else half its scale), where a small error flips the verdict;
- its repeated samples disagree (with `samples` of 2 or more: the same question asked again
  as distinct samples, and their pass/fail verdicts differ);
- its answer failed validation (every re-ask included) or was cut off;
- with `min_confidence`: its confidence (the chance its pass/fail would be the same were it
  asked again, from its verdicts' log-probabilities: see confidence.py) is below that bound,
  which takes no extra call. A judge that gives no log-probabilities is not sent on for it.

Like a jury, it is a runner over scorers of one plan (one per judge), not a branch inside
the scorer. The result is the deciding judge's (its score, reason and steps); `judges` keeps
every judgement made, the cheap judge's samples and the strong judge's, with which one
decided (`decided`) and why the strong judge was asked (`escalation`), so a run's calls, tokens
and cost count them all, and the agreement code can measure each judge beside the cascade.

    cascade = Cascade(cheap_scorer, strong_scorer, margin=0.1, samples=2)
    result = cascade.run(output="...")
    result.judges[-1].escalation   # e.g. "its score 0.5 is within 0.1 of the threshold 0.5"
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time

from ..errors import AnswerCutOffError, ConfigError, InvalidAnswerError
from .context import GetContext
from .jury import Jury, Panel
from .pass_line import PassLine
from .results import JudgeVerdict, ScoreResult
from .run_input import RunInput
from .scorer import Scorer

#: How close to the pass line (on the scorer's scale) a cheap score is sent on by default.
DEFAULT_CASCADE_MARGIN = 0.1
#: The most samples a cheap judge takes of one output.
MAX_SAMPLES = 5


class Cascade(Jury):
    """The cheap judge's scorer first, the strong judge's when it is unsure; see the module
    docstring. A jury in form (two scorers of one plan), so every runner handles it as one."""

    def __init__(
        self, cheap: Scorer, strong: Scorer, margin: float | None = None, samples: int = 1, threshold: float | None = None,
        min_confidence: float | None = None,
    ) -> None:
        if threshold is not None:  # the cheap judge's confidence is about this pass line
            cheap = cheap.with_reasons(cheap.reasons, threshold)
        super().__init__([cheap, strong], threshold=threshold, margin=DEFAULT_CASCADE_MARGIN if margin is None else margin)
        if not isinstance(samples, int) or isinstance(samples, bool) or not 1 <= samples <= MAX_SAMPLES:
            raise ConfigError(f"{cheap.id}: a cascade's samples must be a whole number from 1 to {MAX_SAMPLES}, got {samples!r}", parameter="samples")
        if not self.margin >= 0:
            raise ConfigError(f"{cheap.id}: a cascade's margin must be 0 or more, got {margin!r}", parameter="margin")
        if min_confidence is not None and (isinstance(min_confidence, bool) or not isinstance(min_confidence, (int, float)) or not 0 <= min_confidence <= 1):
            raise ConfigError(f"{cheap.id}: a cascade's min_confidence must be a probability from 0 to 1, got {min_confidence!r}", parameter="min_confidence")
        self.samples = samples
        #: The line the cheap judge's score is measured against: the cascade's own threshold,
        #: else the scorer's line.
        self.line: PassLine = cheap.pass_line.overridden(threshold)
        self.min_confidence = min_confidence
        self.judge = Panel((cheap.judge.model, strong.judge.model), joiner=">")

    @property
    def cheap(self) -> Scorer:
        return self.scorers[0]

    @property
    def strong(self) -> Scorer:
        return self.scorers[1]

    @property
    def fingerprint(self) -> str:
        described = ["cascade", [scorer.fingerprint for scorer in self.scorers], self.threshold, self.margin, self.samples]
        if self.min_confidence is not None:  # only then, so the fingerprints of cascades without it stay as they were
            described.append(self.min_confidence)
        return hashlib.sha256(json.dumps(described, default=str).encode()).hexdigest()[:16]

    def __repr__(self) -> str:
        return f"Cascade({self.id!r}, cheap={self.cheap.judge.model!r}, strong={self.strong.judge.model!r}, margin={self.margin!r})"

    def with_margin(self, margin: float) -> Cascade:
        """The same cascade sending on the scores within `margin` of the pass line."""
        return Cascade(self.cheap, self.strong, margin=margin, samples=self.samples, threshold=self.threshold, min_confidence=self.min_confidence)

    def with_min_confidence(self, bound: float | None) -> Cascade:
        """The same cascade sending on the outputs the cheap judge is less sure of than `bound`."""
        return Cascade(self.cheap, self.strong, margin=self.margin, samples=self.samples, threshold=self.threshold, min_confidence=bound)

    def escalation(self, scores: list[float], confidences: list[float | None] | None = None) -> str | None:
        """Why the cheap judge's `scores` (its samples of one output, each with its confidence)
        go to the strong judge; None when they do not."""
        line = self.line.value
        if len({self.line.passes(score) for score in scores}) > 1:
            return f"the cheap judge's {len(scores)} samples disagree ({', '.join(f'{score:g}' for score in scores)} against the threshold {line:g})"
        near = next((score for score in scores if abs(score - line) <= self.margin), None)
        if near is not None:
            return f"its score {near:g} is within {self.margin:g} of the threshold {line:g}"
        if self.min_confidence is not None:
            unsure = next((confidence for confidence in confidences or () if confidence is not None and confidence < self.min_confidence), None)
            if unsure is not None:
                return f"its confidence {unsure:.2f} is below {self.min_confidence:g}"
        return None

    async def _ascore(self, given: RunInput, get_context: GetContext | None, sample: int) -> ScoreResult:
        started = time.perf_counter()
        line = self.line
        asked = [self.cheap.ascore(given, get_context=get_context, sample=sample * self.samples + k) for k in range(self.samples)]
        outcomes = await asyncio.gather(*asked, return_exceptions=True)
        failed = next((outcome for outcome in outcomes if isinstance(outcome, BaseException)), None)
        if failed is not None and not isinstance(failed, (InvalidAnswerError, AnswerCutOffError)):
            raise failed  # a judge that cannot be reached or refuses the key: not a doubt about this output
        tried = [outcome for outcome in outcomes if isinstance(outcome, ScoreResult)]
        if failed is not None:
            why: str | None = f"the cheap judge's answer failed validation ({failed.message})"
        else:
            why = self.escalation([result.score for result in tried], [result.confidence for result in tried])
        verdicts = [self._verdict(result, line, decided=why is None and index == 0) for index, result in enumerate(tried)]
        if why is None:
            return tried[0].model_copy(update={"model": self.judge.model, "judges": verdicts, "duration_ms": (time.perf_counter() - started) * 1000})
        final = await self.strong.ascore(given, get_context=get_context, sample=sample)
        strong = self._verdict(final, line, decided=True).model_copy(update={"escalation": why})
        return final.model_copy(update={"model": self.judge.model, "judges": [*verdicts, strong], "duration_ms": (time.perf_counter() - started) * 1000})

    def _verdict(self, result: ScoreResult, line: PassLine, decided: bool) -> JudgeVerdict:
        passed = line.passes(result.score)
        return JudgeVerdict(model=result.model, score=result.score, reason=result.reason, passed=passed, usage=result.usage, steps=result.steps, decided=decided)
