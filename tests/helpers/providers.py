"""A judge any provider's scripted server plays (OpenAI's or Anthropic's): the output's one
claim is stated in the context; and the retry header the SDKs honour, kept short."""

from __future__ import annotations

from helpers.scripted import verdicts_on_claims

from engine.testing import JudgeServer

FAST_RETRY = {"retry-after-ms": "10"}  # the SDKs wait this long before a retry
CONTEXT = ["Paris is the capital of France."]


def script(server: JudgeServer) -> None:
    server.on("Claims", {"claims": ["Paris is the capital of France."]})
    server.on("HallucinationVerdicts", verdicts_on_claims("no", "stated"))
    server.on("Reason", {"reason": "All claims are supported."})
