"""Relations of the settings of a scorer's judges (rows of setting_rules.py): a cascade's line
apart from the pass line that decides, a least confidence from a judge that gives none, a
jury too small for its way of combining. What they know of the judges are facts
setting_checks.py gives.
"""

# Annotations are evaluated here, not kept as text, as in setting_relations.py: NamedTuple
# would compile each text into a ForwardRef when the module loads.
from typing import NamedTuple

from ..judge.prices import undated
from .setting_comments import ConfidenceCommentedAsDoubt
from .setting_relations import Found, Setting, number_value


class AtOwnPassLine(NamedTuple):
    """A cascade's line apart from the scorer's own pass line: the replies it sends on are those
    near its own line, so those near the pass line that decides are left to the cheaper judge.
    And a majority jury's vote line apart from it: each judge votes pass by another line than
    the one the scorer passes items by."""

    votes: bool = False

    def check(self, setting: Setting) -> Found | None:
        value, own = number_value(setting.value), setting.fact("own_threshold")
        if value is None or own is None or abs(value - own) < 1e-9:
            return None
        if self.votes:
            return None if setting.sibling("aggregate") != "majority" else Found(
                f"{value:g} is each judge's vote line, apart from the scorer's own pass line, {own:g}: the majority passes an item each judge "
                f"scores between the two, which the pass line would {'fail' if value < own else 'pass'}; write {own:g}",
                "vote-line-apart",
            )
        return Found(
            f"{value:g} is not the scorer's own pass line, {own:g}: the replies sent on to the strong judge are those near {value:g}, and "
            f"those near {own:g}, where pass and fail are decided, keep the cheaper judge's verdict; write {own:g}, or leave it out",
            "cascade-line-apart",
        )


class NeedsProbabilities(NamedTuple):
    """A least confidence where the judge gives no confidence to hold to it: Claude returns no
    token log-probabilities, so without repeated samples no verdict is ever sent on."""

    def check(self, setting: Setting) -> Found | None:
        why, samples = setting.fact("no_probabilities"), setting.fact("samples")
        if number_value(setting.value) is None or why is None or (samples is not None and samples[0] > 1):
            return None
        return Found(f"{setting.value:g} never acts: {why}, so no verdict has a confidence to send on; give the judge `confidence_samples: 3`, or a judge that returns them", "no-confidence")


class TooFewJudges(NamedTuple):
    """Two judges under a way of combining that needs three or more: the median of two scores
    is their mean, and a majority of two is both, so one judge that goes astray is never outvoted."""

    def check(self, setting: Setting) -> Found | None:
        aggregate = setting.sibling("aggregate")
        if aggregate not in ("median", "majority") or not isinstance(setting.value, list) or len(setting.value) != 2:
            return None
        said = "the median of two scores is their mean" if aggregate == "median" else "a majority of two judges is both of them"
        return Found(
            f"two judges under `aggregate: {aggregate}`: {said}, so one judge that goes astray is never outvoted; add a third judge "
            f"(an odd number), or write the rule two judges follow (`mean`, `strictest`)",
            "too-few-judges",
        )


class NotTheFirstJudge(NamedTuple):
    """A cascade whose strong judge is the model that judged first: every item sent on is
    judged again by the same model, which gives it the same verdict, at twice the cost."""

    def check(self, setting: Setting) -> Found | None:
        first = setting.fact("judge_model")
        if not isinstance(setting.value, str) or not isinstance(first, str) or undated(setting.value) != undated(first):
            return None
        return Found(
            f"{setting.value} is {'' if setting.value == first else f'{first}, '}the judge that judged first: an item sent on is judged again by the same model, which gives it the "
            f"same verdict, and only costs; name the stronger model",
            "cascade-to-itself",
        )


class AboveAnEvenChance(NamedTuple):
    """A least confidence at or below an even chance: the confidence of a pass or fail is that
    of the likelier side, never below 0.5, so nothing is ever sent on."""

    def check(self, setting: Setting) -> Found | None:
        value = number_value(setting.value)
        if value is None or value > 0.5 or ConfidenceCommentedAsDoubt().check(setting) is not None:
            return None  # a doubt written for the confidence says what to write instead
        return Found(
            f"{value:g} never acts: a verdict's confidence is the chance of its likelier side, 0.5 at the least, so no verdict is ever "
            f"less sure than {value:g} and nothing is sent on; write the confidence below which a verdict goes on (e.g. 0.8)",
            "no-confidence",
        )
