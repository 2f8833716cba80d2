"""A judge stricter under a prompt that says STRICT, a catalog whose hallucination scorer says
it, and labelled items on which the two versions disagree: what the tests of comparing,
re-scoring and tuning a new version of a scorer share."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from helpers.scripted import between, claims_of, numbered_claims

from engine.testing import JudgeServer, Reply, Request

ROOT = Path(__file__).resolve().parents[2]

LABELLED = [
    ("ok", False),
    ("WRONG", True),
    ("maybe so", True),  # the built-in prompt passes it, the strict variant flags it: fixed
    ("maybe later", False),  # the strict variant flags it too: broken
    ("ok. ok", False),
]


def script_strictness(judge: JudgeServer) -> None:
    """Verdicts: "WRONG" is always a hallucination; "maybe" only under a prompt saying STRICT."""

    def claims(request: Request) -> Reply:
        return Reply(answer={"claims": claims_of(between(request.prompt, "output"))})

    def verdicts(request: Request) -> dict[str, Any]:
        strict = "STRICT" in request.prompt

        def verdict(claim: str) -> str:
            return "yes" if "WRONG" in claim or (strict and "maybe" in claim) else "no"

        return {"verdicts": [{"statement": claim, "verdict": verdict(claim), "reason": "scripted"} for claim in numbered_claims(request.prompt)]}

    judge.on("Claims", claims)
    judge.on("HallucinationVerdicts", verdicts)
    judge.on("Reason", {"reason": "scripted reason"})


def labelled_data(tmp_path: Path) -> Path:
    path = tmp_path / "labelled.jsonl"
    rows = [{"id": f"i{n}", "output": output, "context": ["facts"], "expected": flag} for n, (output, flag) in enumerate(LABELLED)]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def strict_variant(tmp_path: Path) -> Path:
    """A catalog whose hallucination scorer differs from the built-in one in one prompt."""
    folder = tmp_path / "strict"
    (folder / "prompts" / "strict").mkdir(parents=True)
    original = (ROOT / "prompts" / "hallucination" / "analyze.j2").read_text(encoding="utf-8")
    (folder / "prompts" / "strict" / "analyze.j2").write_text(original.replace("Decide,", "STRICT: speculation is a hallucination. Decide,"), encoding="utf-8")
    (folder / "scorers.yaml").write_text(
        "prompts: prompts\nscorers:\n  hallucination:\n    extends: hallucination\n    steps:\n      - id: analyze\n        prompt: strict/analyze.j2\n",
        encoding="utf-8",
    )
    return folder / "scorers.yaml"
