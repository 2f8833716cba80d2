"""The units a catalog's settings are in and the relations a setting is held to: the
vocabulary of the table in setting_rules.py. A new kind of relation is a class here, the
only code a row of that table may need.
"""

# Annotations are evaluated here, not kept as text: NamedTuple would compile each text
# into a ForwardRef when the module loads, which every `scorers check` pays for.
from collections.abc import Callable, Mapping
from enum import Enum
from typing import Any, NamedTuple, Protocol

from .suggest import did_you_mean


class Unit(Enum):
    """What a setting's number or text stands for, as a message says it."""

    SCORE = "on the score's scale"
    COUNT = "a count"
    TOKENS = "a number of tokens"
    CHARACTERS = "a number of characters"
    SHARE = "a share, from 0 to 1"
    TEMPERATURE = "a sampling temperature, from 0 (always the likeliest answer) to 2"
    SECONDS = "seconds"
    PER_MINUTE = "a rate per minute"
    DURATION = "a duration: a number and a unit (90s, 30m, 6h, 7d, 2w)"
    TEXT = "text"
    NAME = "a name"
    MODEL = "a model, 'provider/model'"
    WORD = "one of the words the format lists"
    FLAG = "true or false"
    EXPRESSION = "an expression"
    TEMPLATE = "a template file under the prompts folder"
    SCHEMA = "an answer schema file under the schemas folder"
    JSON_SCHEMA = "a JSON Schema"
    FOLDER = "a folder, relative to the catalog file"
    URL = "a URL"
    VARIABLE = "the name of an environment variable"
    NUMBER = "a number"
    GROUP = "a group of settings"
    ANY = "any value (the answer's or option's own)"


class Found(NamedTuple):
    """What a relation found wrong: the message's text after the setting's name, and the
    code of a warning (None: a problem, the setting can never do what it says)."""

    message: str
    code: str | None = None
    #: Where inside the setting it is (an item of a list), when not the whole setting.
    at: tuple[Any, ...] = ()


class Setting(Protocol):
    """One written setting, as a relation sees it (setting_checks.py gives it)."""

    @property
    def label(self) -> str: ...

    @property
    def value(self) -> Any: ...

    @property
    def unit(self) -> Unit: ...

    def sibling(self, name: str) -> Any:
        """The value of a setting beside this one (None when not written)."""

    def comment(self) -> str:
        """The comment written after the setting on its line ('' when none)."""

    def fact(self, name: str) -> Any:
        """What the checker knows of the setting's owner (a scorer's: setting_checks.scorer_facts; a monitor's and a queue's: their modules)."""


class Relation(Protocol):
    def check(self, setting: Setting) -> Found | None: ...


def number_value(value: Any) -> float | None:
    """A setting's value as a number (None for text, a flag or nothing)."""
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


class Within(NamedTuple):
    """The value lies in the range its unit has for its owner: a share in 0..1, a score in
    the range of the scores."""

    def check(self, setting: Setting) -> Found | None:
        value = number_value(setting.value)
        if value is None:
            return None
        if setting.unit is Unit.SHARE and not 0 <= value <= 1:
            percent = f"; a share is written as a fraction: {value:g}% is {value / 100:g}" if 1 < value <= 100 else ""
            return Found(f"{value:g} is outside 0 to 1 ({Unit.SHARE.value}): write a value from 0 to 1{percent}")
        span = setting.fact("score_range") if setting.unit is Unit.SCORE else None
        if span is not None and not span[0] <= value <= span[1]:
            return Found(f"{value:g} is outside the range of {setting.fact('scores')}, {span[0]:g} to {span[1]:g}{setting.fact('scale_said')}")
        return None


class NotAFraction(NamedTuple):
    """A line on a wide scale (0 to 100, say) written as a fraction of it: 0.8 where 80 was
    meant sits at the very bottom of the scale, so nearly every score lands on one side."""

    #: A distance between scores (a margin), not a place on the scale: a fraction of the scale's
    #: width, whatever its bottom.
    distance: bool = False
    #: The sibling that says whether the setting is on the score's scale at all (a monitor's
    #: `statistic`: a mean is, a pass rate is not), by the units of its values; None: it always is.
    unit_by: str | None = None
    units: Mapping[str, Unit] = {}

    def check(self, setting: Setting) -> Found | None:
        if self.unit_by is not None and self.units.get(str(setting.sibling(self.unit_by))) is not Unit.SCORE:
            return None
        value, span = number_value(setting.value), setting.fact("score_range")
        if value is None or span is None or value == int(value):
            return None
        low, high = span
        if self.distance:
            if high - low < 10 or not 0 < value < 1:
                return None
            return Found(
                f"{value:g} is a distance {Unit.SCORE.value}, {low:g} to {high:g}{setting.fact('scale_said')}: less than one point of "
                f"the scale, it reads as a fraction of it; if {value:g} of the scale was meant, write {value * (high - low):g}",
                "fraction-on-scale",
            )
        if high - low < 10 or not low < value < low + 1:
            return None
        meant = low + value * (high - low)
        return Found(
            f"{value:g} is {Unit.SCORE.value}, {low:g} to {high:g}{setting.fact('scale_said')}: so near its bottom that it reads as "
            f"a fraction of the scale; if {value:g} of the way up was meant, write {meant:g}",
            "fraction-on-scale",
        )


class NotMilliseconds(NamedTuple):
    """A number of seconds long enough to be milliseconds written where seconds are meant:
    `timeout: 120000` waits a day and a half for a judge that is stuck."""

    #: Past this (an hour), a setting in seconds most likely counts milliseconds.
    most: float = 3600

    def check(self, setting: Setting) -> Found | None:
        value = number_value(setting.value)
        if value is None or value <= self.most:
            return None
        return Found(
            f"{value:g} is in {Unit.SECONDS.value}, {value / 3600:.3g} hours: were milliseconds meant? write {value / 1000:g}",
            "seconds-as-milliseconds",
        )


class MarginBelow(NamedTuple):
    """A margin on the score's scale that leaves some scores out: past `share` of the
    room around the pass line, every score is inside it (a cascade sends every item on) or
    no spread exceeds it (a jury never disagrees)."""

    what: str
    around_pass_line: bool

    def check(self, setting: Setting) -> Found | None:
        value, span = number_value(setting.value), setting.fact("score_range")
        if value is None or span is None:
            return None
        low, high = span
        if self.around_pass_line:
            line = number_value(setting.sibling("threshold"))
            line = line if line is not None else setting.fact("threshold")
            limit = max(line - low, high - line) if line is not None and low <= line <= high else (high - low) / 2
        else:
            limit = high - low
        if value < limit:
            return None
        return Found(
            f"{value:g} is {Unit.SCORE.value} ({setting.fact('scores')} run {low:g} to {high:g}): a margin of {limit:g} or more {self.what}; "
            f"write a margin below {limit:g}, e.g. {round((high - low) / 10, 6):g}"
        )


class NeedsAbove(NamedTuple):
    """A setting that acts only when `other` (a fact of its owner) is above `above`: samples
    above 1 at temperature 0 never differ, and `top_p: 0.9` at temperature 0 cuts the tokens a
    greedy judge never picks. At `idle` the setting does nothing anyway, and below it too when
    `idle_below` (a count of samples; not a share such as top_p, which acts below 1)."""

    idle: float
    other: str
    above: float
    why: str
    instead: str
    code: str
    idle_below: bool = True

    def check(self, setting: Setting) -> Found | None:
        value, other = number_value(setting.value), setting.fact(self.other)
        if value is None or value == self.idle or (self.idle_below and value < self.idle) or other is None or other > self.above:
            return None
        return Found(f"{value:g} ({setting.unit.value}): {self.why}; {self.instead}", self.code)


#: The highest temperature at which samples of a judge all but never disagree: a verdict it
#: favours 60 to 40 comes out the same in more than 98% of samples (the odds to the power 1/T).
_NEAR_GREEDY = 0.1


class IdlesSamples(NamedTuple):
    """A temperature of 0, or so near it that samples all but never differ, where the scorer
    asks for several samples of its judge (a cascade's `samples: 3`, `confidence_samples`):
    said at the samples too when it is 0, and here, since raising the temperature is as likely
    the fix as taking one sample."""

    def check(self, setting: Setting) -> Found | None:
        value, samples = number_value(setting.value), setting.fact("samples")
        if value is None or not 0 <= value <= _NEAR_GREEDY or samples is None or samples[0] <= 1 or setting.fact("inherited"):
            return None
        count, where = samples
        if value == 0:
            said = "gives the same answer every time"
        else:
            odds = 1.5 ** (1 / value)
            said = f"all but always gives the same answer (a verdict the judge favours 60 to 40 comes out the same in {odds / (odds + 1):.2%} of samples)"
        return Found(
            f"{value:g} ({setting.unit.value}) {said}, but the scorer asks for {count:g} samples ({where}): they {'never' if value == 0 else 'hardly ever'} "
            f"disagree and only cost more; give the judge a temperature {'above 0' if value == 0 else 'of 0.5 or more'} (e.g. 0.7), or take 1 sample",
            "samples-never-differ",
        )


class DearerThan(NamedTuple):
    """A model meant to be the dearer of two (a cascade's strong judge) that costs less than
    `other` (a fact of the owner: the model it is compared with), by the price table."""

    other: str
    why: str
    code: str

    def check(self, setting: Setting) -> Found | None:
        model, other = setting.value, setting.fact(self.other)
        if not isinstance(model, str) or not isinstance(other, str) or model == other:
            return None
        from ..errors import ConfigError
        from ..judge.prices import price_table  # read only for a catalog with a cascade

        try:
            table = price_table()
        except ConfigError:
            return None  # said where prices are read
        own, theirs = table.price(model), table.price(other)
        if own is None or theirs is None or own.input + own.output >= theirs.input + theirs.output:
            return None
        return Found(
            f"{model} costs ${own.input:g} in, ${own.output:g} out per million tokens, less than {other} (${theirs.input:g}, ${theirs.output:g}): {self.why}",
            self.code,
        )


class Distinct(NamedTuple):
    """The items of a list differ, read through `same` (what each one is: the model a dated
    snapshot names)."""

    why: str
    code: str
    same: Callable[[Any], Any] | None = None

    def check(self, setting: Setting) -> Found | None:
        items = setting.value if isinstance(setting.value, list) else []
        read = [self.same(item) if self.same is not None and isinstance(item, str) else item for item in items]
        again = next((index for index, item in enumerate(read) if item in read[:index]), None)
        if again is None:
            return None
        first = items[read.index(read[again])]
        if first == items[again]:
            return Found(f"{items[again]!r} is named more than once: {self.why}", self.code, (again,))
        return Found(f"{items[again]!r} is {first!r} again, under another name of the same model: {self.why}", self.code, (again,))


class NeedsSibling(NamedTuple):
    """When the setting has the value `equals`, the sibling `other` must be written."""

    equals: str
    other: str
    why: str
    instead: str

    def check(self, setting: Setting) -> Found | None:
        if setting.value != self.equals or setting.sibling(self.other) is not None:
            return None
        return Found(f"{self.equals} needs `{self.other}:` beside it ({self.why}): {self.instead}")


class AtMostSibling(NamedTuple):
    """A count no larger than the sibling `other` (when that is a count too)."""

    other: str
    why: str

    def check(self, setting: Setting) -> Found | None:
        value, other = number_value(setting.value), setting.sibling(self.other)
        if value is None or not isinstance(other, int) or isinstance(other, bool) or value <= other:
            return None
        return Found(f"{value:g} outcomes are needed before it alerts, but its {self.other} holds at most {other}: {self.why}")


class AmongValues(NamedTuple):
    """Items that are values of the field they label (a fact naming the values, when known):
    one written otherwise than a value only by its case, or none of them a value at all, is
    compared with the field's values as they are and never equals one."""

    values: str
    what: str

    def check(self, setting: Setting) -> Found | None:
        allowed = [str(value) for value in setting.fact(self.values) or []]
        items = [str(item) for item in (setting.value if isinstance(setting.value, list) else [setting.value])]
        if not allowed:
            return None
        folded = {value.casefold() for value in allowed}
        wrong = next((index for index, item in enumerate(items) if item not in allowed and item.casefold() in folded), None)
        if wrong is None and not any(item in allowed for item in items):
            wrong = 0 if items else None
        if wrong is None:
            return None
        return Found(
            f"{items[wrong]!r} is not a value of {self.what} ({', '.join(map(repr, allowed))}): answers are compared as written, "
            f"so it never agrees with the judge's; write the field's own values{did_you_mean(items[wrong], allowed)}",
            at=(wrong,) if isinstance(setting.value, list) else (),
        )


class AmongNames(NamedTuple):
    """A name that is one of the names a fact gives (the fields of what it points into), when known."""

    names: str
    what: str

    def check(self, setting: Setting) -> Found | None:
        known = setting.fact(self.names)
        if not known or setting.value in known:
            return None
        return Found(f"{setting.value!r} is not one of {self.what} ({', '.join(known)}){did_you_mean(str(setting.value), known)}: name one of them")


class AmongSibling(NamedTuple):
    """Items that are among the items of the sibling `other` (a label's flagged categories
    among its categories)."""

    other: str
    what: str

    def check(self, setting: Setting) -> Found | None:
        known, items = setting.sibling(self.other), setting.value
        if not isinstance(known, list) or not known or not isinstance(items, list):
            return None
        wrong = next((index for index, item in enumerate(items) if item not in known), None)
        if wrong is None:
            return None
        named = ", ".join(map(str, known))
        return Found(f"{items[wrong]!r} is not one of {self.what} ({named}){did_you_mean(str(items[wrong]), map(str, known))}: name one of them", at=(wrong,))


class HoldsLeastAnswer(NamedTuple):
    """A token limit that holds the shortest answer the step's schema accepts (fact
    `least_answer`: its tokens, characters, what makes it long, and the step)."""

    def check(self, setting: Setting) -> Found | None:
        value, least = number_value(setting.value), setting.fact("least_answer")
        if value is None or least is None or value >= least[0]:
            return None
        tokens, characters, long, step = least
        why = f"; {', '.join(long)}" if long else ""
        return Found(
            f"{value:g} ({setting.unit.value}) is less than the shortest answer the schema of step {step!r} accepts, about {tokens} tokens "
            f"({characters} characters of JSON{why}): every answer would be cut off; raise max_tokens to {tokens} or more",
            "max-tokens",
        )


class HoldsUsualAnswer(NamedTuple):
    """A token limit that holds the longest answer the step's bounds allow for the sample
    item, an output of two sentences (fact `sample_answer`: its tokens, the bounds and the
    step). A judge seldom fills every text to its length limit, but a usual output is longer
    than two sentences, and its answer longer with it: the one makes up for the other."""

    def check(self, setting: Setting) -> Found | None:
        value = number_value(setting.value)
        sample = setting.fact("sample_answer") if value is not None else None
        if value is None or sample is None or value >= sample[0]:
            return None
        least = setting.fact("least_answer")
        if least is not None and value < least[0]:
            return None  # HoldsLeastAnswer says so: no answer fits at all
        tokens, bounds, step = sample
        return Found(
            f"{value:g} ({setting.unit.value}) is less than the answer step {step!r} may give for an output of only two sentences, "
            f"about {tokens} tokens ({'; '.join(bounds)}): a judge that writes its texts out is cut off, and longer outputs need more; "
            f"raise max_tokens to {tokens} or more, or lower the bounds",
            "max-tokens",
        )


class BestTailWatched(NamedTuple):
    """A high percentile (`p95`) watched falling `below:` a line on a higher-is-better score:
    95% of the scores lie under it, so it is the best tail, and it falls only when nearly every
    reply is bad; a growing tail of bad replies never moves it. (On a lower-is-better score
    a high p95 is the bad tail, as meant.)"""

    def check(self, setting: Setting) -> Found | None:
        if setting.value != "p95" or setting.sibling("below") is None or setting.fact("direction") != "higher_is_better":
            return None
        return Found(
            "p95 of a higher-is-better score is its best tail (95% of the scores lie under it), so `below:` alerts only when all but the best 5% "
            "of the replies are under the line, and a growing share of bad replies never alerts; watch the bad replies with `pass_rate` "
            "`below:` a share (beside `threshold:`), or with `mean`",
            "best-tail-watched",
        )


class FailuresOfAJudgeFreeScorer(NamedTuple):
    """`error_rate` (or `not_scorable_rate`) watched on a scorer that asks no judge: it counts
    the outcomes the scorer could not score, which for a computed score are next to none,
    whatever the replies are; what the scorer finds (a failing tool) is its score."""

    def check(self, setting: Setting) -> Found | None:
        if setting.value not in ("error_rate", "not_scorable_rate") or setting.fact("asks_judge") is not False:
            return None
        return Found(
            f"{setting.value} is the share of outcomes {setting.fact('scorer_id')} could not score, and it asks no judge, so it stays near 0 "
            "whatever the replies are: what it finds is in its score; watch `mean` (or `pass_rate` beside `threshold:`)",
            "rate-of-a-judge-free-scorer",
        )


class CanHold(NamedTuple):
    """A condition (`above:` or `below:`, by the setting's name) that some value of what it
    watches meets: the sibling `unit_by` decides the unit (a share runs 0 to 1, a score the
    range of the scores)."""

    unit_by: str
    units: Mapping[str, Unit]

    def check(self, setting: Setting) -> Found | None:
        value, watched = number_value(setting.value), str(setting.sibling(self.unit_by))
        unit = self.units.get(watched)
        span = (0.0, 1.0) if unit is Unit.SHARE else setting.fact("score_range") if unit is Unit.SCORE else None
        if value is None or span is None:
            return None
        above = setting.label.endswith(".above")
        if (value < span[1]) if above else (value > span[0]):
            return None
        condition = "above" if above else "below"
        if unit is Unit.SHARE:
            percent = f"; a rate is a share: {value:g}% is {value / 100:g}" if 1 < value <= 100 else ""
            return Found(f"{watched} is never {condition} {value:g} (it runs 0 to 1): the monitor would never alert{percent}")
        return Found(
            f"the {watched} of {setting.fact('scores')} is never {condition} {value:g} (its scores run {span[0]:g} to {span[1]:g}): the monitor would never alert"
        )


class AgainstOwnPassLine(NamedTuple):
    """A pass line of a monitor (or a gate over a scorer) on the other side of the middle of the
    scores from the scorer's own pass line: `threshold: 0.8` copied from a higher-is-better
    scorer onto toxicity, whose own line is 0.2, counts answers up to 0.8 toxic as passing."""

    def check(self, setting: Setting) -> Found | None:
        value, own, span = number_value(setting.value), setting.fact("own_pass_line"), setting.fact("score_range")
        if value is None or own is None or span is None or span[1] <= span[0]:
            return None
        low, high = span
        middle, room = (low + high) / 2, (high - low) / 10
        if abs(value - middle) <= room or abs(own - middle) <= room or (value > middle) == (own > middle):
            return None
        better = "lower" if setting.fact("direction") == "lower_is_better" else "higher"
        return Found(
            f"{value:g} is on the other side of the middle of {setting.fact('scores')} from the scorer's own pass line, {own:g} ({better} is better): the monitor counts as passing what the scorer flags, and the other way round; "
            f"write a line on the scorer's side, e.g. {own:g}",
            "pass-line-against-scorer",
        )

