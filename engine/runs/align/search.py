"""The search: candidates tried on dev, one change at a time, each kept only when it beats
the best so far; then the best one measured once on the untouched test split."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ...scoring import AnyScorer
from ..results import Comparison
from ..measures.stats import Labelled, compare_labelled, flags
from ..tuning import calibration
from .optimizer import MAX_DISAGREEMENTS, OPTIMIZER_ID, disagreement, optimizer, optimizer_item
from .results import AlignResult, CandidateKind, Trial
from .session import Session, improves, metric_of
from .split import LabelledItem, Split
from .variants import Change, Workshop, instructions_of, target_step, with_examples_shown, with_instructions


@dataclass
class Search:
    """The state of one search: the best change so far and what it scores on dev."""

    session: Session
    workshop: Workshop
    split: Split
    result: AlignResult
    trials_left: int
    base_threshold: float
    baseline: dict[str, Labelled] = field(default_factory=dict)
    best: Change = field(default_factory=Change)
    best_dev: float | None = None
    best_dev_labelled: list[Labelled] = field(default_factory=list)
    best_scorer: AnyScorer | None = None

    def labelled(self, items: Sequence[LabelledItem]) -> list[Labelled]:
        return [self.baseline[item.id] for item in items if item.id in self.baseline]

    def threshold_of(self, change: Change) -> float:
        return change.threshold if change.threshold is not None else self.base_threshold

    def verdict_words(self, expected: bool | float) -> str:
        """The answer people gave, as a worked example says it."""
        plan = self.workshop.plan
        scale = self.best_scorer.pass_line.scale if self.best_scorer is not None else 1.0
        if not isinstance(expected, bool):
            return f"{plan.name} {expected:g} of {scale:g}"
        worst = scale if plan.direction == "lower_is_better" else 0
        best = 0 if plan.direction == "lower_is_better" else scale
        if expected:
            return f"{plan.name} {worst:g} of {scale:g}: people flagged this output"
        return f"{plan.name} {best:g} of {scale:g}: people found nothing to flag in this output"

    def record(self, name: str, kind: CandidateKind, change: str, dev: float | None, run: str | None) -> bool:
        kept = improves(dev, self.best_dev, self.session.metric)
        self.result.trials.append(Trial(name=name, kind=kind, change=change, dev=dev, best_before=self.best_dev, kept=kept, run=run))
        shown = "-" if dev is None else f"{dev:.4f}"
        before = "-" if self.best_dev is None else f"{self.best_dev:.4f}"
        self.session.say(f"trial {name}: {change}: {self.session.metric} on dev {shown} (best so far {before}): {'kept' if kept else 'dropped'}")
        return kept

    async def try_change(self, change: Change, name: str, kind: CandidateKind, described: str) -> None:
        """A candidate judged on dev; it becomes the best when its metric beats the best's."""
        self.trials_left -= 1
        scorer = self.workshop.scorer(change)
        dev = await self.session.judge(scorer, self.split.dev, f"dev-{scorer.plan.fingerprint[:10]}", f"trial {name} on dev")
        labelled = [dev[item.id] for item in self.split.dev if item.id in dev]
        value = metric_of(labelled, self.threshold_of(change), self.session.direction, self.session.metric)
        if self.record(name, kind, described, value, self.session.runs[-1]):
            self.best, self.best_dev, self.best_dev_labelled, self.best_scorer = change, value, labelled, scorer

    def wrong_on_train(self) -> list[tuple[LabelledItem, Labelled]]:
        """Train items the current scorer got wrong, the furthest from their label first."""
        wrong = []
        for item in self.split.train:
            labelled = self.baseline.get(item.id)
            if labelled is None:
                continue
            if _is_wrong(labelled, self.base_threshold, self.session):
                wrong.append((item, labelled))
        return sorted(wrong, key=lambda pair: (-abs(pair[1].score - float(pair[1].expected)), pair[0].id))

    async def examples(self) -> None:
        """Greedy forward selection: each wrong train item, worst first, added as a worked
        example while trials last; kept when dev improves."""
        step = target_step(self.workshop.plan)
        template = None
        if "examples" not in step.reads:
            name, source = self.workshop.step_template()
            template = with_examples_shown(source)
            if template is None:
                self.session.say(f"{name} shows no worked examples and has no instructions to put them after: no example candidates")
                return
            self.session.say(f"{name} shows no worked examples: the candidates show them after its instructions (partials/examples.j2)")
        for item, labelled in self.wrong_on_train():
            if self.trials_left <= 1:  # one trial is kept for an instruction edit
                break
            example = {key: item.raw.get(key) for key in ("input", "output", "context")}
            example = {"input": _text(example["input"]), "output": _text(example["output"]), "context": _context(example["context"])}
            example["answer"] = self.verdict_words(item.expected)
            change = dataclasses.replace(self.best, examples=(*self.best.examples, example), template=self.best.template or template)
            await self.try_change(change, f"example-{item.id}", "examples", f"add train item {item.id} as a worked example")

    async def instructions(self, optimizer_model: str | None) -> None:
        """One rewrite of the target step's instructions, proposed by the optimizer from the
        train items the scorer got wrong."""
        if self.trials_left <= 0:
            return
        name, original = self.workshop.step_template()
        source = self.best.template or original
        shown = {example.get("output") for example in self.best.examples}
        wrong = [(item, labelled) for item, labelled in self.wrong_on_train() if _text(item.raw.get("output")) not in shown]
        if not wrong:
            self.session.say("no disagreement left on train for the optimizer to read: no instruction edit")
            return
        span = instructions_of(source)
        if span is None:
            self.session.say(f"{name} has no run of plain instructions to rewrite: no instruction edit")
            return
        plan = self.workshop.plan
        disagreements = [disagreement(item.raw, labelled, self.verdict_words(item.expected)) for item, labelled in wrong[:MAX_DISAGREEMENTS]]
        instructions = source[span[0] : span[1]].strip()
        item = optimizer_item(scorer_name=plan.name, description=plan.description, step_id=self.workshop.step_id, instructions=instructions, disagreements=disagreements)
        proposer = optimizer(optimizer_model, self.workshop.judge)
        result = await self.session.evaluate([item], proposer, "optimizer", f"optimizer ({proposer.judge.model}) on {len(disagreements)} disagreement(s)",
                                             whole=False)  # a proposal that failed is said, and align goes on without it
        outcome = result.items[0].results.get(OPTIMIZER_ID) if result.items else None
        proposal = outcome.steps["propose"].result if outcome is not None and outcome.ok and "propose" in outcome.steps else None
        rewritten = with_instructions(source, str(proposal.get("instructions", ""))) if isinstance(proposal, dict) else None
        if rewritten is None or not isinstance(proposal, dict):
            self.session.say(f"the optimizer gave no usable rewrite of {name}{': ' + outcome.error if outcome is not None and outcome.error else ''}")
            return
        change = dataclasses.replace(self.best, template=rewritten, rewrite=str(proposal.get("summary", "")))
        await self.try_change(change, "instructions", "instructions", f"rewrite {name}'s instructions: {proposal.get('summary', '')}")

    def threshold(self) -> None:
        """The calibrated threshold of the best candidate, on dev (no judge call)."""
        if self.session.metric == "mae" or not self.best_dev_labelled or self.best_scorer is None:
            return
        found = calibration(self.best_scorer, self.best_dev_labelled, self.session.metric)
        if found.best is None or found.best.threshold == self.threshold_of(self.best):
            return
        value = getattr(found.best, self.session.metric)
        if self.record("threshold", "threshold", f"flag at {found.best.threshold:g}", value, None):
            self.best, self.best_dev = dataclasses.replace(self.best, threshold=found.best.threshold), value

    async def test(self) -> Comparison:
        """Baseline against the best candidate on the test split: the paired comparison."""
        scorer = self.best_scorer
        assert scorer is not None
        if self.best.changes_scorer:
            tested = await self.session.judge(scorer, self.split.test, f"test-{scorer.plan.fingerprint[:10]}", "the best candidate on test")
        else:
            tested = {item.item_id: item for item in self.labelled(self.split.test)}
        scorer_id = self.workshop.scorer_id
        return compare_labelled(
            self.labelled(self.split.test), list(tested.values()), names=(scorer_id, f"{scorer_id}@aligned"),
            thresholds=(self.base_threshold, self.threshold_of(self.best)), direction=self.session.direction,
        )


def _is_wrong(labelled: Labelled, threshold: float, session: Session) -> bool:
    """Whether the scorer's verdict differs from people's (for MAE: off by more than a
    quarter of the scale)."""
    if session.metric == "mae":
        return abs(labelled.score - float(labelled.expected)) > 0.25 * session.human_threshold * 2
    return flags(labelled.score, threshold, session.direction) != bool(labelled.expected)


def _text(value: Any) -> str | None:
    return None if value is None else value if isinstance(value, str) else str(value)


def _context(value: Any) -> list[str] | None:
    if value is None:
        return None
    return [value] if isinstance(value, str) else [str(piece) for piece in value]
