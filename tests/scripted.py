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
