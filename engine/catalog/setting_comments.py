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
TIME_WORDS: Mapping[str, str] = {
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
        times = [word for word in words if word in TIME_WORDS]
        # "a day of replies" measures the replies by time; "the last 50 replies" counts them.
        counted = {word for index, word in enumerate(words) if word in _OUTCOME_WORDS and not (index >= 2 and words[index - 1] == "of" and words[index - 2] in TIME_WORDS)}
        if value is None or not times or counted:
            return None
        before = words[words.index(times[0]) - 1] if words.index(times[0]) else ""
        count = before if re.fullmatch(r"\d+(?:\.\d+)?", before) else "1"
        return Found(
            f"{value:g} is the last {value:g} outcomes, however long they took, but its comment speaks of time ({said!r}): a number "
            f"counts outcomes, so the span it covers follows the traffic; write a time span: `{setting.label.rsplit('.', 1)[-1]}: {count}{TIME_WORDS[times[0]]}`",
            "unit-against-comment",
        )


#: Numbers a comment may spell out ("two minutes", "ten minutes").
NUMBER_WORDS = {
    word: float(index) for index, word in enumerate("zero one two three four five six seven eight nine ten eleven twelve".split())
} | {"fifteen": 15.0, "twenty": 20.0, "thirty": 30.0, "forty": 40.0, "fifty": 50.0, "sixty": 60.0, "ninety": 90.0, "hundred": 100.0}


def _figures(said: str) -> list[float]:
    """The numbers a comment gives, in figures (`128k` is 128000) or spelled out."""
    written = [float(number) * (1000 if thousands else 1) for number, thousands in re.findall(r"(\d+(?:\.\d+)?)\s*([kK])?\b", said)]
    words = re.findall(r"[a-z]+", said.lower())
    # "one word each" counts a piece, not the whole the setting bounds.
    return written + [NUMBER_WORDS[word] for index, word in enumerate(words) if word in NUMBER_WORDS and not set(words[index + 1:index + 3]) & _EACH_WORDS]


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
