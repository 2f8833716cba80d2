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

    def one_call(request: Request) -> dict[str, Any]:
        # The one-call variant (examples/variants/one-call/): claims and verdicts in one answer.
        context = _words(" ".join(re.findall(r"<context_\d+>\n(.*?)\n</context_\d+>", request.prompt, re.DOTALL)))
        found = claims_of(between(request.prompt, "output"))
        verdicts = ["no" if len(_words(claim) & context) >= 0.6 * max(len(_words(claim)), 1) else "yes" for claim in found]
        return {"verdicts": [{"statement": claim, "verdict": verdict, "reason": "word overlap with the context"} for claim, verdict in zip(found, verdicts)]}

    judge.on("Claims", claims)
    judge.on("HallucinationVerdicts", hallucination)
    judge.on("FaithfulnessVerdicts", faithfulness)
    judge.on("ClaimVerdicts", one_call)
    judge.on("Reason", {"reason": "Scored by word overlap with the context (a scripted stand-in judge)."})
    judge.on("InstructionRewrite", {"instructions": "Decide, for each claim, whether the context states or implies it.", "summary": "shorter"})


def fitting(schema: dict[str, Any], defs: dict[str, Any], at_least: int = 0) -> Any:
    """A value that fits a JSON Schema: lists as short as allowed (at least `at_least`
    items), the first choice of an enum, the smallest number allowed."""
    if "$ref" in schema:
        return fitting(defs[schema["$ref"].rsplit("/", 1)[-1]], defs, at_least)
    for combined in ("anyOf", "oneOf", "allOf"):
        if combined in schema:
            choices = [choice for choice in schema[combined] if choice.get("type") != "null"] or schema[combined]
            return fitting(choices[0], defs, at_least)
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return schema["enum"][0]
    if "default" in schema:
        return schema["default"]
    kind = schema.get("type", "object")
    if isinstance(kind, list):
        kind = next(one for one in kind if one != "null")
    if kind == "object":
        properties = schema.get("properties", {})
        return {name: fitting(properties[name], defs, at_least) for name in schema.get("required", list(properties))}
    if kind == "array":
        count = max(schema.get("minItems", 0), at_least)
        one = fitting(schema.get("items", {"type": "string"}), defs, at_least)
        return [numbered(one, position) for position in range(count)]
    if kind in ("integer", "number"):
        return schema.get("minimum", schema.get("exclusiveMinimum", 0) + (1 if kind == "integer" else 0.5))
    if kind == "boolean":
        return False
    return "Paris"


def numbered(value: Any, position: int) -> Any:
    """`value` with its texts told apart from those of the other items of its list."""
    if position == 0:
        return value
    if isinstance(value, str):
        return f"{value} {position + 1}"
    if isinstance(value, dict):
        return {key: numbered(inner, position) for key, inner in value.items()}
    return value


def answer_fitting(request: Request) -> Any:
    """The scripted judge's answer to any step: the smallest answer its schema allows, with
    one item in each list (one claim, one verdict for it; one verdict per context piece).
    Every built-in answer is shaped so that one made up from its schema alone passes."""
    response_format = request.body.get("response_format") or {}
    if response_format.get("type") == "json_schema":
        schema = response_format["json_schema"]["schema"]
    elif request.body.get("tools"):
        schema = request.body["tools"][0]["function"]["parameters"]
    else:
        return "A scripted reason."
    return fitting(schema, schema.get("$defs", {}), at_least=1)


def verdicts_on_claims(verdict: str = "no", reason: str = "r") -> Any:
    """A script of hallucination (or faithfulness) verdicts: one per claim the prompt lists,
    each echoing its claim, as the answer's bounds ask."""
    return lambda request: {"verdicts": [{"statement": claim, "verdict": verdict, "reason": reason} for claim in numbered_claims(request.prompt)]}


# gpt-4o-mini in the shipped table: $0.15 input, $0.075 cached input, $0.60 output per million.
PER_CALL = (600 * 0.15 + 400 * 0.075 + 200 * 0.60) / 1_000_000
#: What a step's first call holds of a budget before any answer of that step was seen: an
#: answer as long as its max_tokens (2,048), at the output price.
FIRST_CALL_HOLD = 2048 * 0.60 / 1_000_000


def script_priced(judge: JudgeServer) -> None:
    """Every answer reports 1,000 prompt tokens (400 from the provider's prompt cache) and 200 answer tokens."""
    usage: dict[str, Any] = {"usage": (1000, 200), "cached_tokens": 400}

    def claims(request: Request) -> Reply:
        return Reply(answer={"claims": claims_of(between(request.prompt, "output"))}, **usage)

    def verdicts(request: Request) -> Reply:
        found = [{"statement": claim, "verdict": "yes" if "WRONG" in claim else "no", "reason": "r"} for claim in numbered_claims(request.prompt)]
        return Reply(answer={"verdicts": found}, **usage)

    judge.on("Claims", claims)
    judge.on("HallucinationVerdicts", verdicts)
    judge.on("Reason", Reply(answer={"reason": "scripted"}, **usage))
