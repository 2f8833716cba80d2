"""Relations read from the words around a setting (rows of setting_rules.py, as those of
setting_comments.py): which of a setting's words its comment or its owner's comments
describe (`aggregate: majority  # one judge is enough`), a share, a count or a time span other
than the comment gives, a limit of 0 meant as none, and a scorer's own description against
its `empty_output:` or its similarity `method`.
"""

# Annotations are evaluated here, not kept as text, as in setting_relations.py: NamedTuple
# would compile each text into a ForwardRef when the module loads.
import re
from collections.abc import Mapping
from typing import NamedTuple

from .setting_comments import NUMBER_WORDS, TIME_WORDS
from .setting_relations import Found, Setting, number_value


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
        spans = [(index, _SPAN_SECONDS["30d" if word in _MONTHS else TIME_WORDS[word]]) for index, word in enumerate(words) if word in TIME_WORDS or word in _MONTHS]
        if written is None or len({seconds for _, seconds in spans}) != 1:
            return None
        index, unit = spans[0]
        before = words[index - 1] if index else ""
        count = float(before) if re.fullmatch(r"\d+(?:\.\d+)?", before) else NUMBER_WORDS.get(before, 1.0)
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


class ValueDeniedByDescription(NamedTuple):
    """A setting's value whose effect the scorer's own description denies, by a sentence
    `said` finds in it: `empty_output: score` where "an empty reply is not scored", and
    `context_from_tool_results: true` where "an answer that comes without its catalog entry is
    not scored" (such items are then scored, on what the description excludes)."""

    value: str | bool
    said: re.Pattern[str]
    #: What is wrong, as the message says it after the value; `{said}` is the sentence found.
    why: str
    code: str

    def check(self, setting: Setting) -> Found | None:
        said = self.said.search(" ".join(str(setting.sibling("description") or "").split()))
        if type(setting.value) is not type(self.value) or setting.value != self.value or said is None:
            return None
        return Found(self.why.format(said=repr(said.group(0).strip())), self.code)


EMPTY_SCORED = ValueDeniedByDescription(
    "score", _EMPTY_UNSCORED,
    "score runs the scorer on an empty output, but the description says such an output is not scored ({said}): "
    "it gets a score and counts in the mean and the pass rate; write `empty_output: not_scorable`",
    "empty-scored-against-description",
)
#: A sentence leaving an item without its context unscored: "an answer that comes without its
#: catalog entry is not scored", "a summary whose transcript is missing is left not scorable".
_WITHOUT_UNSCORED = re.compile(r"[^.;:]*\b(?:without|missing|lacks?|lacking)\b[^.;:]*\b(?:not scor\w*|unscored|left out|never judged|not judged|skipped)[^.;]*", re.IGNORECASE)


TOOL_RESULTS_SCORED = ValueDeniedByDescription(
    True, _WITHOUT_UNSCORED,
    "true judges an item that comes without context against the tool results in its output, but the description leaves such an "
    "item unscored ({said}): it is scored on evidence the description excludes; remove the line (false)",
    "tool-results-against-description",
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
        figures = {float(word) if word[0].isdigit() else NUMBER_WORDS[word] for index, word in enumerate(words)
                   if (word[0].isdigit() or word in NUMBER_WORDS) and index + 1 < len(words) and words[index + 1] not in TIME_WORDS and words[index + 1] not in _MONTHS}
        if value is None or len(figures) != 1 or value in figures or re.search(r"\b(?:of|per|out)\b", said.lower()):
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
