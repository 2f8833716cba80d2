"""Every setting of the catalog format, with its unit and how it is held to the settings it
depends on: one row each, read by setting_checks.py. A setting is named by its path from the
top of a catalog file, `*` standing for any key of a mapping or item of a list
(`scorers.*.cascade.margin`).

A new setting adds a row here (tests/test_setting_rules.py fails for a field of the spec's
models that has none); a new kind of relation is a class, the only code a row may need: in
setting_relations.py, or read from the setting's comment in setting_comments.py (from the
words around it, in setting_words.py), or of a scorer's judges in judge_relations.py, or of the
`traces:` section in trace_relations.py.
"""

# Annotations are evaluated here, not kept as text: NamedTuple would compile each text
# into a ForwardRef when the module loads, which every `scorers check` pays for.
from typing import NamedTuple

from ..judge.prices import undated
from .judge_relations import AboveAnEvenChance, AtOwnPassLine, NeedsProbabilities, NotTheFirstJudge, TooFewJudges
from .trace_relations import BeyondTheSampledShare, KeptNotLeftOut, ReadsItsOwnField, ShareAgainstComment, TakesItsItem
from .setting_comments import CommentAgainstDeclaredUnit, CommentInOwnUnit, ConfidenceCommentedAsDoubt, CountNotTimeSpan, LeastCommentedAsWrong, WholeNotEach
from .setting_words import EMPTY_SCORED, TOOL_RESULTS_SCORED, CommentGivesAnotherLine, CountAgainstComment, LostShareGiven, MethodAgainstWords, SamplesWhereSameMeant, ShareCommented, SpanAgainstComment, WindowTooSmallForMinimum, WordAgainstComment, ZeroCommentedAsNoLimit
from .setting_relations import (
    AgainstOwnPassLine, AmongNames, BestTailWatched, FailuresOfAJudgeFreeScorer, AmongSibling, AmongValues, AtMostSibling, CanHold, DearerThan, Distinct, HoldsLeastAnswer, HoldsUsualAnswer, IdlesSamples, MarginBelow, NeedsAbove,
    NeedsSibling, NotAFraction, NotMilliseconds, Relation, Unit, Within,
)


class SettingRule(NamedTuple):
    """One setting: where it is written, its unit, and what it is held to."""

    path: str
    unit: Unit
    relations: tuple[Relation, ...] = ()


_SAMPLES_AT_ZERO = NeedsAbove(
    1, "temperature", 0, "samples of a judge at temperature 0 give the same answer, so they never disagree and only cost more",
    "give the scorer's judge a temperature above 0 (e.g. `temperature: 0.7` under `judge:`), or take 1 sample", "samples-never-differ",
)
_CONFIDENCE_SAMPLES_AT_ZERO = NeedsAbove(
    1, "temperature", 0, "samples of a judge at temperature 0 give the same answer, so every verdict would count as certain at their cost",
    "give the scorer's judge a temperature above 0 (e.g. `temperature: 0.7` under `judge:`), or leave confidence_samples out", "samples-never-differ",
)
_TOP_P_AT_ZERO = NeedsAbove(
    1, "temperature", 0, "at temperature 0 the judge takes its likeliest token every time, which top_p never cuts: it changes no answer, and "
    "samples meant to differ by it give the same answer",
    "give the judge a temperature above 0 (e.g. `temperature: 0.7`) for top_p to act on, or remove top_p", "inert-sampling", idle_below=False,
)
_STRONG_JUDGE = DearerThan(
    "judge_model", "the cascade runs the wrong way round: the dearer model judges every item and the unsure ones go to the cheaper, "
    "whose verdict then decides; swap the two (the first judge is the scorer's `judge.model`)", "cascade-reversed",
)
_CASCADE_MARGIN = MarginBelow("sends every item to the strong judge", around_pass_line=True)
_JURY_MARGIN = MarginBelow("is wider than any two scores can be apart, so the judges never disagree", around_pass_line=False)
_JURY_MODELS = Distinct("the same model twice is one judge counted twice (at temperature 0 its answers are the same)", "repeated-judge", undated)
_MAJORITY = NeedsSibling(
    "majority", "threshold", "each judge's verdict is its score against the pass line",
    "add `threshold:` beside `aggregate:`, on the score's scale (e.g. the scorer's own pass line), or aggregate by `mean`",
)
_STATISTIC_UNITS = {
    **dict.fromkeys(("pass_rate", "error_rate", "not_scorable_rate", "sampled_rate", "human_agreement"), Unit.SHARE),
    **dict.fromkeys(("mean", "p50", "p95"), Unit.SCORE),
}
_PASS_RATE = NeedsSibling(
    "pass_rate", "threshold", "a pass rate is the share of scores on the good side of a pass line",
    "add `threshold:` beside `statistic:`, on the score's scale (e.g. the scorer's own pass line)",
)
_AGGREGATE_SAID = WordAgainstComment({
    "strictest": (r"\b(?:any|one|a single|single|either)\s+(?:one\s+)?(?:judge|juror|model)s?\b|\bstrict|\bharsh|\bveto|\bas soon as one\b|\bworst (?:judge|score|verdict)", "the worst judge's score decides"),
    "majority": (r"\bmajority\b|\bmost (?:of the )?(?:judges|votes|jurors)\b|\b(?:two|2) (?:of|out of) (?:the )?(?:three|3)\b|\bmore than half\b|\bvot(?:e|es|ing)\b", "most of the judges' pass or fail votes decide"),
    "mean": (r"\baverag|\bmean\b", "the judges' scores are averaged"),
    "median": (r"\bmedian\b|\bmiddle (?:judge|score)", "the middle judge's score decides"),
})
_STATISTIC_SAID = WordAgainstComment({
    "not_scorable_rate": (
        r"not scorable|unscor|no context|without context|missing context|\bno (?:retrieved |relevant )?(?:document|passage|guideline|source|chunk|result)s?\b"
        r"|\b(?:finds?|found|finding|returns?|returned|returning) (?:no|nothing)\b|nothing (?:was )?found|comes? back empty|empty retriev|cannot be scored",
        "the items that could not be scored (nothing to judge, a field missing) are counted",
    ),
    "error_rate": (r"\berrors?\b|\bfailed (?:call|request)s?|\bjudge (?:is |goes )?(?:down|failing|fails)|\btime ?outs?\b|\boutage|\bcrash|\brate limit", "the calls that failed (an error, a refused answer) are counted"),
}, whole_block=True)
_SOURCE_SAID = WordAgainstComment({
    "batch": (r"\bnightly\b|\bbatch\b|scorers eval\b|\beval(?:uation)? runs?\b|from[- ]run\b|\bdata ?sets?\b", "the outcomes of batch runs (`scorers eval`) are read"),
    "live": (r"\blive\b|\bproduction traffic\b|\bas they come\b|\breal[- ]time\b", "the outcomes of live scoring are read"),
    "any": (r"\blive\b[^.;]*\b(?:and|or|as well as)\b[^.;]*\b(?:nightly|batch|eval)|\b(?:nightly|batch|eval)\b[^.;]*\b(?:and|or|as well as)\b[^.;]*\blive\b|\bboth\b", "the outcomes of both are read"),
}, whole_block=True)
_CONVENTION_SAID = WordAgainstComment({
    "genai": (r"\bgen ai\b|\bgenai\b|\bgen_ai\.|opentelemetry instrumentation|\binvoke agent\b|\bexecute tool\b|semantic conventions?", "the spans carry the GenAI conventions' gen_ai.* attributes"),
    "openinference": (r"\bopeninference\b|\barize\b|\bphoenix\b|\bllm\.input messages\b", "the spans carry OpenInference's attributes"),
    "vercel": (r"\bvercel\b|\bai sdk\b|\bmastra\b|\bai\.generatetext\b|\bai\.streamtext\b", "the spans carry the Vercel AI SDK's ai.* attributes"),
}, whole_block=True)
_CONDITION = CanHold("statistic", _STATISTIC_UNITS)
_WHOLE_INPUT = WholeNotEach("the longest text sent to the judge, a field's pieces together (every context piece, every turn)")
_CONDITION_ON_SCALE = NotAFraction(unit_by="statistic", units=_STATISTIC_UNITS)
_ENTRY_FIELD = AmongNames("entry_fields", "the fields of each entry of the labelled answer")
_MIN_SAMPLES = AtMostSibling("window", "the monitor would never alert; lower min_samples, or widen the window")


def _sampling(prefix: str) -> tuple[SettingRule, ...]:
    """The sampling settings of a judge (the scorer's, a step's, the file's defaults)."""
    return (
        SettingRule(f"{prefix}.temperature", Unit.TEMPERATURE, (IdlesSamples(), SamplesWhereSameMeant())),
        SettingRule(f"{prefix}.max_tokens", Unit.TOKENS, (HoldsLeastAnswer(), HoldsUsualAnswer(), CommentInOwnUnit())),
        SettingRule(f"{prefix}.top_p", Unit.SHARE, (_TOP_P_AT_ZERO,)),
        SettingRule(f"{prefix}.seed", Unit.NUMBER),
        SettingRule(f"{prefix}.reasks", Unit.COUNT),
        SettingRule(f"{prefix}.reasoning_effort", Unit.WORD),
        SettingRule(f"{prefix}.system", Unit.TEMPLATE),
    )


def _judge(prefix: str) -> tuple[SettingRule, ...]:
    return (
        SettingRule(prefix, Unit.GROUP),
        *_sampling(prefix),
        SettingRule(f"{prefix}.model", Unit.MODEL),
        SettingRule(f"{prefix}.rpm", Unit.PER_MINUTE),
        SettingRule(f"{prefix}.tpm", Unit.PER_MINUTE),
        SettingRule(f"{prefix}.timeout", Unit.SECONDS, (NotMilliseconds(), CommentInOwnUnit())),
        SettingRule(f"{prefix}.retries", Unit.COUNT),
        SettingRule(f"{prefix}.max_input_chars", Unit.CHARACTERS, (CommentInOwnUnit(), _WHOLE_INPUT)),
        SettingRule(f"{prefix}.long_input", Unit.WORD),
        SettingRule(f"{prefix}.confidence_samples", Unit.COUNT, (_CONFIDENCE_SAMPLES_AT_ZERO,)),
    )


def _bounds(prefix: str) -> tuple[SettingRule, ...]:
    return (
        SettingRule(prefix, Unit.GROUP),
        SettingRule(f"{prefix}.*", Unit.GROUP),
        *(SettingRule(f"{prefix}.*.{name}", Unit.COUNT) for name in ("items", "min_items", "max_items", "max_length")),
        SettingRule(f"{prefix}.*.enum", Unit.EXPRESSION),
        SettingRule(f"{prefix}.*.minimum", Unit.NUMBER),
        SettingRule(f"{prefix}.*.maximum", Unit.NUMBER),
    )


_STEP = "scorers.*.steps.*"
_SAMPLED = ShareAgainstComment("trace")


def _trace_items(kind: str) -> tuple[SettingRule, ...]:
    """The settings of one kind of item made from traces (`traces.llm`, `traces.agent`)."""
    return (
        SettingRule(f"traces.{kind}", Unit.GROUP),
        SettingRule(f"traces.{kind}.scorers", Unit.GROUP),
        SettingRule(f"traces.{kind}.scorers.*", Unit.NAME, (TakesItsItem(kind),)),
        SettingRule(f"traces.{kind}.fields", Unit.GROUP),
        SettingRule(f"traces.{kind}.fields.*", Unit.EXPRESSION, (ReadsItsOwnField(),)),
    )

RULES: tuple[SettingRule, ...] = (
    # -- the catalog file
    SettingRule("prompts", Unit.FOLDER),
    SettingRule("schemas", Unit.FOLDER),
    SettingRule("defaults", Unit.GROUP),
    *_judge("defaults.judge"),
    SettingRule("defaults.options", Unit.JSON_SCHEMA),
    SettingRule("providers", Unit.GROUP),
    SettingRule("providers.*", Unit.GROUP),
    SettingRule("providers.*.adapter", Unit.WORD),
    SettingRule("providers.*.base_url", Unit.URL),
    SettingRule("providers.*.base_url_env", Unit.VARIABLE),
    SettingRule("providers.*.api_key_env", Unit.VARIABLE),
    SettingRule("providers.*.key_needed", Unit.FLAG),
    SettingRule("providers.*.mode", Unit.WORD),
    SettingRule("providers.*.extra_env", Unit.VARIABLE),
    SettingRule("providers.*.about", Unit.TEXT),
    SettingRule("scorers", Unit.GROUP),
    SettingRule("monitors", Unit.GROUP),
    SettingRule("queues", Unit.GROUP),
    SettingRule("traces", Unit.GROUP),  # its structure is checked at its lines by catalog/traces.py
    SettingRule("traces.convention", Unit.WORD, (_CONVENTION_SAID,)),
    *_trace_items("llm"),
    *_trace_items("agent"),
    SettingRule("traces.sampling", Unit.SHARE, (_SAMPLED,)),
    SettingRule("traces.sampling.*", Unit.SHARE, (_SAMPLED,)),
    SettingRule("traces.where", Unit.GROUP),
    SettingRule("traces.where.*", Unit.ANY, (KeptNotLeftOut(),)),
    SettingRule("traces.export", Unit.URL),
    # -- a scorer
    SettingRule("scorers.*", Unit.GROUP),
    SettingRule("scorers.*.id", Unit.NAME),
    SettingRule("scorers.*.name", Unit.TEXT),
    SettingRule("scorers.*.description", Unit.TEXT),
    SettingRule("scorers.*.direction", Unit.WORD),
    SettingRule("scorers.*.requires", Unit.WORD),
    SettingRule("scorers.*.options", Unit.JSON_SCHEMA),
    # An option's default: the value a scorer that extends another gives the option.
    SettingRule("scorers.*.options.*.default", Unit.ANY, (LeastCommentedAsWrong(), CommentAgainstDeclaredUnit(), LostShareGiven(), ShareCommented(), ZeroCommentedAsNoLimit(), MethodAgainstWords())),
    *_judge("scorers.*.judge"),
    SettingRule("scorers.*.judges", Unit.GROUP),
    SettingRule("scorers.*.judges.models", Unit.MODEL, (_JURY_MODELS, TooFewJudges())),
    SettingRule("scorers.*.judges.aggregate", Unit.WORD, (_MAJORITY, _AGGREGATE_SAID)),
    SettingRule("scorers.*.judges.threshold", Unit.SCORE, (Within(), NotAFraction(), CommentInOwnUnit(), CommentGivesAnotherLine(), AtOwnPassLine(votes=True))),
    SettingRule("scorers.*.judges.margin", Unit.SCORE, (_JURY_MARGIN, NotAFraction(distance=True))),
    SettingRule("scorers.*.cascade", Unit.GROUP),
    SettingRule("scorers.*.cascade.escalate_to", Unit.MODEL, (_STRONG_JUDGE, NotTheFirstJudge())),
    SettingRule("scorers.*.cascade.margin", Unit.SCORE, (_CASCADE_MARGIN, NotAFraction(distance=True))),
    SettingRule("scorers.*.cascade.samples", Unit.COUNT, (_SAMPLES_AT_ZERO,)),
    SettingRule("scorers.*.cascade.threshold", Unit.SCORE, (Within(), NotAFraction(), CommentInOwnUnit(), CommentGivesAnotherLine(), AtOwnPassLine())),
    SettingRule("scorers.*.cascade.min_confidence", Unit.SHARE, (ConfidenceCommentedAsDoubt(), NeedsProbabilities(), AboveAnEvenChance())),
    SettingRule("scorers.*.context_from_tool_results", Unit.FLAG, (TOOL_RESULTS_SCORED,)),
    SettingRule("scorers.*.threshold", Unit.SCORE, (Within(), NotAFraction(), CommentInOwnUnit(), CommentGivesAnotherLine())),
    SettingRule("scorers.*.empty_output", Unit.WORD, (EMPTY_SCORED,)),
    SettingRule("scorers.*.option_rules", Unit.GROUP),
    SettingRule("scorers.*.option_rules.*", Unit.GROUP),
    SettingRule("scorers.*.option_rules.*.check", Unit.EXPRESSION),
    SettingRule("scorers.*.option_rules.*.message", Unit.TEMPLATE),
    SettingRule("scorers.*.replaces", Unit.FLAG),
    SettingRule("scorers.*.pairwise", Unit.FLAG),
    SettingRule("scorers.*.abstract", Unit.FLAG),
    SettingRule("scorers.*.steps", Unit.GROUP),
    # -- its steps (every kind's keys)
    SettingRule(_STEP, Unit.GROUP),
    SettingRule(f"{_STEP}.id", Unit.NAME),
    SettingRule(f"{_STEP}.kind", Unit.WORD),
    SettingRule(f"{_STEP}.skip_if", Unit.EXPRESSION),
    SettingRule(f"{_STEP}.prompt", Unit.TEMPLATE),
    SettingRule(f"{_STEP}.schema", Unit.SCHEMA),
    SettingRule(f"{_STEP}.uses_context", Unit.FLAG),
    SettingRule(f"{_STEP}.judge", Unit.GROUP),
    *_sampling(f"{_STEP}.judge"),
    SettingRule(f"{_STEP}.rules", Unit.GROUP),
    SettingRule(f"{_STEP}.rules.*", Unit.GROUP),
    SettingRule(f"{_STEP}.rules.*.check", Unit.EXPRESSION),
    SettingRule(f"{_STEP}.rules.*.message", Unit.TEMPLATE),
    *_bounds(f"{_STEP}.bounds"),
    SettingRule(f"{_STEP}.on_skip", Unit.ANY),
    SettingRule(f"{_STEP}.on_skip.not_scorable", Unit.TEXT),
    SettingRule(f"{_STEP}.examples", Unit.GROUP),
    SettingRule(f"{_STEP}.examples.*", Unit.GROUP),
    *(SettingRule(f"{_STEP}.examples.*.{name}", Unit.TEXT) for name in ("input", "output", "context", "answer")),
    SettingRule(f"{_STEP}.values", Unit.GROUP),
    SettingRule(f"{_STEP}.values.*", Unit.EXPRESSION),
    SettingRule(f"{_STEP}.values.*.items", Unit.EXPRESSION),
    SettingRule(f"{_STEP}.values.*.where", Unit.EXPRESSION),
    SettingRule(f"{_STEP}.values.*.value", Unit.EXPRESSION),
    SettingRule(f"{_STEP}.values.*.reduce", Unit.WORD),
    SettingRule(f"{_STEP}.values.*.empty", Unit.NUMBER),
    SettingRule(f"{_STEP}.score", Unit.EXPRESSION),
    SettingRule(f"{_STEP}.round", Unit.COUNT),
    SettingRule(f"{_STEP}.expected_value", Unit.FLAG),
    # -- a monitor
    SettingRule("monitors.*", Unit.GROUP),
    SettingRule("monitors.*.name", Unit.NAME),
    SettingRule("monitors.*.scorer", Unit.NAME),
    SettingRule("monitors.*.statistic", Unit.WORD, (_PASS_RATE, BestTailWatched(), FailuresOfAJudgeFreeScorer(), _STATISTIC_SAID)),
    SettingRule("monitors.*.above", Unit.NUMBER, (_CONDITION, _CONDITION_ON_SCALE, BeyondTheSampledShare())),
    SettingRule("monitors.*.below", Unit.NUMBER, (_CONDITION, _CONDITION_ON_SCALE, BeyondTheSampledShare())),
    SettingRule("monitors.*.threshold", Unit.SCORE, (Within(), NotAFraction(), AgainstOwnPassLine())),
    SettingRule("monitors.*.window", Unit.COUNT, (CountNotTimeSpan(), SpanAgainstComment())),
    SettingRule("monitors.*.min_samples", Unit.COUNT, (_MIN_SAMPLES, CountAgainstComment(), WindowTooSmallForMinimum())),
    SettingRule("monitors.*.run", Unit.NAME),
    SettingRule("monitors.*.source", Unit.WORD, (_SOURCE_SAID,)),
    SettingRule("monitors.*.worst", Unit.COUNT),
    SettingRule("monitors.*.alert", Unit.GROUP),
    SettingRule("monitors.*.alert.*", Unit.GROUP),
    SettingRule("monitors.*.alert.*.webhook", Unit.URL),
    SettingRule("monitors.*.alert.*.webhook_env", Unit.VARIABLE),
    SettingRule("monitors.*.alert.*.format", Unit.WORD),
    SettingRule("monitors.*.alert.*.timeout", Unit.SECONDS, (NotMilliseconds(), CommentInOwnUnit())),
    SettingRule("monitors.*.alert.*.retries", Unit.COUNT),
    SettingRule("monitors.*.alert.*.backoff", Unit.SECONDS, (NotMilliseconds(),)),
    SettingRule("monitors.*.alert.*.log", Unit.WORD),
    SettingRule("monitors.*.alert.*.callback", Unit.ANY),
    # -- a review queue
    SettingRule("queues.*", Unit.GROUP),
    SettingRule("queues.*.name", Unit.NAME),
    SettingRule("queues.*.scorer", Unit.NAME),
    SettingRule("queues.*.instructions", Unit.TEXT),
    SettingRule("queues.*.label", Unit.GROUP),
    SettingRule("queues.*.label.kind", Unit.WORD),
    SettingRule("queues.*.label.categories", Unit.NAME),
    SettingRule("queues.*.label.flag", Unit.NAME, (AmongSibling("categories", "the categories"),)),
    SettingRule("queues.*.note", Unit.FLAG),
    SettingRule("queues.*.steps", Unit.GROUP),
    SettingRule("queues.*.steps.answers", Unit.NAME),
    SettingRule("queues.*.steps.text", Unit.NAME, (_ENTRY_FIELD,)),
    SettingRule("queues.*.steps.judged", Unit.NAME, (_ENTRY_FIELD,)),
    SettingRule("queues.*.steps.choices", Unit.NAME, (AmongValues("judged_values", "the field it labels"),)),
    SettingRule("queues.*.highlight", Unit.NAME),
    SettingRule("queues.*.show", Unit.WORD),
    SettingRule("queues.*.labels_per_item", Unit.COUNT, (CountAgainstComment(),)),
    SettingRule("queues.*.blind", Unit.FLAG),
    SettingRule("queues.*.lease", Unit.DURATION, (SpanAgainstComment(),)),
)

BY_PATH: dict[str, SettingRule] = {rule.path: rule for rule in RULES}


def rules_under(prefix: str) -> list[tuple[tuple[str, ...], SettingRule]]:
    """The rows under `prefix` (`scorers.*`) that hold a setting to something, each with
    its path below the prefix as parts."""
    start = f"{prefix}."
    return [(tuple(rule.path[len(start) :].split(".")), rule) for rule in RULES if rule.path.startswith(start) and rule.relations]


