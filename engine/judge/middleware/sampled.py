"""Verdict probabilities counted over repeated samples, for a judge that gives no token
log-probabilities (Claude, a server that refuses them): opted into per scorer
(`judge: confidence_samples: N`), since each answer then costs N calls.

A structured answer that came without probabilities is asked again N-1 times as distinct
samples (a response cache keeps each apart), and each enum, boolean and small-number field
gets the share of the answers that gave each value (probabilities.from_samples): the same
figures as log-probabilities give, their source marked "samples". The answer kept is the
first; the tokens of every sample count in its usage. A sample that fails is left out of the
count; an answer that came with log-probabilities, or that has no such field (claims, a
reason), costs nothing more.
"""

from __future__ import annotations

import asyncio
import dataclasses

from ..probabilities import from_samples, weighs
from ..protocol import CallNext, JudgeAnswer, JudgeRequest

#: Sample numbers of the extra samples start past those a cascade or `--repeat` uses.
_SAMPLE_STRIDE = 1_000_003


class SampledProbabilities:
    """The middleware that samples a structured answer `samples` times in all when the judge
    gave no probabilities."""

    def __init__(self, samples: int) -> None:
        self.samples = samples

    async def __call__(self, request: JudgeRequest, call_next: CallNext) -> JudgeAnswer:
        answer = await call_next(request)
        model = request.response_model
        if model is None or answer.probabilities is not None or self.samples < 2 or not weighs(model):
            return answer
        again = [call_next(dataclasses.replace(request, sample=request.sample + _SAMPLE_STRIDE * k)) for k in range(1, self.samples)]
        others = [other for other in await asyncio.gather(*again, return_exceptions=True) if isinstance(other, JudgeAnswer)]
        usage = answer.usage
        for other in others:
            if other.usage is not None:
                usage = other.usage if usage is None else usage + other.usage
        weighed = from_samples(model, [answer.value, *(other.value for other in others)])
        return dataclasses.replace(answer, usage=usage, probabilities=weighed)
