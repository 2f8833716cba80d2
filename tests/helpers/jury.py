"""A scripted panel of judges for jury tests: each model is strict, lenient or down, so a
jury's combined score, its disagreements and its failures follow from the models named."""

from __future__ import annotations

from helpers.scripted import between, claims_of, numbered_claims

from engine.testing import JudgeServer, Reply, Request

CONTEXT = ["Paris is the capital of France."]


def script_panel(judge: JudgeServer, strict_models: set[str], failing: set[str] = frozenset()) -> None:  # type: ignore[assignment]
    """Every judge finds the output's claims; a 'strict' judge calls each claim that holds
    the word ODD a hallucination, the others call none. A failing judge answers HTTP 500."""

    def model_of(request: Request) -> str:
        return str(request.body["model"])

    def claims(request: Request) -> object:
        if model_of(request) in failing:
            return Reply.fail(500, "judge down", headers={"retry-after-ms": "10"})
        return {"claims": claims_of(between(request.prompt, "output"))}

    def verdicts(request: Request) -> object:
        strict = model_of(request) in strict_models
        return {
            "verdicts": [
                {"statement": claim, "verdict": "yes" if strict and "ODD" in claim else "no", "reason": "r"}
                for claim in numbered_claims(request.prompt)
            ]
        }

    judge.on("Claims", claims)
    judge.on("HallucinationVerdicts", verdicts)
    judge.on("Reason", lambda request: {"reason": f"reason of {model_of(request)}"})
