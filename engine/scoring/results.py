"""What a run returns: the run being scored (as `get_context` sees it), one record per step,
and the score result. A step's record has one shape wherever it goes: in a score result,
in a stored record and in an eval outcome."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..judge import FieldProbabilities, TokenUsage


class Run(BaseModel):
    """The run being scored, as `get_context` receives it."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    run_id: str
    output: Any = Field(description="As given: text or a list of chat messages")
    input: Any = None
    ground_truth: Any = None
    output_text: str = ""
    input_text: str | None = None
    turns: Any = Field(default=None, description="The whole conversation, when the run is one")
    expected_trajectory: Any = None


class StepRecord(BaseModel):
    """What one step did: the prompt it sent, the validated answer it got, what it cost."""

    id: str
    kind: str
    skipped: bool = False
    system_prompt: str | None = None
    prompt: str | None = None
    result: Any = None
    thinking: str | None = Field(default=None, description="A reasoning model's thinking before its answer (never validated)")
    usage: TokenUsage | None = None
    cached: bool = Field(default=False, description="Answered by the response cache: no provider was paid")
    batch: bool = Field(default=False, description="Asked through the provider's Batch API: billed at its batch price")
    not_asked: str | None = Field(
        default=None, description="Why a reason step did not ask the judge: 'passing' (reasons for failing items only), 'sure' (for unsure items only), 'never', 'on-demand'"
    )
    probabilities: list[FieldProbabilities] | None = Field(
        default=None, description="An answer's verdicts: how likely each allowed value of each enum, boolean and small-number field was"
    )
    confidence: float | None = Field(
        default=None, description="The score step's: the chance that the item's pass/fail would be the same were the judge asked again"
    )
    calibrated_confidence: float | None = Field(
        default=None, description="The score step's: the chance that people agree with the item's pass/fail, its confidence read through the map "
        "`scorers calibrate --fit-confidence` kept for this version of the scorer (None: no map kept)"
    )
    expected_score: float | None = Field(default=None, description="The score step's: the score's expected value over the verdicts' probabilities")
    duration_ms: float = 0.0


class JudgeVerdict(BaseModel):
    """One judge of a jury (or one judgement of a cascade): its own score and reason, and its
    pass/fail verdict when there is a pass line."""

    model: str
    score: float
    reason: str | None = None
    passed: bool | None = None
    usage: TokenUsage = Field(default_factory=TokenUsage)
    steps: dict[str, StepRecord] = Field(
        default_factory=dict, description="This judge's own steps: its calls, tokens and answers count like any judge's"
    )
    decided: bool | None = Field(default=None, description="A cascade's judgement whose score is the result's")
    escalation: str | None = Field(default=None, description="A cascade's strong judge: why the item was sent to it")


class ScoreResult(BaseModel):
    """The outcome of one run. Besides the fields, `<step>_step_result` and `<step>_prompt`
    read the result and prompt of any step (e.g. `preprocess_step_result`, `analyze_prompt`,
    `generate_reason_prompt`)."""

    run_id: str
    scorer_id: str
    scorer_hash: str = Field(description="Fingerprint of the definition, templates and schemas")
    model: str = Field(description="The judge's 'provider/model'; 'none' for a scorer that asks no judge")
    score: float
    reason: str | None = None
    steps: dict[str, StepRecord]
    context: list[str] | None = Field(default=None, description="The context the steps were given (None: no step read one)")
    duration_ms: float = 0.0
    judges: list[JudgeVerdict] | None = Field(default=None, description="A jury's judges, each with its own score (None: one judge)")
    disagreement: bool | None = Field(default=None, description="A jury's judges disagreed beyond its margin or on the verdict")

    @property
    def confidence(self) -> float | None:
        """The chance that this item's pass/fail would be the same were the judge asked again,
        from its verdicts' probabilities (None: the judge gave none)."""
        return next((record.confidence for record in self.steps.values() if record.kind == "score"), None)

    @property
    def calibrated_confidence(self) -> float | None:
        """The chance that people agree with this item's pass/fail, by the confidence map kept
        for this version of the scorer (None: no map kept, or no confidence)."""
        return next((record.calibrated_confidence for record in self.steps.values() if record.kind == "score"), None)

    @property
    def expected_score(self) -> float | None:
        """The score's expected value over the verdicts' probabilities (None: the judge gave none)."""
        return next((record.expected_score for record in self.steps.values() if record.kind == "score"), None)

    @property
    def usage(self) -> TokenUsage:
        """Tokens of every judge call of the run, re-asks (and every judge of a jury) included."""
        if self.judges is not None:
            return sum((judge.usage for judge in self.judges), TokenUsage())
        total = TokenUsage()
        for record in self.steps.values():
            if record.usage is not None:
                total = total + record.usage
        return total

    def __getattr__(self, name: str) -> Any:
        steps = self.__dict__.get("steps") or {}
        for suffix, attribute in (("_step_result", "result"), ("_prompt", "prompt")):
            step_id = name.removesuffix(suffix)
            if name.endswith(suffix) and step_id in steps:
                return getattr(steps[step_id], attribute)
        return super().__getattr__(name)  # type: ignore[misc]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: the contract's flat fields, then token usage per step."""
        flat: dict[str, Any] = {"run_id": self.run_id, "scorer_id": self.scorer_id, "scorer_hash": self.scorer_hash, "model": self.model}
        for record in self.steps.values():
            if record.kind != "reason":  # a reason step's result is `reason` below
                # for the score step: its named values and the score, e.g. {"hallucinated": 0.5, "score": 0.5}
                flat[f"{record.id}_step_result"] = record.result
            if record.kind in ("llm", "reason"):
                flat[f"{record.id}_prompt"] = record.prompt
        flat["score"] = self.score
        flat["reason"] = self.reason
        if self.confidence is not None:
            flat["confidence"] = self.confidence
            if self.calibrated_confidence is not None:
                flat["calibrated_confidence"] = self.calibrated_confidence
            flat["expected_score"] = self.expected_score
            flat["probabilities"] = {
                record.id: [figure.model_dump() for figure in record.probabilities] for record in self.steps.values() if record.probabilities
            }
        usage = {record.id: record.usage.model_dump() for record in self.steps.values() if record.usage is not None}
        flat["usage"] = {**usage, "total": self.usage.model_dump()}
        flat["skipped_steps"] = [record.id for record in self.steps.values() if record.skipped]
        flat["duration_ms"] = round(self.duration_ms, 1)
        if self.judges is not None:
            flat["judges"] = [judge.model_dump() for judge in self.judges]
            flat["disagreement"] = self.disagreement
        return flat
