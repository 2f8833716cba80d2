"""`scorers align` end to end against the scripted judge, scripted so that its answers
depend on the prompt: it misjudges claims marked SUBTLE unless the prompt shows it a worked
example of one (a judge that learns), or whatever it is shown (a judge that does not)."""

from __future__ import annotations

from engine.judge import JudgeSettings
import json
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers.scripted import claims_of, numbered_claims
from typer.testing import CliRunner

from engine import align, load_scorers
from engine.cli import app
from engine.store import RunLease, SQLiteStore
from engine.testing import JudgeServer, Reply, Request

ROOT = Path(__file__).resolve().parent.parent

REWRITE = "Decide for each claim whether the context supports it. A SUBTLE claim is always a hallucination."


def labelled_items(path: Path, plain: int = 40, wrong: int = 20, subtle: int = 20) -> Path:
    """Plain claims (people pass them), WRONG ones and SUBTLE ones (people flag both)."""
    rows = [{"id": f"plain-{n}", "output": f"The sky is plain blue number {n}", "context": ["The sky is blue."], "expected": {"hallucination": False}} for n in range(plain)]
    rows += [{"id": f"wrong-{n}", "output": f"A WRONG fact number {n}", "context": ["Facts."], "expected": {"hallucination": True}} for n in range(wrong)]
    rows += [{"id": f"subtle-{n}", "output": f"A SUBTLE slip number {n}", "context": ["Facts."], "expected": {"hallucination": True}} for n in range(subtle)]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def script_learner(judge: JudgeServer, learns: bool, obeys_rewrite: bool = False) -> None:
    def claims(request: Request) -> Reply:
        return Reply(answer={"claims": claims_of(request.blocks("output")[0])})

    def verdicts(request: Request) -> dict[str, Any]:
        shown = " ".join(request.blocks("example_output"))
        knows_subtle = (learns and "SUBTLE" in shown) or (obeys_rewrite and "SUBTLE claim is always" in request.prompt)
        verdicts = []
        for claim in numbered_claims(request.prompt):
            flagged = "WRONG" in claim or ("SUBTLE" in claim and knows_subtle)
            verdicts.append({"statement": claim, "verdict": "yes" if flagged else "no", "reason": "scripted"})
        return {"verdicts": verdicts}

    judge.on("Claims", claims)
    judge.on("HallucinationVerdicts", verdicts)
    judge.on("Reason", {"reason": "scripted reason"})
    judge.on("InstructionRewrite", {"instructions": REWRITE, "summary": "SUBTLE claims count as hallucinations"})


@pytest.mark.slow
def test_align_finds_the_examples_that_help_and_the_test_interval_says_so(judge: JudgeServer, tmp_path: Path) -> None:
    script_learner(judge, learns=True)
    data = labelled_items(tmp_path / "labelled.jsonl")
    events: list[str] = []
    store = tmp_path / "results.sqlite"
    result = align(data, "hallucination", trials=3, store=store, output_dir=tmp_path / "aligned", on_event=events.append)

    assert (result.split.train, result.split.dev, result.split.test) == (32, 24, 24)
    assert events[0] == "split (seed 0): 32 train, 24 dev, 24 test"
    assert result.trials[0].kind == "examples" and result.trials[0].kept
    assert result.accepted, result.verdict
    delta = result.test_delta
    assert delta is not None and delta.delta.low is not None and delta.delta.low > 0
    assert delta.variant == 1.0 and delta.baseline is not None and delta.baseline < 1.0
    assert result.test is not None and {change.item_id.split("-")[0] for change in result.test.fixed} == {"subtle"} and not result.test.broken

    # The variant: a catalog beside the original, the example as data a tuner can read and edit.
    written = yaml.safe_load((tmp_path / "aligned" / "scorers.yaml").read_text(encoding="utf-8"))
    step = written["scorers"]["hallucination"]["steps"][0]
    assert step["id"] == "analyze" and "SUBTLE" in step["examples"][0]["output"]
    assert "people flagged this output" in step["examples"][0]["answer"]
    aligned = (tmp_path / "aligned" / "ALIGNED.md").read_text(encoding="utf-8")
    assert "Cohen's kappa" in aligned and "+        examples:" in aligned and "Fixed (wrong before, right now):" in aligned
    variant = load_scorers(tmp_path / "aligned").create("hallucination")
    assert "SUBTLE" in variant.plan.step("analyze").examples[0]["output"]  # type: ignore[union-attr]

    # Resumed: every result comes from the store; not one request reaches the judge.
    before = len(judge.requests)
    again = align(data, "hallucination", trials=3, store=store, output_dir=tmp_path / "aligned-again", cache=False)
    assert len(judge.requests) == before
    assert again.accepted and again.verdict.replace("aligned-again", "aligned") == result.verdict


@pytest.mark.slow
def test_with_a_judge_no_candidate_helps_align_changes_nothing_and_says_why(judge: JudgeServer, tmp_path: Path) -> None:
    script_learner(judge, learns=False)
    data = labelled_items(tmp_path / "labelled.jsonl")
    result = align(data, "hallucination", trials=3, store=tmp_path / "results.sqlite", output_dir=tmp_path / "aligned")

    assert not result.accepted and not (tmp_path / "aligned").exists()
    assert result.verdict.startswith("No candidate beat the current scorer on dev")
    assert [trial.kind for trial in result.trials] == ["examples", "examples", "instructions", "threshold"]
    assert not any(trial.kept for trial in result.trials)
    assert len(judge.requests_for("InstructionRewrite")) == 1


@pytest.mark.slow
def test_an_instruction_rewrite_the_judge_follows_is_written_as_a_template(judge: JudgeServer, tmp_path: Path) -> None:
    script_learner(judge, learns=False, obeys_rewrite=True)
    data = labelled_items(tmp_path / "labelled.jsonl")
    result = align(data, "hallucination", trials=2, store=tmp_path / "results.sqlite", output_dir=tmp_path / "aligned")

    assert result.accepted, result.verdict
    assert [trial.kept for trial in result.trials if trial.kind == "instructions"] == [True]
    template = (tmp_path / "aligned" / "prompts" / "aligned" / "hallucination" / "analyze.j2").read_text(encoding="utf-8")
    assert REWRITE in template and "{{ blocks.context_pieces(context) }}" in template  # the data blocks stay as they were
    assert "-Decide, for each claim below" in (tmp_path / "aligned" / "ALIGNED.md").read_text(encoding="utf-8")
    # The optimizer read the disagreements: SUBTLE items, the judge's answers and people's verdict.
    asked = judge.requests_for("InstructionRewrite")[0].prompt
    assert "SUBTLE" in asked and "people flagged this output" in asked and "<instructions>" in asked


def test_the_budget_stops_align_and_nothing_is_changed(judge: JudgeServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    script_learner(judge, learns=True)
    data = labelled_items(tmp_path / "labelled.jsonl")
    prices = tmp_path / "prices.yaml"
    prices.write_text("models:\n  openai/gpt-4o-mini: {input: 10, output: 10}\n", encoding="utf-8")
    monkeypatch.setenv("SCORERS_PRICES", str(prices))
    result = align(data, "hallucination", max_cost=0.005, store=tmp_path / "results.sqlite", output_dir=tmp_path / "aligned", concurrency=1)

    assert result.stopped is not None and "budget" in result.stopped
    assert not result.accepted and not (tmp_path / "aligned").exists()
    assert result.estimated_cost_usd is not None and result.estimated_cost_usd > 0.005
    assert len(judge.requests) < 80 * 3  # stopped during the baseline
    assert result.cost_usd <= 0.005

    # The budget is the align's, not one invocation's: the same command again spends no more.
    asked = len(judge.requests)
    again = align(data, "hallucination", max_cost=0.005, store=tmp_path / "results.sqlite", output_dir=tmp_path / "aligned", concurrency=1, cache=False)
    assert again.stopped is not None and len(judge.requests) == asked
    assert again.cost_usd == pytest.approx(result.cost_usd)


def test_an_align_another_process_holds_is_refused_at_once_and_a_hold_whose_process_died_lapses(judge: JudgeServer, tmp_path: Path) -> None:
    """Two aligns of the same runs at once each judged every item, then both wrote the
    variant. An align whose runs another process holds is refused in one line, before any
    judge call, naming that process; once the holder's lease lapses (it died on another
    host, where its pid cannot be looked up), the same command runs, and lets go when done."""
    script_learner(judge, learns=False)
    data = labelled_items(tmp_path / "labelled.jsonl", plain=34, wrong=17, subtle=17)  # the fewest align takes
    store = tmp_path / "results.sqlite"
    arguments = ["align", str(data), "--scorer", "hallucination", "--store", str(store), "--run", "held", "--trials", "1"]

    def held_elsewhere(for_seconds: float) -> RunLease | None:
        """The hold of a process on another host on every run named held-..., for `for_seconds` more."""
        expires = datetime.now(timezone.utc) + timedelta(seconds=for_seconds)
        with SQLiteStore(store) as opened:
            return opened.lease_run(RunLease(run="held-*", owner="elsewhere:4242:1", pid=4242, host="elsewhere", expires_at=expires))

    assert held_elsewhere(60) is None
    refused = CliRunner().invoke(app, arguments)
    assert refused.exit_code == 2, refused.output
    assert refused.stderr.strip().splitlines()[-1] == (
        "error: align 'held' is being run by another process (pid 4242 on elsewhere); wait for it to end, or give this one another --run name")
    assert "Traceback" not in refused.output and not judge.requests

    assert held_elsewhere(-1) is None  # its process died: its lease ran out unrenewed
    done = CliRunner().invoke(app, arguments)
    assert done.exit_code == 0, done.output
    assert "No candidate beat the current scorer" in done.stdout and judge.requests
    assert held_elsewhere(60) is None  # let go when done


def test_too_few_labelled_items_are_refused_with_the_number_needed(judge: JudgeServer, tmp_path: Path) -> None:
    data = labelled_items(tmp_path / "labelled.jsonl", plain=20, wrong=10, subtle=10)
    printed = CliRunner().invoke(app, ["align", str(data), "--scorer", "hallucination", "--store", str(tmp_path / "r.sqlite")])
    assert printed.exit_code == 2
    assert "too few items to align on (20 labelled False, 20 labelled True); each label needs at least 34 items" in " ".join(printed.stderr.split())
    assert not judge.requests


def test_align_on_items_it_cannot_score_fails_and_says_why_instead_of_changing_nothing_with_success(judge: JudgeServer, tmp_path: Path) -> None:
    """Without the context hallucination needs, no item can be scored: align used to print
    "No candidate beat the current scorer" and exit 0. A run that did not score every item
    never reports success."""
    script_learner(judge, learns=True)
    data = labelled_items(tmp_path / "labelled.jsonl")
    rows = [json.loads(line) for line in data.read_text(encoding="utf-8").splitlines()]
    some_unscorable = tmp_path / "some-without-context.jsonl"
    for path, without in ((data, range(len(rows))), (some_unscorable, range(0, len(rows), 10))):
        path.write_text("".join(json.dumps({key: value for key, value in row.items() if key != "context" or n not in without}) + "\n"
                                for n, row in enumerate(rows)), encoding="utf-8")
        printed = CliRunner().invoke(app, ["align", str(path), "--scorer", "hallucination", "--store", str(tmp_path / "r.sqlite"), "-o", str(tmp_path / "out")])

        assert printed.exit_code == 1, printed.output
        said = " ".join(printed.output.split())
        assert "error: baseline on every item:" in said and f"{len(without)} not scorable" in said, said
        assert "Nothing was changed" in said and "No candidate beat" not in said
        assert not (tmp_path / "out").exists()


@pytest.mark.slow
def test_the_align_command_shows_progress_the_candidates_and_the_verdict(judge: JudgeServer, tmp_path: Path) -> None:
    script_learner(judge, learns=True)
    data = labelled_items(tmp_path / "labelled.jsonl")
    printed = CliRunner().invoke(
        app, ["align", str(data), "--scorer", "hallucination", "--trials", "2", "--store", str(tmp_path / "r.sqlite"), "-o", str(tmp_path / "out")]
    )
    assert printed.exit_code == 0, printed.output
    stderr = " ".join(printed.stderr.split())
    assert "split (seed 0): 32 train, 24 dev, 24 test" in stderr and "baseline on every item: 80 item(s)" in stderr
    stdout = " ".join(printed.stdout.split())
    assert "candidates on dev" in stdout and "Accepted: 1 worked example(s) on step analyze" in stdout
    assert (tmp_path / "out" / "scorers.yaml").is_file()


@pytest.mark.slow
def test_a_gain_on_dev_that_test_cannot_confirm_beyond_noise_changes_nothing(judge: JudgeServer, tmp_path: Path) -> None:
    # Four SUBTLE items in all; with seed 1 one is in dev and one in test: the example fixes
    # one dev item (kept there), and on test one fixed item of 24 is within the noise.
    script_learner(judge, learns=True)
    data = labelled_items(tmp_path / "labelled.jsonl", plain=40, wrong=36, subtle=4)
    result = align(data, "hallucination", trials=2, seed=1, store=tmp_path / "results.sqlite", output_dir=tmp_path / "aligned")

    assert result.trials[0].kept
    assert result.test is not None and len(result.test.fixed) == 1 and result.test.fixed[0].item_id.startswith("subtle") and not result.test.broken
    delta = result.test_delta
    assert delta is not None and delta.delta.value is not None and delta.delta.value > 0 and delta.delta.low == 0
    assert not result.accepted and not (tmp_path / "aligned").exists()
    assert result.verdict.startswith("No candidate beat the current scorer beyond noise: the best on dev (1 worked example(s) on step analyze)")
    assert "Nothing was changed." in result.verdict


@pytest.mark.slow
def test_a_host_catalog_scorer_is_aligned_and_written_whole_with_its_own_templates(judge: JudgeServer, tmp_path: Path) -> None:
    # The strict variant's template shows no worked examples: align shows them after its
    # instructions, and the written variant carries the strict template and definition.
    script_learner(judge, learns=True)
    data = labelled_items(tmp_path / "labelled.jsonl")
    strict = load_scorers(ROOT / "examples" / "variants" / "strict" / "scorers.yaml")
    result = align(data, "hallucination", catalog=strict, trials=2, store=tmp_path / "r.sqlite", output_dir=tmp_path / "aligned")

    assert result.accepted, result.verdict
    written = yaml.safe_load((tmp_path / "aligned" / "scorers.yaml").read_text(encoding="utf-8"))
    scorer = written["scorers"]["hallucination"]
    assert "extends" not in scorer and [step["id"] for step in scorer["steps"]] == ["preprocess", "analyze", "score", "generate_reason"]
    template = (tmp_path / "aligned" / "prompts" / "aligned" / "hallucination" / "analyze.j2").read_text(encoding="utf-8")
    assert 'When you hesitate, decide "yes"' in template and '{% include "partials/examples.j2" %}\nContext:' in template
    assert (tmp_path / "aligned" / "prompts" / "strict" / "analyze.j2").is_file()
    variant = load_scorers(tmp_path / "aligned").create("hallucination")  # over the built-in catalog alone
    analyze = variant.plan.step("analyze")
    assert "SUBTLE" in analyze.examples[0]["output"]  # type: ignore[union-attr]
    rendered = analyze.prompt.render({"examples": list(analyze.examples), "context": ["c"], "preprocess": {"claims": ["x"]}})  # type: ignore[union-attr]
    assert 'When you hesitate, decide "yes"' in rendered and "<example_output>\nA SUBTLE slip" in rendered


@pytest.mark.slow
def test_scores_as_labels_align_on_mean_absolute_error(judge: JudgeServer, tmp_path: Path) -> None:
    script_learner(judge, learns=True)
    rows = [json.loads(line) for line in labelled_items(tmp_path / "flags.jsonl").read_text(encoding="utf-8").splitlines()]
    for row in rows:
        row["expected"] = {"hallucination": 1.0 if row["expected"]["hallucination"] else 0.0}
    result = align(rows, "hallucination", metric="mae", trials=2, store=tmp_path / "r.sqlite", output_dir=tmp_path / "aligned")

    assert result.accepted, result.verdict
    delta = result.test_delta
    assert delta is not None and delta.name == "mean_abs_error" and delta.delta.high is not None and delta.delta.high < 0
    assert "went from" in result.verdict and "mean absolute error" in result.verdict


def test_mean_absolute_error_needs_scores_as_labels(tmp_path: Path) -> None:
    from engine import ConfigError

    with pytest.raises(ConfigError, match="metric mae needs scores as labels"):
        align(labelled_items(tmp_path / "flags.jsonl"), "hallucination", metric="mae", judge=JudgeSettings(api_key="sk-x"))
