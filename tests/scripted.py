"""A scripted hallucination judge for evaluation tests: the judge's answers follow from the
text it is shown, so any number of items, in any order and concurrency, get consistent
answers.

- Claims: the output's sentences (split on ". ").
- Verdicts: a claim is a hallucination ("yes") when it contains the word WRONG.
- A Claims request for an output containing FAIL gets HTTP 400 (a judge error).
So "ok. WRONG" scores 0.5, "ok" 0.0, "WRONG" 1.0 with the built-in hallucination scorer.
"""

from __future__ import annotations

import json
import re
import threading
from pathlib import Path
from typing import Any

from engine.testing import JudgeServer, Reply, Request


def between(prompt: str, tag: str) -> str:
    found = re.search(rf"<{tag}>\n(.*?)\n</{tag}>", prompt, re.DOTALL)
    assert found, f"no <{tag}> block in the prompt"
    return found.group(1)


def claims_of(text: str) -> list[str]:
    return [claim.strip() for claim in text.split(". ") if claim.strip()]


def numbered_claims(prompt: str) -> list[str]:
    return [json.loads(line.split(". ", 1)[1]) for line in re.findall(r"^\d+\. \".*\"$", prompt, re.MULTILINE)]


def script_hallucination(judge: JudgeServer, delay: float = 0.0, gate: threading.Event | None = None) -> None:
    """`delay` slows every Claims answer; `gate` holds every Claims answer until it is set."""

    def claims(request: Request) -> Reply:
        if gate is not None:
            gate.wait(timeout=30)
        output = between(request.prompt, "output")
        if "FAIL" in output:
            return Reply.fail(400, "scripted judge failure")
        return Reply(answer={"claims": claims_of(output)}, delay=delay)

    def verdicts(request: Request) -> dict[str, Any]:
        return {
            "verdicts": [
                {"statement": claim, "verdict": "yes" if "WRONG" in claim else "no", "reason": "scripted"}
                for claim in numbered_claims(request.prompt)
            ]
        }

    judge.on("Claims", claims)
    judge.on("HallucinationVerdicts", verdicts)
    judge.on("Reason", {"reason": "scripted reason"})


def outputs_judged(judge: JudgeServer) -> list[str]:
    """The outputs the judge was asked to extract claims from, in request order."""
    return [between(request.prompt, "output") for request in judge.requests_for("Claims") if not request.is_reask]


def copy_catalog(tmp_path: Path, *ids: str) -> Path:
    """A host catalog whose scorers are copies of the built-in hallucination scorer."""
    body = "\n".join(f"  {scorer_id}:\n    extends: hallucination\n    name: {scorer_id}" for scorer_id in ids)
    path = tmp_path / "catalog.yaml"
    path.write_text(f"scorers:\n{body}\n", encoding="utf-8")
    return path


def _words(text: str) -> set[str]:
    return {word for word in re.findall(r"[a-z0-9]+", text.lower()) if len(word) > 3 or word.isdigit()}


def script_word_overlap(judge: JudgeServer) -> None:
    """A stand-in judge with a little sense, for runs over the example data: a claim is
    supported when most of its words are in the context (all of them under a prompt that
    says to decide "yes" when in doubt, as the strict variant in examples/ does)."""

    def supported(request: Request, claim: str) -> bool:
        context = _words(request.prompt.split("Claims (", 1)[0])
        words = _words(claim)
        share = len(words & context) / len(words) if words else 1.0
        return share >= (0.99 if "When you hesitate" in request.prompt else 0.6)

    def claims(request: Request) -> Reply:
        return Reply(answer={"claims": claims_of(between(request.prompt, "output"))})

    def hallucination(request: Request) -> dict[str, Any]:
        verdicts = [("no" if supported(request, claim) else "yes", claim) for claim in numbered_claims(request.prompt)]
        return {"verdicts": [{"statement": claim, "verdict": verdict, "reason": "word overlap with the context"} for verdict, claim in verdicts]}

    def faithfulness(request: Request) -> dict[str, Any]:
        verdicts = [("yes" if supported(request, claim) else "unsure", claim) for claim in numbered_claims(request.prompt)]
        return {"verdicts": [{"statement": claim, "verdict": verdict, "reason": "word overlap with the context"} for verdict, claim in verdicts]}

    judge.on("Claims", claims)
    judge.on("HallucinationVerdicts", hallucination)
    judge.on("FaithfulnessVerdicts", faithfulness)
    judge.on("Reason", {"reason": "Scored by word overlap with the context (a scripted stand-in judge)."})
    judge.on("InstructionRewrite", {"instructions": "Decide, for each claim, whether the context states or implies it.", "summary": "shorter"})
