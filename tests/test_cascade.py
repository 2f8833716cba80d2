"""A cascade from a cheap judge to a strong one (issue 35): the cheap judge scores every item
and sends on those it is unsure of (a score near the threshold, samples that disagree, an
answer that fails validation); the result says which judge decided and why; measured with
the agreement code on labelled data, with two scripted judges answering by model."""

from __future__ import annotations

from engine.judge import JudgeSettings
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from engine import ConfigError, create_scorer, load_scorers, run_evals
from engine.cli import app
from engine.scoring import Cascade
from engine.testing import JudgeServer, Reply, Request

from helpers.scripted import between, claims_of, numbered_claims

runner = CliRunner()
CHEAP, STRONG = "openai/gpt-4o-mini", "openai/gpt-4o"


def labelled_items() -> list[dict[str, Any]]:
    """45 items, labelled: 10 plainly fine, 10 plainly wrong, 10 subtle (two claims, both
    hallucinated: the cheap judge sees one, 0.5 is on the threshold), 10 misleading (the cheap
    judge is sure and wrong) and 5 the cheap judge cannot answer in shape."""
    kinds = [("fine", False), ("WRONG", True), ("SUBTLE one. SUBTLE two", True), ("MISLEAD", True), ("GARBLED", True)]
    items = []
    for kind, flagged in kinds:
        for n in range(5 if kind == "GARBLED" else 10):
            items.append({"id": f"{kind.split()[0].lower()}-{n}", "output": f"{kind} {n}.", "context": ["facts"], "expected": {"hallucination": flagged}})
    return items


def script_two_judges(judge: JudgeServer) -> None:
    """The strong judge is always right; the cheap one misses the second subtle claim, is
    fooled by MISLEAD, and answers GARBLED items out of shape."""

    def claims(request: Request) -> dict[str, Any]:
        return {"claims": claims_of(between(request.prompt, "output").rstrip("."))}

    def verdicts(request: Request) -> Any:
        strong = request.body["model"] == "gpt-4o"
        found = numbered_claims(request.prompt)
        if not strong and any("GARBLED" in claim for claim in found):
            return Reply(answer={"verdicts": []})
        marks = []
        for index, claim in enumerate(found):
            wrong = any(word in claim for word in ("WRONG", "SUBTLE", "MISLEAD", "GARBLED"))
            if not strong and ("MISLEAD" in claim or ("SUBTLE" in claim and index == 1)):
                wrong = False
            marks.append("yes" if wrong else "no")
        return {"verdicts": [{"statement": claim, "verdict": mark, "reason": "r"} for claim, mark in zip(found, marks)]}

    judge.on("Claims", claims)
    judge.on("HallucinationVerdicts", verdicts)
    judge.on("Reason", {"reason": "r"})


def accuracy(result: Any) -> float | None:
    agreement = result.summary["hallucination"].agreement
    return None if agreement is None else agreement.binary.accuracy.value


def test_the_cascade_agrees_with_people_nearly_as_the_strong_judge_for_a_share_of_its_cost(judge: JudgeServer) -> None:
    script_two_judges(judge)
    items = labelled_items()
    cheap_alone = run_evals(items, [create_scorer("hallucination", model=CHEAP)], cache=False)
    strong_alone = run_evals(items, [create_scorer("hallucination", model=STRONG)], cache=False)
    judge.requests.clear()

    cascade = create_scorer("hallucination", model=CHEAP, judge=JudgeSettings(escalate_to=STRONG))
    assert isinstance(cascade, Cascade) and cascade.judge.model == f"{CHEAP}>{STRONG}"
    result = run_evals(items, [cascade], cache=False)

    # The cheap judge alone: right on 20 of the 40 it scores (the misleading ten wrong, and its
    # subtle 0.5s, on the threshold, pass), none of the garbled five; the strong judge right on
    # all 45; the cascade on 35 of 45: only the misleading ten, which the cheap judge was sure
    # of, stay wrong.
    assert (accuracy(cheap_alone), accuracy(strong_alone), accuracy(result)) == (0.5, 1.0, pytest.approx(35 / 45, abs=1e-4))
    summary = result.summary["hallucination"].cascade
    assert summary is not None
    assert (summary.items, summary.escalated, summary.why) == (45, 15, {"near the threshold": 10, "failed validation": 5})
    assert summary.strong_cost_share is not None and 0 < summary.strong_cost_share < 1
    assert summary.cheap_alone is not None and summary.cheap_alone.labelled == 40  # the garbled answers gave no score
    # each result says which judge decided and why
    subtle = next(item for item in result.items if item.id == "subtle-0").results["hallucination"]
    assert subtle.score == 1 and subtle.judges is not None
    assert [(judge.model, judge.decided, judge.escalation) for judge in subtle.judges] == [
        (CHEAP, False, None), (STRONG, True, "its score 0.5 is within 0.1 of the threshold 0.5"),
    ]
    fine = next(item for item in result.items if item.id == "fine-0").results["hallucination"]
    assert fine.judges is not None and [(judge.model, judge.decided) for judge in fine.judges] == [(CHEAP, True)]
    # only the escalated items reached the strong judge
    strong_requests = [request for request in judge.requests if request.body["model"] == "gpt-4o"]
    assert len({between(request.prompt, "output") for request in strong_requests if request.schema_name == "Claims"}) == 15


def test_repeated_samples_that_disagree_send_an_item_on(judge: JudgeServer) -> None:
    asked: dict[str, int] = {}

    def wavering(request: Request) -> dict[str, Any]:
        claim = numbered_claims(request.prompt)[0]
        asked[claim] = asked.get(claim, 0) + 1
        mark = "yes" if request.body["model"] == "gpt-4o" or asked[claim] % 2 else "no"
        return {"verdicts": [{"statement": claim, "verdict": mark, "reason": "r"}]}

    judge.on("Claims", {"claims": ["It is so."]})
    judge.on("HallucinationVerdicts", wavering)
    judge.on("Reason", {"reason": "r"})
    cascade = create_scorer("hallucination", model=CHEAP, options={"context": ["facts"]}, judge=JudgeSettings(escalate_to=STRONG, samples=2))
    result = cascade.run(output="It is so.")
    assert result.score == 1 and result.judges is not None
    assert result.judges[-1].escalation == "the cheap judge's 2 samples disagree (1, 0 against the threshold 0.5)" or (
        result.judges[-1].escalation == "the cheap judge's 2 samples disagree (0, 1 against the threshold 0.5)"
    )


def test_a_cascade_in_yaml_and_on_the_command_line(judge: JudgeServer, tmp_path: Path) -> None:
    script_two_judges(judge)
    (tmp_path / "catalog.yaml").write_text(
        f"scorers:\n  careful:\n    extends: hallucination\n    judge:\n      model: {CHEAP}\n    cascade:\n      escalate_to: {STRONG}\n      margin: 0.2\n",
        encoding="utf-8",
    )
    scorer = load_scorers(tmp_path / "catalog.yaml").create("careful")
    assert isinstance(scorer, Cascade) and scorer.margin == 0.2
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(item) + "\n" for item in labelled_items()), encoding="utf-8")
    shown = runner.invoke(app, ["eval", str(data), "--scorer", "hallucination", "--model", CHEAP, "--escalate-to", STRONG, "--no-cache", "--store", str(tmp_path / "r.sqlite")])
    assert shown.exit_code in (0, 1), shown.output
    text = " ".join(shown.stdout.split())
    assert f"hallucination cascade {CHEAP} > {STRONG}: 15 of 45 item(s) (33%) went to {STRONG} (failed validation 5, near the threshold 10)" in text
    assert f"{CHEAP} alone against the labels: 40 labelled:" in text


def test_a_cascade_is_refused_when_it_cannot_be_one(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="named twice"):
        create_scorer("hallucination", model=CHEAP, judge=JudgeSettings(escalate_to=CHEAP, api_key="sk-x"))
    with pytest.raises(ConfigError, match="a jury or a cascade, not both"):
        create_scorer("hallucination", judge=JudgeSettings(models=[CHEAP, "openai/o3"], escalate_to=STRONG, api_key="sk-x"))
    with pytest.raises(ConfigError, match="samples must be a whole number from 1 to 5"):
        create_scorer("hallucination", model=CHEAP, judge=JudgeSettings(escalate_to=STRONG, samples=9, api_key="sk-x"))
    (tmp_path / "catalog.yaml").write_text(
        f"scorers:\n  both:\n    extends: hallucination\n    judges: [{CHEAP}, {STRONG}]\n    cascade: {{escalate_to: {STRONG}}}\n", encoding="utf-8"
    )
    with pytest.raises(ConfigError, match="a jury .judges:. or a cascade .cascade:., not both"):
        load_scorers(tmp_path / "catalog.yaml")


def test_align_tunes_the_margin_on_dev_and_keeps_it_only_on_held_out_evidence(judge: JudgeServer, tmp_path: Path) -> None:
    from engine.runs.align import align

    def claims(request: Request) -> dict[str, Any]:
        return {"claims": claims_of(between(request.prompt, "output").rstrip("."))}

    def verdicts(request: Request) -> dict[str, Any]:
        # TRIO items hallucinate all three claims; the cheap judge sees only the first (0.33,
        # 0.17 from the threshold: a margin of 0.1 keeps its wrong verdict, 0.2 sends it on).
        found = numbered_claims(request.prompt)
        strong = request.body["model"] == "gpt-4o"
        marks = ["yes" if ("WRONG" in claim or ("TRIO" in claim and (strong or index == 0))) else "no" for index, claim in enumerate(found)]
        return {"verdicts": [{"statement": claim, "verdict": mark, "reason": "r"} for claim, mark in zip(found, marks)]}

    judge.on("Claims", claims)
    judge.on("HallucinationVerdicts", verdicts)
    judge.on("Reason", {"reason": "r"})
    data = tmp_path / "data.jsonl"
    rows = [(f"fine {n}.", False) for n in range(40)] + [(f"WRONG {n}.", True) for n in range(40)]
    rows += [(f"TRIO one {n}. TRIO two {n}. TRIO three {n}.", True) for n in range(40)]
    data.write_text(
        "".join(json.dumps({"id": f"i{n}", "output": output, "context": ["facts"], "expected": {"hallucination": flag}}) + "\n" for n, (output, flag) in enumerate(rows)),
        encoding="utf-8",
    )
    result = align(data, "hallucination", model=CHEAP, store=tmp_path / "r.sqlite", output_dir=tmp_path / "tuned", cache=False, judge=JudgeSettings(escalate_to=STRONG))
    assert [trial.kind for trial in result.trials] == ["margin"] * 6
    assert result.accepted, result.verdict
    assert result.chosen[0].startswith("cascade margin 0.1 -> 0.2")
    written = (tmp_path / "tuned" / "scorers.yaml").read_text(encoding="utf-8")
    assert f"escalate_to: {STRONG}" in written and "margin: 0.2" in written
    tuned = load_scorers(tmp_path / "tuned" / "scorers.yaml").create("hallucination")
    assert isinstance(tuned, Cascade) and tuned.margin == 0.2

    # Where no margin does better beyond noise, nothing changes.
    judge.reset()
    judge.on("Claims", claims)
    judge.on("HallucinationVerdicts", verdicts)
    judge.on("Reason", {"reason": "r"})
    plain = tmp_path / "plain.jsonl"
    plain.write_text("".join(line for line in data.read_text(encoding="utf-8").splitlines(keepends=True) if "TRIO" not in line), encoding="utf-8")
    unchanged = align(plain, "hallucination", model=CHEAP, store=tmp_path / "r2.sqlite", output_dir=tmp_path / "not-written", cache=False, judge=JudgeSettings(escalate_to=STRONG))
    assert not unchanged.accepted and "nothing was changed" in unchanged.verdict.lower()
    assert not (tmp_path / "not-written").exists()
