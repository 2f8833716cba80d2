"""Relations read from a setting's comment (the one on its line and those just above it): a
number whose comment counts another unit, a window of outcomes commented as a time span, a pass
line whose comment counts judges or bounds what is wrong, a limit on a whole field commented
per piece. Each is a row's relation in setting_rules.py, as those of setting_relations.py are.
"""

# Annotations are evaluated here, not kept as text, as in setting_relations.py: NamedTuple
# would compile each text into a ForwardRef when the module loads.
import re
from collections.abc import Mapping
from typing import NamedTuple

from .setting_relations import Found, Setting, Unit, number_value


#: The words that name a unit in a comment, and how much of a setting's own unit one of each
#: other unit is (about four characters make a token, six a word with its space).
_UNIT_WORDS: dict[Unit, tuple[frozenset[str], dict[str, tuple[frozenset[str], float]]]] = {
    Unit.CHARACTERS: (frozenset("char chars character characters".split()), {
        # A model's window (its context) is counted in tokens.
        "tokens": (frozenset({"token", "tokens", "window", "ctx"}), 4), "words": (frozenset({"word", "words"}), 6)}),
    Unit.TOKENS: (frozenset({"token", "tokens"}), {
        "characters": (frozenset("char chars character characters".split()), 0.25), "words": (frozenset({"word", "words"}), 4 / 3)}),
    Unit.SECONDS: (frozenset("s sec secs second seconds".split()), {
        "milliseconds": (frozenset({"ms", "millisecond", "milliseconds"}), 0.001), "minutes": (frozenset("min mins minute minutes".split()), 60)}),
}


#: Words of a comment that name a jury's judges or their votes, words that count how many of
#: them, and words that speak of one judge's score (a comment naming those may well mean it).
_VOTE_WORDS = frozenset("judge judges juror jurors model models vote votes voting voters".split())
_HOW_MANY = frozenset("majority most all agree agrees agreement consensus unanimous unanimously percent of".split())
_SCORE_WORDS = frozenset("score scores scored rating ratings point points claim claims verdicts each per line cutoff bar".split())


class CommentInOwnUnit(NamedTuple):
    """A number whose own comment counts another unit: `max_input_chars: 128000  # the model
    reads 128k tokens` cuts the input at a quarter of what the comment meant; a pass line whose
    comment counts judges (`threshold: 0.67  # two of three judges agree`) is no share of votes."""

    def check(self, setting: Setting) -> Found | None:
        value, said = number_value(setting.value), setting.comment()
        if setting.unit is Unit.SCORE:
            return _votes_for_a_pass_line(setting, value, said) or _tolerance_for_a_pass_line(setting, value, said)
        own, others = _UNIT_WORDS[setting.unit]
        words = set(re.findall(r"[a-z]+", said.lower()))
        named = [(other, size) for other, (names, size) in others.items() if words & names]
        if value is None or not value or words & own or len(named) != 1:
            return None
        other, size = named[0]
        numbers = _figures(said)
        # The number is the comment's figure, or a little under it (`100000  # the model reads
        # 128k tokens; keep some room`), and no figure converts to it (`120  # 2 minutes`).
        taken = [number for number in numbers if 0.5 * number <= value <= 1.05 * number and not 0.6 * number * size <= value <= 1.5 * number * size]
        converts = any(0.6 * number * size <= value <= 1.5 * number * size for number in numbers)
        if numbers and (converts or not taken):
            return None  # the comment converts, or counts something else
        figure = taken[0] if taken else value
        unit = setting.unit.value.removeprefix("a number of ")
        return Found(
            f"{value:g} counts {unit}, but its comment counts {other} ({said!r}): {figure:g} {other} are about "
            f"{round(figure * size, 3):g} {unit}; write the number in {unit}",
            "unit-against-comment",
        )


#: Words of a comment that speak of time, by the letter of a time span that writes them.
_TIME_WORDS: Mapping[str, str] = {
    **dict.fromkeys("sec secs second seconds".split(), "s"), **dict.fromkeys("min mins minute minutes".split(), "m"),
    **dict.fromkeys("h hr hrs hour hours hourly".split(), "h"), **dict.fromkeys("day days daily".split(), "d"),
    **dict.fromkeys("week weeks weekly".split(), "w"),
}
#: Words that say the comment counts outcomes after all (`50  # the last 50 scores, about an hour`).
_OUTCOME_WORDS = frozenset("outcome outcomes result results score scores scored item items reply replies answer answers run runs call calls sample samples labelled".split())


class CountNotTimeSpan(NamedTuple):
    """A window of the last N outcomes whose comment speaks of time: `window: 60  # an hour`
    averages the last 60 outcomes however long they took (a minute at peak, a day at night),
    where a time span (`window: 1h`) was meant."""

    def check(self, setting: Setting) -> Found | None:
        value, said = number_value(setting.value), setting.comment()
        words = re.findall(r"[a-z]+|\d+(?:\.\d+)?", said.lower())
        times = [word for word in words if word in _TIME_WORDS]
        # "a day of replies" measures the replies by time; "the last 50 replies" counts them.
        counted = {word for index, word in enumerate(words) if word in _OUTCOME_WORDS and not (index >= 2 and words[index - 1] == "of" and words[index - 2] in _TIME_WORDS)}
        if value is None or not times or counted:
            return None
        before = words[words.index(times[0]) - 1] if words.index(times[0]) else ""
        count = before if re.fullmatch(r"\d+(?:\.\d+)?", before) else "1"
        return Found(
            f"{value:g} is the last {value:g} outcomes, however long they took, but its comment speaks of time ({said!r}): a number "
            f"counts outcomes, so the span it covers follows the traffic; write a time span: `{setting.label.rsplit('.', 1)[-1]}: {count}{_TIME_WORDS[times[0]]}`",
            "unit-against-comment",
        )


#: Numbers a comment may spell out ("two minutes", "ten minutes").
_NUMBER_WORDS = {
    word: float(index) for index, word in enumerate("zero one two three four five six seven eight nine ten eleven twelve".split())
} | {"fifteen": 15.0, "twenty": 20.0, "thirty": 30.0, "forty": 40.0, "fifty": 50.0, "sixty": 60.0, "ninety": 90.0, "hundred": 100.0}


def _figures(said: str) -> list[float]:
    """The numbers a comment gives, in figures (`128k` is 128000) or spelled out."""
    written = [float(number) * (1000 if thousands else 1) for number, thousands in re.findall(r"(\d+(?:\.\d+)?)\s*([kK])?\b", said)]
    words = re.findall(r"[a-z]+", said.lower())
    # "one word each" counts a piece, not the whole the setting bounds.
    return written + [_NUMBER_WORDS[word] for index, word in enumerate(words) if word in _NUMBER_WORDS and not set(words[index + 1:index + 3]) & _EACH_WORDS]


def _votes_for_a_pass_line(setting: Setting, value: float | None, said: str) -> Found | None:
    """A pass line whose comment counts the judges of a jury or their votes, and not scores."""
    words = set(re.findall(r"[a-z]+", said.lower()))
    if value is None or not words & _VOTE_WORDS or not (words & _HOW_MANY or "%" in said) or words & _SCORE_WORDS:
        return None
    span = setting.fact("score_range")
    runs = f" ({span[0]:g} to {span[1]:g})" if span is not None else ""
    return Found(
        f"{value:g} is a pass line {Unit.SCORE.value}{runs}, which each judge's score is held to, but its comment counts judges or votes "
        f"({said!r}): it is no share of the judges (a jury's `aggregate: majority` counts their votes, each a score against this line); "
        f"write the score an answer must reach, e.g. the scorer's own pass line",
        "unit-against-comment",
    )


#: Words of a comment that bound how much is wrong rather than how good a score must be.
_AT_MOST = re.compile(r"\b(?:up\s+to|at\s+most|no\s+more\s+than|max(?:imum)?|tolerat\w*|allow\w*|fails?\s+(?:when|if)\s+more\s+than)\b", re.IGNORECASE)
_WRONG_WORDS = frozenset(
    "difference differences differ distance error errors mismatch mismatches wrong off unsupported hallucinated made-up "
    "inappropriate incorrect failed bad".split()
)


def _bounds_what_is_wrong(said: str) -> bool:
    """Whether a comment bounds how much is wrong (`tolerate up to 15% difference`)."""
    return bool(set(re.findall(r"[a-z-]+", said.lower())) & _WRONG_WORDS) and _AT_MOST.search(said) is not None


#: Words of a comment that ask for at least so much that is right.
_AT_LEAST = re.compile(r"\b(?:at\s+least|no\s+less\s+than|min(?:imum)?|or\s+more)\b", re.IGNORECASE)
_RIGHT_WORDS = frozenset("succeed succeeds succeeded success successful correct right pass passes passing ok work works clean accurate supported".split())


def _shares_said(said: str, low: float, high: float) -> list[float]:
    """The numbers a comment gives, a percentage read as that share of the range `low` to `high`."""
    return [figure / 100 * (high - low) + low if "%" in said and figure > 1 else figure for figure in _figures(said)]


def _complement_given(said: str, value: float, low: float, high: float) -> bool:
    """Whether a comment's figure is the complement of the number on the range (`0.2  # at least
    80% clean`): the number was written from it, as meant."""
    shares = _shares_said(said, low, high)
    return any(abs(share - (high - (value - low))) < 1e-6 for share in shares) and not any(abs(share - value) < 1e-6 for share in shares)


def _tolerance_for_a_pass_line(setting: Setting, value: float | None, said: str) -> Found | None:
    """A pass line of a higher-is-better score whose comment bounds what is wrong (`0.15  #
    tolerate up to 15% difference`): the line is the least score that passes, so it lets
    nearly everything through where its complement was meant. And the mirror: a pass line of
    a lower-is-better score whose comment asks for so much that is right (`0.95  # at least 95%
    of tool calls must succeed`): the line is the most that passes, so a run failing 95% passes."""
    span = setting.fact("score_range")
    if value is None or span is None:
        return None
    low, high = span
    if _complement_given(said, value, low, high):
        return None
    if setting.fact("direction") == "lower_is_better" and _AT_LEAST.search(said) and set(re.findall(r"[a-z]+", said.lower())) & _RIGHT_WORDS:
        return Found(
            f"{value:g} is the most score that passes {Unit.SCORE.value} ({low:g} to {high:g}, lower is better), but its comment asks for "
            f"so much that is right ({said!r}): as written, an answer {value:g} of the way to the worst passes; if that much right is what "
            f"must be reached, write {round(high - (value - low), 6):g}",
            "unit-against-comment",
        )
    if setting.fact("direction") != "higher_is_better" or not _bounds_what_is_wrong(said):
        return None
    return Found(
        f"{value:g} is the least score that passes {Unit.SCORE.value} ({low:g} to {high:g}, higher is better), but its comment bounds what "
        f"is wrong ({said!r}): as written, an answer {value:g} of the way up passes; if that much wrong is what may pass, write "
        f"{round(high - (value - low), 6):g}",
        "unit-against-comment",
    )


#: Words of a comment that count one piece of a field (a retrieved chunk, a turn), and words
#: that say the number holds for each of them.
_PIECE_WORDS = frozenset("chunk chunks piece pieces passage passages document documents doc docs page pages turn turns message messages".split())
_EACH_WORDS = frozenset("each per every apiece".split())


class WholeNotEach(NamedTuple):
    """A limit on a whole field (all its pieces together) whose comment counts one piece:
    `max_input_chars: 4000  # our chunks are at most 4000 characters each` cuts five chunks to
    about the first one."""

    whole: str

    def check(self, setting: Setting) -> Found | None:
        value, said = number_value(setting.value), setting.comment()
        words = set(re.findall(r"[a-z]+", said.lower()))
        if value is None or not words & _PIECE_WORDS or not words & _EACH_WORDS:
            return None
        return Found(
            f"{value:g} bounds {self.whole}, but its comment counts one piece ({said!r}): several pieces together pass it, and are "
            f"refused or cut to about the first; write the limit for all the pieces together (the most pieces times {value:g})",
            "unit-against-comment",
        )


class LeastCommentedAsWrong(NamedTuple):
    """An option's default whose declaration makes it the least of a good thing that passes
    (`description: The least similarity that passes.`, from its `minimum:` to its `maximum:`)
    commented as the wrong it tolerates (`threshold: 0.15  # tolerate up to 15% difference`):
    a reply 15% like the reference passes, where 85% alike was meant."""

    def check(self, setting: Setting) -> Found | None:
        value, said, described = number_value(setting.value), setting.comment(), setting.sibling("description")
        if value is None or not isinstance(described, str) or not re.search(r"\bleast\b", described, re.IGNORECASE) or not _bounds_what_is_wrong(said):
            return None
        low, high = (number_value(setting.sibling(end)) for end in ("minimum", "maximum"))
        if low is None or high is None or _complement_given(said, value, low, high):
            return None
        return Found(
            f"{value:g} is {described.strip().rstrip('.')[:1].lower()}{described.strip().rstrip('.')[1:]} ({low:g} to {high:g}), but its comment bounds what is "
            f"wrong ({said!r}): as written, an answer only {value:g} of the way there passes; if that much wrong is what may pass, "
            f"write {round(high - (value - low), 6):g}",
            "unit-against-comment",
        )


#: Words of a comment that speak of doubt, the complement of confidence.
_DOUBT = re.compile(r"\b(?:unsure|uncertain\w*|doubt\w*|not\s+(?:sure|certain|confident)|unconfident)\b", re.IGNORECASE)


class ConfidenceCommentedAsDoubt(NamedTuple):
    """A least confidence commented as the doubt it stands for (`min_confidence: 0.2  # more
    than 20% unsure`): a verdict 0.2 sure is already kept, so almost nothing is passed on,
    where 0.8 (20% unsure) was meant."""

    def check(self, setting: Setting) -> Found | None:
        value, said = number_value(setting.value), setting.comment()
        if value is None or not 0 < value < 1 or not _DOUBT.search(said) or _complement_given(said, value, 0.0, 1.0):
            return None
        if not any(abs(share - value) < 1e-6 for share in _shares_said(said, 0.0, 1.0)):
            return None
        return Found(
            f"{value:g} is the least confidence kept (a verdict less sure than it goes on), but its comment gives it as doubt ({said!r}): "
            f"{value:.0%} unsure is {round(1 - value, 6):g} sure, and a verdict {value:g} sure is already kept; write {round(1 - value, 6):g}",
            "unit-against-comment",
        )


#: Units an option's declaration may name and a comment may name otherwise, each family with
#: the size of each unit in the family's first.
_DECLARED_UNITS: tuple[dict[str, tuple[frozenset[str], float]], ...] = (
    {"seconds": (frozenset("sec secs second seconds".split()), 1), "milliseconds": (frozenset("ms msec millisecond milliseconds".split()), 0.001),
     "minutes": (frozenset("min mins minute minutes".split()), 60), "hours": (frozenset("hr hrs hour hours".split()), 3600)},
    {"characters": (frozenset("char chars character characters".split()), 1), "tokens": (frozenset({"token", "tokens"}), 4),
     "words": (frozenset({"word", "words"}), 6)},
)


def _units_named(words: set[str]) -> list[tuple[int, str, float]]:
    """(family, unit, size) of each unit `words` name."""
    return [(family, unit, size) for family, units in enumerate(_DECLARED_UNITS) for unit, (names, size) in units.items() if words & names]


class CommentAgainstDeclaredUnit(NamedTuple):
    """An option's default commented in another unit than the option's name or description
    gives (`max_latency_ms` "in milliseconds", `default: 2.5  # seconds`): the number is read
    in the declared unit, a thousandth of what was meant."""

    def check(self, setting: Setting) -> Found | None:
        value, said, described = number_value(setting.value), setting.comment(), setting.sibling("description")
        name = setting.label.rsplit(".", 2)[-2] if setting.label.count(".") >= 2 else ""
        declared = _units_named({*re.findall(r"[a-z]+", str(described or "").lower()), *name.lower().split("_")})
        commented = _units_named(set(re.findall(r"[a-z]+", said.lower())))
        if value is None or not value or len(declared) != 1 or len(commented) != 1 or commented[0][0] != declared[0][0] or commented[0][1] == declared[0][1]:
            return None
        (_, unit, size), (_, other, other_size) = declared[0], commented[0]
        meant = value * other_size / size
        if any(abs(figure * other_size / size - value) <= 0.05 * value for figure in _figures(said)):
            return None  # the comment gives the figure in its unit, and the number converts it
        return Found(
            f"{value:g} is read in {unit}, as the option's declaration says, but its comment says {other} ({said!r}): {value:g} {other} "
            f"are {round(meant, 6):g} {unit}; write {round(meant, 6):g}",
            "unit-against-comment",
        )


class WordAgainstComment(NamedTuple):
    """A word setting whose comment says what another of its words does: `aggregate: majority
    # one judge finding it ungrounded is enough to fail it` is `strictest`'s rule, and a monitor
    of `error_rate` whose comments speak of questions the retriever found nothing for watches
    failed calls, not those items (`not_scorable_rate`)."""

    #: Each word of the setting: the phrases (a pattern over the comment, lower case, `_` and
    #: `-` as spaces) that say it, and what it does, as a message says it.
    words: Mapping[str, tuple[str, str]]
    #: Whether the owner's name and every comment of its block count too (a monitor's).
    whole_block: bool = False

    def check(self, setting: Setting) -> Found | None:
        value = setting.value
        if not isinstance(value, str) or value not in self.words:
            return None
        said = "; ".join(part for part in (setting.comment(), setting.fact("said_of_owner") if self.whole_block else "") if part)
        text = re.sub(r"[_-]+", " ", said.lower())
        meant = [word for word, (pattern, _) in self.words.items() if re.search(pattern, text)]
        if value in meant or len(meant) != 1:
            return None
        return Found(
            f"`{value}` means {self.words[value][1]}, but what is written of it says {self.words[meant[0]][1]} ({_quoted(said)}): "
            f"that is `{meant[0]}`; write it, or say in the comment what `{value}` does",
            "word-against-comment",
        )


def _quoted(said: str, most: int = 140) -> str:
    """A comment as a message quotes it, cut at `most` characters."""
    return repr(said if len(said) <= most else said[: most - 1].rstrip() + "…")


#: A comment giving the share a thing loses: "loses 80% of its credit", "a 30% penalty".
_LOST_SHARE = re.compile(r"\b(?:loses?|losing|lost|drops?|cuts?|minus|docked|penalt(?:y|ies)|discount(?:ed)?)\b[^.;]*?(\d+(?:\.\d+)?)\s*%|(\d+(?:\.\d+)?)\s*%\s*(?:penalty|less|off|discount)", re.IGNORECASE)


class LostShareGiven(NamedTuple):
    """A share kept commented as the share lost: `uncertainty_weight: 0.8  # an indirect
    statement loses 80% of its credit` keeps 80% of the credit, where 0.2 was meant, when the
    option's declaration says what the thing counts (not what it loses)."""

    def check(self, setting: Setting) -> Found | None:
        value, said = number_value(setting.value), setting.comment()
        described = str(setting.sibling("description") or setting.fact("option_description") or "")
        found = _LOST_SHARE.search(said)
        if value is None or not 0 < value < 1 or found is None or re.search(r"\b(?:penalt|los[ets]|deduct|discount)", described, re.IGNORECASE):
            return None
        lost = float(found.group(1) or found.group(2)) / 100
        if abs(lost - value) > 1e-6 or abs(lost - 0.5) < 1e-6:
            return None
        return Found(
            f"{value:g} is the share kept, as its declaration says ({_quoted(described.strip(), 90)}), but its comment gives the share lost ({said!r}): as "
            f"written, it keeps {value:.0%} and loses {1 - value:.0%}; write {round(1 - value, 6):g}",
            "unit-against-comment",
        )


#: A comment naming the line it gives: "calibrate's best line: 0.64", "threshold 0.7".
_LINE_GIVEN = re.compile(r"\b(?:line|threshold|cut-?off|pass(?:es)?\s+at|bar)\b[^\d;]{0,40}?(?<![\d.])(\d*\.\d+)", re.IGNORECASE)
_CONTRAST = re.compile(r"\b(?:was|were|old|older|previous\w*|instead|raised|lowered|from|rather|not|above|below|stricter|looser|than|over|under|except|before|until)\b", re.IGNORECASE)


class CommentGivesAnotherLine(NamedTuple):
    """A pass line whose comment gives the line it was taken from, and another figure: `0.46  #
    calibrate's best line: 0.64` (digits turned round in the copy) passes what the line found
    was meant to fail."""

    def check(self, setting: Setting) -> Found | None:
        value, said = number_value(setting.value), setting.comment()
        found = _LINE_GIVEN.search(said)
        if value is None or found is None or _CONTRAST.search(said):
            return None
        figure = float(found.group(1))
        places = len(found.group(1).split(".")[1])
        if abs(figure - value) < 10 ** -places / 2 or abs(round(figure, 2) - round(value, 2)) < 1e-9:
            return None
        return Found(
            f"{value:g} is the pass line, but its comment gives the line as {figure:g} ({said!r}): the scores between them pass or fail "
            f"otherwise than the line it was taken from; write {figure:g}, or say in the comment why it differs",
            "unit-against-comment",
        )


#: Shares a comment spells out.
_FRACTION_WORDS = {"half": 0.5, "third": 1 / 3, "quarter": 0.25, "fifth": 0.2, "tenth": 0.1, "twentieth": 0.05, "hundredth": 0.01, "thousandth": 0.001}
_COUNT_WORDS = {"one": 1, "a": 1, "an": 1, "two": 2, "three": 3, "four": 4, "five": 5, "ten": 10, "twenty": 20, "fifty": 50, "hundred": 100, "thousand": 1000}
_COUNT = r"(\d[\d,]*|" + "|".join(_COUNT_WORDS) + r")"
SKIPPED = re.compile(r"\b(?:skip\w*|drop\w*|discard\w*|ignor\w*|left\s+out|leave\s+out|not\s+scored)\b", re.IGNORECASE)


def _count(word: str) -> float:
    return float(word.replace(",", "")) if word[0].isdigit() else float(_COUNT_WORDS[word])


def shares_said(said: str) -> list[float]:
    """The shares a comment gives as shares: `one trace in ten`, `1/20`, `5%`, `a tenth`
    (a bare number is left out: it may be anything)."""
    text = said.lower()
    found = [_count(part) / _count(whole) for part, whole in re.findall(rf"\b{_COUNT}\s+(?:[a-z]+\s+){{0,2}}(?:in|out\s+of|of\s+every)\s+(?:a\s+|every\s+)?{_COUNT}\b", text)]
    found += [float(part) / float(whole) for part, whole in re.findall(r"(?<![\w.{:])(\d+)\s*/\s*(\d+)\b", text) if float(whole)]
    found += [float(number) / 100 for number in re.findall(r"(\d+(?:\.\d+)?)\s*%", text)]
    found += [share for word, share in _FRACTION_WORDS.items() if re.search(rf"\b(?:a|one)\s+{word}\b", text) or (word == "half" and re.search(r"\bhalf\b", text))]
    return [share for share in found if 0 < share <= 1]


class ShareCommented(NamedTuple):
    """A share whose comment gives another: `uncertainty_weight: 0.3  # an indirect statement
    counts half` counts it at 0.3, where 0.5 was meant (a share from 0 to 1 by its declaration)."""

    def check(self, setting: Setting) -> Found | None:
        value, said = number_value(setting.value), setting.comment()
        if value is None or setting.sibling("maximum") != 1 or setting.sibling("minimum") not in (0, None) or not re.search(r"\b(?:counts?|worth|weighs?|weight|as much)\b", said, re.IGNORECASE):
            return None
        shares = shares_said(said) + [float(number) for number in re.findall(r"(?<![\w.])(0?\.\d+)\b", said)]
        if not shares or any(abs(share - value) < 1e-6 or abs(share - (1 - value)) < 1e-6 for share in shares) or _LOST_SHARE.search(said):
            return None
        return Found(
            f"{value:g} is what it counts, but its comment gives {shares[0]:g} ({said!r}): write {shares[0]:g}, or the comment the number means",
            "unit-against-comment",
        )


_SPAN_NAMES = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}
_MONTHS = frozenset("month months monthly".split())
_SPAN_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800, "30d": 2592000}


class SpanAgainstComment(NamedTuple):
    """A time span far from the one its comment speaks of: `window: 1m  # the last month` is
    one minute (`m` is minutes; a month is `30d`), so the window holds almost nothing."""

    def check(self, setting: Setting) -> Found | None:
        written = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*", str(setting.value)) if isinstance(setting.value, str) else None
        said = setting.comment()
        words = re.findall(r"[a-z]+|\d+(?:\.\d+)?", said.lower())
        spans = [(index, _SPAN_SECONDS["30d" if word in _MONTHS else _TIME_WORDS[word]]) for index, word in enumerate(words) if word in _TIME_WORDS or word in _MONTHS]
        if written is None or len({seconds for _, seconds in spans}) != 1:
            return None
        index, unit = spans[0]
        before = words[index - 1] if index else ""
        count = float(before) if re.fullmatch(r"\d+(?:\.\d+)?", before) else _NUMBER_WORDS.get(before, 1.0)
        meant, value = count * unit, float(written[1]) * _SPAN_SECONDS[written[2]]
        if meant / 2 <= value <= meant * 2:
            return None
        fix = next(f"{meant / seconds:g}{letter}" for letter, seconds in sorted(_SPAN_SECONDS.items(), key=lambda found: -found[1]) if len(letter) == 1 and meant % seconds == 0)
        return Found(
            f"{setting.value} is {written[1]} {_SPAN_NAMES[written[2]]}, but its comment speaks of about {fix} ({said!r}): "
            f"`m` is minutes, a month `30d`; write `{fix}`",
            "unit-against-comment",
        )


#: A comment saying a limit is off: "no cap yet", "unlimited", "every run passes".
_NO_LIMIT = re.compile(r"\b(?:no\s+(?:cap|limit|maximum|max|bound|ceiling)|unlimited|uncapped|without\s+(?:a\s+)?(?:cap|limit)|(?:every|all)\s+\w+\s+pass(?:es)?|(?:cap|limit)\s+(?:is\s+)?off|disabled?)\b", re.IGNORECASE)
_LIMIT_NAMES = re.compile(r"(?:^|_)(?:max|most|limit|cap|at_most|maximum)(?:_|$)|\b(?:at most|the most|maximum|limit|cap)\b", re.IGNORECASE)


class ZeroCommentedAsNoLimit(NamedTuple):
    """A limit of 0 commented as no limit: `max: 0  # no cap yet` is the tightest cap, so
    every run that makes a single call fails where every run was to pass."""

    def check(self, setting: Setting) -> Found | None:
        name = setting.label.rsplit(".", 2)[-2] if setting.label.endswith(".default") else setting.label.rsplit(".", 1)[-1]
        described = str(setting.sibling("description") or setting.fact("option_description") or "")
        if number_value(setting.value) != 0 or not _NO_LIMIT.search(setting.comment()) or not (_LIMIT_NAMES.search(name) or _LIMIT_NAMES.search(described)):
            return None
        return Found(
            f"0 is the tightest limit, not none ({setting.comment()!r}): everything above 0 is held to it and fails; for no limit, "
            f"write a number no item reaches, or leave the option to a scorer without it",
            "zero-as-no-limit",
        )


#: A sentence of a description leaving an empty output unscored: "a reply with no message at
#: all ... is not scored here and shows up in the coverage".
_EMPTY_UNSCORED = re.compile(
    r"[^.]*\b(?:empty|no (?:message|output|reply|answer|text)|nothing|blank)\b[^.]*\b(?:not (?:scored|scorable)|unscored|left out of|coverage)\b[^.]*",
    re.IGNORECASE,
)


class EmptyScoredAgainstDescription(NamedTuple):
    """`empty_output: score` where the scorer's description says an empty output is not scored:
    an empty reply then gets a score (often the best) instead of counting against coverage."""

    def check(self, setting: Setting) -> Found | None:
        said = _EMPTY_UNSCORED.search(" ".join(str(setting.sibling("description") or "").split()))
        if setting.value != "score" or said is None:
            return None
        return Found(
            f"score runs the scorer on an empty output, but the description says such an output is not scored ({said.group(0).strip()!r}): "
            f"it gets a score and counts in the mean and the pass rate; write `empty_output: not_scorable`",
            "empty-scored-against-description",
        )


#: A comment asking a judge for the same answer every time.
_SAME_EVERY_TIME = re.compile(r"\b(?:determinis\w*|reproducib\w*|repeatabl\w*|greedy|must not (?:flake|vary|change)|no randomness)\b", re.IGNORECASE)


class SamplesWhereSameMeant(NamedTuple):
    """A temperature above 0 whose comment wants the same verdict every time: `temperature: 0.7
    # deterministic verdicts` samples, so a gate built on it passes and fails the same reply."""

    def check(self, setting: Setting) -> Found | None:
        value, said = number_value(setting.value), setting.comment()
        found = _SAME_EVERY_TIME.search(said)
        if value is None or value <= 0 or found is None:
            return None
        return Found(
            f"{value:g} samples the judge's answer, but its comment wants the same one every time ({said!r}): at a temperature above 0 "
            f"the judge may answer the same item otherwise on the next run; write `temperature: 0`",
            "unit-against-comment",
        )


#: What each similarity method leaves aside (the function library's `similarity`), and words
#: that ask for it to count.
_METHOD_IGNORES = {
    "token_set": ("words one text has and the other lacks (extra or missing words)", r"\b(?:extra|added|missing|dropped|padd\w*|every word|no other|each word|all (?:the )?words)\b"),
    "partial": ("text around the best-matching part", r"\b(?:extra|added|padd\w*|whole|every word|no other|all (?:the )?words)\b"),
    "token_sort": ("the order of the words", r"\b(?:in (?:the same )?order|word order (?:counts|matters)|order matters)\b"),
}


class MethodAgainstWords(NamedTuple):
    """A similarity method that leaves aside what the comment or the scorer's description asks
    to count: `method: token_set  # phrase order aside` where "every word, and no other, must
    be there" (token_set ignores extra and missing words; token_sort only the order)."""

    def check(self, setting: Setting) -> Found | None:
        if not setting.label.endswith("method.default") or setting.value not in _METHOD_IGNORES:
            return None
        said = " ".join(part for part in (setting.comment(), str(setting.fact("scorer_description") or "")) if part)
        ignores, counted = _METHOD_IGNORES[str(setting.value)]
        found = re.search(counted, said, re.IGNORECASE)
        if found is None:
            return None
        return Found(
            f"{setting.value} leaves aside {ignores}, but the words around it ask for them to count ({found.group(0)!r} in "
            f"{_quoted(said, 100)}): such differences never lower the similarity; `ratio` counts every character in order, "
            f"`token_sort` sets only the order aside",
            "method-against-words",
        )


class CountAgainstComment(NamedTuple):
    """A count whose comment gives another (`min_samples: 2  # never page on fewer than 20
    replies`): the setting acts at a tenth of what was meant."""

    def check(self, setting: Setting) -> Found | None:
        value, said = number_value(setting.value), setting.comment()
        words = re.findall(r"[a-z]+|\d+(?:\.\d+)?", said.lower())
        # The counts the comment gives of things (a figure or a number word before a noun), not of time.
        figures = {float(word) if word[0].isdigit() else _NUMBER_WORDS[word] for index, word in enumerate(words)
                   if (word[0].isdigit() or word in _NUMBER_WORDS) and index + 1 < len(words) and words[index + 1] not in _TIME_WORDS and words[index + 1] not in _MONTHS}
        if value is None or len(figures) != 1 or value in figures or re.search(r"\b(?:of|per|each|every|out)\b", said.lower()):
            return None
        figure = next(iter(figures))
        return Found(f"{value:g}, but its comment gives {figure:g} ({said!r}): write {figure:g}, or the comment the number means", "unit-against-comment")


class WindowTooSmallForMinimum(NamedTuple):
    """A least number of outcomes above what a time window holds by its own comment (`window:
    1d  # about 40 contracts a day` under `min_samples: 50`): the monitor never has enough and
    never alerts."""

    def check(self, setting: Setting) -> Found | None:
        value = number_value(setting.value)
        window = setting.sibling("window")
        held = re.search(r"(?:about|around|some|roughly|~)?\s*(\d+)\s+[a-z]+", setting.fact("window_comment") or "") if isinstance(window, str) else None
        if value is None or held is None or value <= float(held[1]):
            return None
        return Found(
            f"{value:g} outcomes, but the window ({window}) holds about {held[1]} by its comment: the monitor never has enough and never "
            f"alerts; lower min_samples below {held[1]}, or widen the window",
            "never-alerts",
        )
