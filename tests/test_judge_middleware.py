"""Judge middleware: each cross-cutting concern of judge calls wraps the call, in order, and
may answer without passing the request on."""

from __future__ import annotations

from engine import JudgeRequest, create_hallucination_scorer
from engine.judge import CallNext, JudgeAnswer
from engine.testing import JudgeServer


def test_middleware_sees_every_request_in_order_and_may_answer_itself(judge: JudgeServer) -> None:
    seen: list[str] = []

    async def outer(request: JudgeRequest, call_next: CallNext) -> JudgeAnswer:
        seen.append(f"outer {request.step}")
        return await call_next(request)

    async def inner(request: JudgeRequest, call_next: CallNext) -> JudgeAnswer:
        seen.append(f"inner {request.step}")
        if request.step == "generate_reason":  # answered here: the server never hears of it
            return JudgeAnswer(value=request.response_model.model_validate({"reason": "from the middleware"}) if request.response_model else "")
        return await call_next(request)

    judge.on("Claims", {"claims": ["The sky is green."]})
    judge.on("HallucinationVerdicts", {"verdicts": [{"statement": "The sky is green.", "verdict": "yes", "reason": "no"}]})
    scorer = create_hallucination_scorer(options={"context": ["The sky is blue."]}, middleware=[outer, inner])
    result = scorer.run(output="The sky is green.")

    assert result.score == 1 and result.reason == "from the middleware"
    assert seen == ["outer preprocess", "inner preprocess", "outer analyze", "inner analyze", "outer generate_reason", "inner generate_reason"]
    assert [request.schema_name for request in judge.requests] == ["Claims", "HallucinationVerdicts"]
