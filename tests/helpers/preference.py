"""A scripted pairwise judge: it prefers the response saying 'good', and shows position bias
on a pair marked BIASED."""

from __future__ import annotations

from typing import Any

from helpers.scripted import between

from engine.testing import JudgeServer, Request


def script_preference(judge: JudgeServer) -> None:
    """A judge that prefers the response saying 'good'; shown a pair marked BIASED it always
    picks the first response shown (position bias)."""

    def verdict(request: Request) -> dict[str, Any]:
        first, second = between(request.prompt, "response_1"), between(request.prompt, "response_2")
        if "BIASED" in first + second:
            return {"comparison": "the first one reads better", "verdict": "response_1"}
        if ("good" in first) == ("good" in second):
            return {"comparison": "both are as good", "verdict": "tie"}
        return {"comparison": "one says good", "verdict": "response_1" if "good" in first else "response_2"}

    judge.on("PreferenceVerdict", verdict)
