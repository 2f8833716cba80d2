"""How sure the judge was (issue 41): the probability of each verdict read from the judge's
token log-probabilities (streamed and whole, renormalised over what the schema allows), the
item's confidence and expected score carried through the plan's score, a server that refuses
log-probabilities learnt once and never an error, and a cascade that sends on the items its
cheap judge is unsure of, with no extra samples."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from engine import ConfigError, JudgeSettings, create_scorer, load_scorers
from engine.scoring import Cascade
from engine.testing import JudgeServer, Reply, Request

from helpers.scripted import between, numbered_claims

CHEAP, STRONG = "openai/gpt-4o-mini", "openai/gpt-4o"


def one_claim(request: Request) -> dict[str, Any]:
    return {"claims": [between(request.prompt, "output")]}


def verdict(mark: str, alternatives: dict[str, float] | None = None) -> Any:
    """The verdict on the one claim asked about, with the candidates the model weighed for it."""

    def answer(request: Request) -> Reply:
        verdicts = [{"statement": numbered_claims(request.prompt)[0], "verdict": mark, "reason": "r"}]
        return Reply.unsure({"verdicts": verdicts}, {"verdicts[0].verdict": alternatives} if alternatives else {})

    return answer


def test_each_verdict_has_its_probability_and_the_item_its_confidence(judge: JudgeServer) -> None:
    judge.on("Claims", lambda request: {"claims": ["The sky is green.", "Water is wet."]})
    # The model's own candidates, before the schema's grammar: "maybe" is not allowed and is
    # left out, the rest renormalised (0.6 and 0.3 of 0.9).
    answer = {"verdicts": [{"statement": "The sky is green.", "verdict": "no", "reason": "r"}, {"statement": "Water is wet.", "verdict": "no", "reason": "r"}]}
    judge.on("HallucinationVerdicts", Reply.unsure(answer, {
        "verdicts[0].verdict": {"no": 0.9, "yes": 0.1},
        "verdicts[1].verdict": {"no": 0.6, "yes": 0.3, "maybe": 0.1},
    }))
    judge.on("Reason", {"reason": "r"})
    result = create_scorer("hallucination", model=CHEAP).run(output="The sky is green. Water is wet.", context=["facts"])

    asked = judge.requests_for("HallucinationVerdicts")[0].body
    assert asked["logprobs"] is True and asked["top_logprobs"] == 5
    figures = {figure.field: figure for figure in result.steps["analyze"].probabilities or []}
    assert figures["verdicts[0].verdict"].probability("no") == pytest.approx(0.9, abs=1e-6)
    assert figures["verdicts[1].verdict"].probability("no") == pytest.approx(2 / 3, abs=1e-6)
    assert figures["verdicts[1].verdict"].probability("yes") == pytest.approx(1 / 3, abs=1e-6)
    assert figures["verdicts[1].verdict"].source == "logprobs"
    # The score is the share of "yes" (0 here, passing at 0.5 as lower is better): only both
    # verdicts turning "yes" (0.1 x 1/3) would flag the item.
    assert result.score == 0
    assert result.confidence == pytest.approx(1 - 0.1 / 3, abs=1e-4)
    assert result.expected_score == pytest.approx(round(0.9 / 3 * 0.5 + 0.1 * 2 / 3 * 0.5 + 0.1 / 3, 2))
    shown = result.to_dict()
    assert shown["confidence"] == result.confidence and shown["probabilities"]["analyze"][1]["values"] == ["yes", "no"]


def test_an_answer_read_whole_carries_the_same_probabilities(judge: JudgeServer) -> None:
    judge.on("Claims", one_claim)
    # This server refuses to stream the verdicts: the answer comes as one JSON document.
    judge.on("HallucinationVerdicts", [Reply.fail(400, "stream is not supported", param="stream"), verdict("yes", {"yes": 0.7, "no": 0.3})])
    judge.on("Reason", {"reason": "r"})
    result = create_scorer("hallucination", model=CHEAP).run(output="It rains.", context=["facts"])
    assert "stream" not in judge.requests_for("HallucinationVerdicts")[-1].body
    assert result.score == 1 and result.confidence == pytest.approx(0.7)
    assert result.expected_score == pytest.approx(0.7)


def test_a_server_that_refuses_log_probabilities_is_asked_without_them_and_scores_as_before(judge: JudgeServer, caplog: pytest.LogCaptureFixture) -> None:
    judge.refuses_logprobs = True
    judge.on("Claims", one_claim)
    judge.on("HallucinationVerdicts", verdict("yes", {"yes": 0.7, "no": 0.3}))
    judge.on("Reason", {"reason": "r"})
    scorer = create_scorer("hallucination", model=CHEAP)
    first = scorer.run(output="It rains.", context=["facts"])
    second = scorer.run(output="It snows.", context=["facts"])
    assert first.score == second.score == 1
    assert first.confidence is None and "confidence" not in first.to_dict()
    asked = [request.body for request in judge.requests]
    # Refused once (on the first call), learnt for the server, never asked again.
    assert sum(1 for body in asked if "logprobs" in body) == 1
    assert not any(record.levelname == "WARNING" and "logprobs" in record.getMessage() for record in caplog.records)


def test_a_rating_gets_its_distribution_and_expected_value(judge: JudgeServer, tmp_path: Path) -> None:
    from helpers.catalogs import write_catalog

    catalog = write_catalog(tmp_path, {
        "catalog.yaml": """\
            scorers:
              helpful:
                name: Helpful
                description: How helpful the output is, 1 to 5.
                direction: higher_is_better
                threshold: 3
                options:
                  scale: {type: number, default: 5}
                steps:
                  - id: rate
                    kind: llm
                    prompt: rate.j2
                    schema: rating.yaml
                  - id: score
                    kind: score
                    score: rate.rating
                    expected_value: true
            """,
        "prompts/rate.j2": "Rate <output>\n{{ output }}\n</output>\n",
        "schemas/rating.yaml": """\
            title: Rating
            type: object
            properties:
              rating: {type: integer, minimum: 1, maximum: 5}
            required: [rating]
            """,
    })
    judge.on("Rating", Reply.unsure({"rating": 4}, {"rating": {4: 0.5, 3: 0.25, 5: 0.25}}))
    result = load_scorers(catalog).create("helpful", model=CHEAP).run(output="Sure, here it is.")
    figure = (result.steps["rate"].probabilities or [])[0]
    assert figure.values == [1, 2, 3, 4, 5] and figure.probabilities == pytest.approx([0, 0, 0.25, 0.5, 0.25])
    assert figure.expected == pytest.approx(4.0)
    # Declared as the expected value: the score is 4.0, the plain one kept beside it; a 3
    # still passes at the threshold 3, so the pass is sure.
    assert result.score == 4.0 and result.steps["score"].result["plain_score"] == 4
    assert result.confidence == 1.0


def script_cheap_and_strong(judge: JudgeServer) -> None:
    """The cheap judge is sure of SURE items and unsure of DOUBT items (2/3 for its "no",
    once "maybe", which the schema does not allow, is left out); the strong judge says "yes"."""

    def verdicts(request: Request) -> Reply:
        if request.body["model"] == "gpt-4o":
            return verdict("yes")(request)
        if "DOUBT" in request.prompt:
            return verdict("no", {"no": 0.6, "yes": 0.3, "maybe": 0.1})(request)
        return verdict("no", {"no": 0.95, "yes": 0.05})(request)

    judge.on("Claims", one_claim)
    judge.on("HallucinationVerdicts", verdicts)
    judge.on("Reason", {"reason": "r"})


def test_a_cascade_sends_on_what_its_cheap_judge_is_unsure_of_without_asking_again(judge: JudgeServer, tmp_path: Path) -> None:
    script_cheap_and_strong(judge)
    (tmp_path / "catalog.yaml").write_text(
        f"scorers:\n  careful:\n    extends: hallucination\n    judge:\n      model: {CHEAP}\n"
        f"    cascade:\n      escalate_to: {STRONG}\n      margin: 0\n      min_confidence: 0.8\n",
        encoding="utf-8",
    )
    cascade = load_scorers(tmp_path / "catalog.yaml").create("careful")
    assert isinstance(cascade, Cascade) and cascade.min_confidence == 0.8

    sure = cascade.run(output="SURE it is so.", context=["facts"])
    assert sure.score == 0 and sure.judges is not None and len(sure.judges) == 1
    assert sure.confidence == pytest.approx(0.95)

    unsure = cascade.run(output="DOUBT it is so.", context=["facts"])
    assert unsure.score == 1 and unsure.judges is not None and len(unsure.judges) == 2
    assert unsure.judges[-1].escalation == "its confidence 0.67 is below 0.8"
    cheap_calls = [request for request in judge.requests_for("HallucinationVerdicts") if request.body["model"] == "gpt-4o-mini"]
    assert len(cheap_calls) == 2  # one per item: the bound needs no extra samples


def test_min_confidence_must_be_a_probability_and_is_placed_at_its_line(tmp_path: Path) -> None:
    path = tmp_path / "catalog.yaml"
    path.write_text(f"scorers:\n  careful:\n    extends: hallucination\n    cascade:\n      escalate_to: {STRONG}\n      min_confidence: 1.5\n", encoding="utf-8")
    with pytest.raises(ConfigError) as refused:
        load_scorers(path)
    message = str(refused.value)
    assert "min_confidence" in message and "catalog.yaml:6" in message and "Traceback" not in message


def test_probabilities_of_an_answer_the_tokens_do_not_spell_are_left_out() -> None:
    from pydantic import BaseModel
    from typing import Literal

    from engine.judge.probabilities import from_logprobs

    class Verdict(BaseModel):
        verdict: Literal["yes", "no"]

    tokens = [{"token": '{"verdict": "', "logprob": 0.0, "top_logprobs": []}, {"token": "yes", "logprob": -0.2, "top_logprobs": [{"token": "no", "logprob": -1.8}, {"token": "yes", "logprob": -0.2}]}, {"token": '"}', "logprob": 0.0}]
    assert from_logprobs(Verdict, json.dumps({"verdict": "no"}), tokens) is None
    weighed = from_logprobs(Verdict, '{"verdict": "yes"}', tokens)
    assert weighed is not None and weighed[0].chosen == "yes" and weighed[0].probabilities[0] > 0.8


def test_an_answer_served_from_the_cache_is_as_sure_as_when_it_was_paid_for(judge: JudgeServer, tmp_path: Path) -> None:
    judge.on("Claims", one_claim)
    judge.on("HallucinationVerdicts", verdict("yes", {"yes": 0.7, "no": 0.3}))
    judge.on("Reason", {"reason": "r"})
    scorer = create_scorer("hallucination", model=CHEAP, cache=tmp_path / "answers.sqlite")
    paid = scorer.run(output="It rains.", context=["facts"])
    served = create_scorer("hallucination", model=CHEAP, cache=tmp_path / "answers.sqlite").run(output="It rains.", context=["facts"])
    assert served.steps["analyze"].cached and len(judge.requests_for("HallucinationVerdicts")) == 1
    assert served.confidence == paid.confidence == pytest.approx(0.7)


def test_eval_with_labels_tells_how_well_confidence_is_calibrated_and_results_show_it(judge: JudgeServer, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from engine.cli import app

    # SURE items: the judge flags them at 0.9, and people agree; DOUBT items: it flags them
    # at 0.6, and people do not. Calibration error: (|2.7 - 3| + |1.8 - 0|) / 6 = 0.35; the
    # confidence tells the two apart perfectly (AUROC 1).
    def verdicts(request: Request) -> Reply:
        sure = "SURE" in request.prompt
        return verdict("yes", {"yes": 0.9, "no": 0.1} if sure else {"yes": 0.6, "no": 0.4})(request)

    judge.on("Claims", one_claim)
    judge.on("HallucinationVerdicts", verdicts)
    judge.on("Reason", {"reason": "r"})
    items = [{"id": f"{kind.lower()}-{n}", "output": f"{kind} {n}.", "context": ["facts"], "expected": {"hallucination": kind == "SURE"}} for kind in ("SURE", "DOUBT") for n in range(3)]
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(item) + "\n" for item in items), encoding="utf-8")
    store = str(tmp_path / "r.sqlite")
    shown = CliRunner().invoke(app, ["eval", str(data), "--scorer", "hallucination", "--model", CHEAP, "--no-cache", "--store", store, "--run", "one"])
    text = " ".join(shown.stdout.split())
    assert "Confidence against people (6 item(s)): calibration error 0.35 (" in text, text
    assert "AUROC 1 (" in text and "reliability by confidence: 60%-70%: 0% agreed of 3, 90%-100%: 100% agreed of 3" in text

    summary = " ".join(CliRunner().invoke(app, ["results", "--store", store, "--run", "one"]).stdout.split())
    assert "Confidence against people (6 item(s)): calibration error 0.35 (" in summary, summary

    from engine.report.build import build_report
    from engine.report.render import render_report
    from engine.store import open_store

    page = render_report(build_report(open_store(store), "one"))
    assert "60% sure" in page and 'class="reliability"' in page and "calibration error of confidence" in page

    item = CliRunner().invoke(app, ["results", "--store", store, "--run", "one", "--item", "doubt-0", "--model", CHEAP])
    lines = " ".join(item.stdout.split())
    assert "hallucination (openai/gpt-4o-mini): 1, 60% sure" in lines, lines
    assert 'verdicts[0].verdict: "yes" 60%, "no" 40% (logprobs)' in lines


def test_a_judge_without_log_probabilities_gets_them_from_samples_when_the_scorer_asks(claude: Any, tmp_path: Path) -> None:
    from engine.testing import AnthropicServer

    assert isinstance(claude, AnthropicServer)
    claude.on("Claims", one_claim)
    marks = iter(["yes", "yes", "no", "yes"])
    claude.on("HallucinationVerdicts", lambda request: verdict(next(marks))(request))
    claude.on("Reason", {"reason": "r"})
    (tmp_path / "catalog.yaml").write_text(
        "scorers:\n  sampled:\n    extends: hallucination\n    judge:\n      confidence_samples: 3\n", encoding="utf-8"
    )
    result = load_scorers(tmp_path / "catalog.yaml").create("sampled", model="anthropic/claude-sonnet-4-5").run(output="It rains.", context=["facts"])
    figure = (result.steps["analyze"].probabilities or [])[0]
    assert figure.source == "samples" and figure.probability("yes") == pytest.approx(2 / 3)
    assert result.score == 1 and result.confidence == pytest.approx(2 / 3, abs=1e-4)
    assert len(claude.requests_for("HallucinationVerdicts")) == 3  # the answer and two more samples, paid for
    # The claims and the reason have no value to weigh: sampling them would only cost calls.
    assert len(claude.requests_for("Claims")) == 1 and len(claude.requests_for("Reason")) <= 1
    assert result.steps["analyze"].usage is not None and result.steps["analyze"].usage.completion_tokens == 3 * 10

    # Without the setting, a judge that gives none costs one call and says nothing of its confidence.
    claude.requests.clear()
    plain = create_scorer("hallucination", model="anthropic/claude-sonnet-4-5").run(output="It snows.", context=["facts"])
    assert plain.confidence is None and len(claude.requests_for("HallucinationVerdicts")) == 1


def test_calibrate_fits_a_confidence_map_and_keeps_it_only_on_held_out_evidence(judge: JudgeServer, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from engine.cli import app

    # Sure items (0.95) people agree with, unsure ones (0.6) they do not: the confidence as it
    # is overstates the unsure ones by 0.6, a map from dev items brings that near 0 on test.
    def verdicts(request: Request) -> Reply:
        return verdict("yes", {"yes": 0.95, "no": 0.05} if "SURE" in request.prompt else {"yes": 0.6, "no": 0.4})(request)

    judge.on("Claims", one_claim)
    judge.on("HallucinationVerdicts", verdicts)
    judge.on("Reason", {"reason": "r"})
    items = [{"id": f"{kind.lower()}-{n}", "output": f"{kind} {n}.", "context": ["facts"], "expected": {"mine": kind == "SURE"}} for kind in ("SURE", "DOUBT") for n in range(20)]
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(item) + "\n" for item in items), encoding="utf-8")
    (tmp_path / "catalog.yaml").write_text("scorers:\n  mine:\n    extends: hallucination\n", encoding="utf-8")
    shown = CliRunner().invoke(app, [
        "calibrate", str(data), "--scorer", "mine", "--config", str(tmp_path / "catalog.yaml"), "--model", CHEAP, "--no-cache",
        "--store", str(tmp_path / "r.sqlite"), "--fit-confidence", "--json",
    ])
    assert shown.exit_code == 0, shown.output
    fit = json.loads(shown.stdout)["confidence_map"]
    assert fit["dev_items"] == 20 and fit["test_items"] == 20
    assert fit["error_before"] > 0.25 and fit["error_after"] < 0.05 and fit["kept"] is True
    assert fit["gain"]["low"] > 0
    written = Path(fit["written"])
    assert written.parent == tmp_path / "confidence_maps" and written.name.startswith("mine@")

    # The scorer of that version carries the kept map: each item's calibrated confidence is
    # written beside the judge's own, and shown by every surface.
    scorer = load_scorers(tmp_path / "catalog.yaml").create("mine", model=CHEAP)
    unsure = scorer.run(output="DOUBT again.", context=["facts"])
    assert unsure.confidence == pytest.approx(0.6) and unsure.calibrated_confidence is not None and unsure.calibrated_confidence < 0.1
    assert unsure.to_dict()["calibrated_confidence"] == unsure.calibrated_confidence
    sure = scorer.run(output="SURE again.", context=["facts"])
    assert sure.calibrated_confidence is not None and sure.calibrated_confidence > 0.9
    run = CliRunner().invoke(app, ["eval", str(data), "--scorer", "mine", "--config", str(tmp_path / "catalog.yaml"), "--model", CHEAP,
                                   "--no-cache", "--store", str(tmp_path / "r.sqlite"), "--run", "mapped", "--sample", "2", "--seed", "3"])
    assert run.exit_code in (0, 1), run.output
    listed = " ".join(CliRunner().invoke(app, ["results", "--store", str(tmp_path / "r.sqlite"), "--run", "mapped"]).output.split())
    assert re.search(r"(95% sure, 9\d% calibrated|60% sure, [0-9]% calibrated)", listed), listed
    # Another version of the scorer (another option here) is not given this version's map.
    other = load_scorers(tmp_path / "catalog.yaml").create("mine", model=CHEAP, options={"language": "French"})
    assert other.run(output="DOUBT again.", context=["facts"]).calibrated_confidence is None


def test_a_confidence_map_that_does_not_help_beyond_noise_is_not_kept() -> None:
    from engine.runs.confidence_map import fit_confidence_map

    pairs = [(0.9, n % 10 != 0) for n in range(40)]  # 0.9 sure, right 9 times in 10: calibrated already
    fit = fit_confidence_map(pairs)
    assert fit.kept is False and fit.map is None and "not beyond noise" in fit.verdict
    with pytest.raises(ConfigError, match="at least 20"):
        fit_confidence_map(pairs[:5])


def test_a_confidence_cascade_counts_what_it_sent_on_as_unsure(judge: JudgeServer) -> None:
    from engine import run_evals

    script_cheap_and_strong(judge)
    cascade = Cascade(create_scorer("hallucination", model=CHEAP), create_scorer("hallucination", model=STRONG), margin=0, min_confidence=0.8)
    items = [{"id": f"{kind}-{n}", "output": f"{kind} {n}.", "context": ["facts"]} for kind in ("SURE", "DOUBT") for n in range(3)]
    summary = run_evals(items, [cascade], cache=False).summary["hallucination"]
    assert summary.cascade is not None and summary.cascade.escalated == 3 and summary.cascade.why == {"unsure": 3}


@pytest.mark.slow
def test_align_tunes_a_cascades_least_confidence_and_keeps_it_on_held_out_evidence(judge: JudgeServer, tmp_path: Path) -> None:
    from engine.runs.align import align

    # The cheap judge is right on SURE items (0.95 sure) and wrong on DOUBT ones (2/3 sure);
    # the strong one says "yes" to all, right on DOUBT items only. No margin helps (scores of
    # 0 and 1 lie 0.5 from the line); a least confidence between 2/3 and 0.95 does.
    script_cheap_and_strong(judge)
    data = tmp_path / "data.jsonl"
    rows = [(f"{kind} {n}.", kind == "DOUBT") for kind in ("SURE", "DOUBT") for n in range(34)]
    data.write_text("".join(json.dumps({"id": f"i{n}", "output": output, "context": ["facts"], "expected": {"hallucination": flag}}) + "\n" for n, (output, flag) in enumerate(rows)), encoding="utf-8")
    result = align(data, "hallucination", model=CHEAP, judge=JudgeSettings(escalate_to=STRONG), store=tmp_path / "r.sqlite", output_dir=tmp_path / "tuned", cache=False)
    assert result.accepted, result.verdict
    assert result.chosen[0].startswith("cascade margin 0.1 -> margin 0, min_confidence 0.7"), result.chosen
    written = (tmp_path / "tuned" / "scorers.yaml").read_text(encoding="utf-8")
    assert "min_confidence: 0.7" in written and "margin: 0\n" in written
    tuned = load_scorers(tmp_path / "tuned" / "scorers.yaml").create("hallucination")
    assert isinstance(tuned, Cascade) and tuned.min_confidence == 0.7


def script_three_kinds(judge: JudgeServer) -> None:
    """The judge says "no" to every item: sure of SURE items (0.95), less of DOUBT ones (2/3
    once "maybe" is left out), least of WOBBLE ones (0.55)."""
    alternatives = {"SURE": {"no": 0.95, "yes": 0.05}, "DOUBT": {"no": 0.6, "yes": 0.3, "maybe": 0.1}, "WOBBLE": {"no": 0.55, "yes": 0.45}}
    judge.on("Claims", one_claim)
    judge.on("HallucinationVerdicts", lambda request: verdict("no", next(odds for kind, odds in alternatives.items() if kind in request.prompt))(request))
    judge.on("Reason", {"reason": "r"})


def test_reasons_can_be_asked_for_the_unsure_items_only(judge: JudgeServer) -> None:
    from engine import run_evals

    script_three_kinds(judge)
    items = [{"id": f"{kind}-{n}", "output": f"{kind} {n}.", "context": ["facts"]} for kind in ("SURE", "DOUBT", "WOBBLE") for n in range(2)]
    result = run_evals(items, [create_scorer("hallucination", model=CHEAP)], cache=False, reasons="unsure")
    explained = {item.id for item in result.items if item.results["hallucination"].reason}
    assert explained == {"DOUBT-0", "DOUBT-1", "WOBBLE-0", "WOBBLE-1"}
    assert len(judge.requests_for("Reason")) == 4
    sure = next(item for item in result.items if item.id == "SURE-0").results["hallucination"]
    assert sure.steps["generate_reason"].not_asked == "sure"


def test_a_review_queue_takes_the_unsure_items_least_sure_first(judge: JudgeServer, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from engine import run_evals
    from engine.cli import app
    from engine.runs.labels.golden import read_queue
    from engine.store import open_store

    script_three_kinds(judge)
    items = [{"id": f"{kind}-{n}", "output": f"{kind} {n}.", "context": ["facts"]} for n in range(2) for kind in ("SURE", "DOUBT", "WOBBLE")]
    store = str(tmp_path / "r.sqlite")
    run_evals(items, [create_scorer("hallucination", model=CHEAP)], cache=False, store=store, run="one")
    made = CliRunner().invoke(app, ["queue", "create", "doubts", "--from-run", "one", "--scorer", "hallucination", "--filter", "unsure", "--least-sure-first", "--store", store])
    assert made.exit_code == 0, made.output
    opened = open_store(store)
    assert opened is not None
    assert [item.item_id for item in read_queue(opened, "doubts").items] == ["WOBBLE-0", "WOBBLE-1", "DOUBT-0", "DOUBT-1"]
    refused = CliRunner().invoke(app, ["queue", "create", "x", "--from-run", "one", "--scorer", "hallucination", "--filter", "unsure:1.5", "--store", store])
    assert refused.exit_code != 0 and "unsure:1.5: the bound is a probability" in refused.output


def test_a_400_that_only_names_log_probabilities_drops_them(judge: JudgeServer) -> None:
    judge.on("Claims", {"claims": ["It rains."]})
    judge.on("HallucinationVerdicts", [Reply.fail(400, "top_logprobs must be at most 2 on this server"), verdict("yes", {"yes": 0.7, "no": 0.3})])
    judge.on("Reason", {"reason": "r"})
    result = create_scorer("hallucination", model=CHEAP).run(output="It rains.", context=["facts"])
    assert result.score == 1 and result.confidence is None
    refused = next(number for number, request in enumerate(judge.requests) if "logprobs" in request.body)
    assert not any("logprobs" in request.body for request in judge.requests[refused + 1:])


def test_only_an_answer_with_something_to_weigh_asks_for_log_probabilities(judge: JudgeServer) -> None:
    """A list of claims has no value to weigh: its figures per token would only be sent and read."""
    judge.on("Claims", {"claims": ["It rains."]})
    judge.on("HallucinationVerdicts", verdict("yes", {"yes": 0.7, "no": 0.3}))
    judge.on("Reason", {"reason": "r"})
    result = create_scorer("hallucination", model=CHEAP).run(output="It rains.", context=["facts"])
    assert result.confidence is not None
    asked = {request.schema_name: "logprobs" in request.body for request in judge.requests}
    assert asked == {"Claims": False, "HallucinationVerdicts": True, "Reason": False}, asked


def test_a_gate_can_require_a_least_confidence_live_and_stored_alike(judge: JudgeServer, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from engine.cli import app

    script_three_kinds(judge)
    items = [{"id": f"{kind}-{n}", "output": f"{kind} {n}.", "context": ["facts"]} for kind in ("SURE", "DOUBT") for n in range(2)]
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(item) + "\n" for item in items), encoding="utf-8")
    store = str(tmp_path / "r.sqlite")
    common = ["--scorer", "hallucination", "--model", CHEAP, "--no-cache", "--store", store]
    strict = CliRunner().invoke(app, ["eval", str(data), *common, "--run", "strict", "--min-confidence", "0.9"])
    assert strict.exit_code == 1, strict.output
    said = " ".join(strict.output.split())
    assert "hallucination: 2 of 4 item(s) judged with less confidence than --min-confidence 0.9 (the least 0.67)" in said, said
    lenient = CliRunner().invoke(app, ["eval", str(data), *common, "--run", "lenient", "--min-confidence", "0.6"])
    assert lenient.exit_code == 0, lenient.output
    # The stored run is judged by the same rule.
    stored = " ".join(CliRunner().invoke(app, ["results", "--store", store, "--run", "strict"]).output.split())
    assert "2 of 4 item(s) judged with less confidence than --min-confidence 0.9" in stored, stored
    refused = CliRunner().invoke(app, ["eval", str(data), *common, "--min-confidence", "2"])
    assert refused.exit_code != 0 and "min_confidence is a probability, from 0 to 1, got 2" in refused.output


@pytest.mark.slow
def test_the_workbench_shows_each_items_confidence_and_its_calibration(judge: JudgeServer, tmp_path: Path) -> None:
    from helpers.workbench_pages import PAIRS, ok, started, wait_run

    judge.on("Claims", one_claim)
    judge.on("Reason", {"reason": "r"})
    # Every PAIRS output is judged as a DOUBT item would be: "no", 2/3 sure.
    judge.on("HallucinationVerdicts", lambda request: verdict("no", {"no": 0.6, "yes": 0.3, "maybe": 0.1})(request))
    (tmp_path / "scorers.yaml").write_text("scorers: {}\n", encoding="utf-8")
    with started(tmp_path / "scorers.yaml", tmp_path / "results.sqlite") as workbench:
        ok(workbench, "run", {"scorer": "hallucination", "data": str(PAIRS), "size": 6, "seed": 1, "files": {}})
        run = wait_run(workbench)["run"]
        report = ok(workbench, "report", {"scorer": "hallucination", "run": run})
        assert {item["confidence_shown"] for item in report["items"]} == {"67% sure"}
        calibration = report["agreement"]["calibration"]
        assert calibration["items"] == 6 and calibration["curve"][0]["confidence"] == pytest.approx(0.6667, abs=1e-3)
        item = ok(workbench, "item", {"run": run, "scorer": "hallucination", "item": report["items"][0]["item_id"]})
        assert item["confidence"] == pytest.approx(2 / 3, abs=1e-3)


def test_a_cascades_own_threshold_is_the_line_its_cheap_judges_confidence_is_about_in_a_batch(judge: JudgeServer, tmp_path: Path) -> None:
    from engine import run_evals

    # Two claims, the second unsure: "no" 2/3. Its score is 0 or 0.5. Against the scorer's
    # line 0.5 both pass (sure); against the cascade's 0.25, a 0.5 flags, so it is unsure.
    judge.on("Claims", {"claims": ["It rains.", "It pours."]})
    answer = {"verdicts": [{"statement": "It rains.", "verdict": "no", "reason": "r"}, {"statement": "It pours.", "verdict": "no", "reason": "r"}]}
    judge.on("HallucinationVerdicts", lambda request: Reply.unsure(answer, {"verdicts[1].verdict": {"no": 0.6, "yes": 0.3, "maybe": 0.1}}) if request.body["model"] == "gpt-4o-mini" else answer)
    judge.on("Reason", {"reason": "r"})
    (tmp_path / "catalog.yaml").write_text(
        f"scorers:\n  careful:\n    extends: hallucination\n    judge:\n      model: {CHEAP}\n"
        f"    cascade:\n      escalate_to: {STRONG}\n      margin: 0\n      threshold: 0.25\n      min_confidence: 0.8\n",
        encoding="utf-8",
    )
    cascade = load_scorers(tmp_path / "catalog.yaml").create("careful")
    result = run_evals([{"id": "a", "output": "It rains. It pours.", "context": ["facts"]}], [cascade], cache=False, reasons="failing")
    judges = result.items[0].results["careful"].judges
    assert judges is not None and judges[-1].escalation == "its confidence 0.67 is below 0.8"
