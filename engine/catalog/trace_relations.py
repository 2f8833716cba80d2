"""Relations of the `traces:` section's settings (rows of setting_rules.py): a scorer listed
for items that never hold what it reads, a field read from the attribute that holds another
field. What they know of the section (what each scorer reads, which attribute the convention
writes each field in) are facts traces.py gives.
"""

# Annotations are evaluated here, not kept as text, as in setting_relations.py: NamedTuple
# would compile each text into a ForwardRef when the module loads.
import re
from typing import NamedTuple

from .setting_words import SKIPPED, shares_said
from .setting_relations import Found, Setting

#: What an item made from traces never holds: no span carries an expected answer, an
#: expected trajectory or a conversation's turns.
_NEVER_GIVEN = ("ground_truth", "expected_trajectory", "turns")

#: Words of an attribute's name that say which side of a call it holds.
_INPUT_WORDS = frozenset("input inputs prompt prompts request question query".split())
_OUTPUT_WORDS = frozenset("output outputs response responses completion completions answer choice choices result".split())


class TakesItsItem(NamedTuple):
    """Each scorer of a kind of item reads what those items hold: an LLM span is one model
    call, with no tool results and, when it wrote text, no tool calls, so a scorer of a whole
    run listed under `llm:` judges every run as if no tool was called (`no-tool-errors` then
    scores every span as clean); and no span gives an expected answer."""

    kind: str

    def check(self, setting: Setting) -> Found | None:
        scorer = setting.value
        reads, requires = setting.fact("run_reads") or (frozenset(), ())
        needed = [name for name in _NEVER_GIVEN if name in requires]
        if needed:
            return Found(
                f"{scorer} needs `{needed[0]}`, which no span of a trace gives: every item is left not scorable, and the "
                f"scores you see are only of other scorers; score it with `scorers eval` on a data set that holds `{needed[0]}`",
                "reads-what-spans-lack",
            )
        tools = sorted(reads & {"tool_calls", "tool_results"})
        if self.kind != "llm" or not tools:
            return None
        what = "the tool calls' results" if "tool_results" in tools else "the tool calls"
        return Found(
            f"{scorer} reads {what} (`{'`, `'.join(tools)}`), but each LLM span is one model call: it holds no tool results, and no "
            f"calls when it also wrote text, so every item is judged as if no tool had run; list it under `agent:`, whose items "
            f"are whole runs with every call and its result",
            "reads-what-spans-lack",
        )


def attributes_read(expression: str) -> list[str]:
    """The span attributes a JMESPath expression reads (`attributes."input.value"`)."""
    return re.findall(r'attributes\s*\.\s*"([^"]+)"', expression) + re.findall(r"attributes\s*\.\s*([A-Za-z_]\w*)", expression)


class ReadsItsOwnField(NamedTuple):
    """A field read from an attribute that holds another field: `output:
    'attributes."input.value"'` scores the question the user asked as if the app had answered
    it, so a faithful answer is never what is judged."""

    def check(self, setting: Setting) -> Found | None:
        field, expression = setting.label.rsplit(".", 1)[-1], setting.value
        if not isinstance(expression, str) or field not in ("input", "output"):
            return None
        known: tuple[str, dict[str, set[str]], dict[str, dict[str, str]]] = setting.fact("convention") or ("", {}, {})
        convention, readers, preset = known
        for attribute in attributes_read(expression):
            fields = readers.get(attribute, set())
            words = set(re.split(r"[._\-\s]+", attribute.lower()))
            other = "output" if field == "input" else "input"
            if fields and field not in fields and other in fields:
                said = f"the {convention} convention writes the {other} there"
            elif not fields and words & (_OUTPUT_WORDS if field == "input" else _INPUT_WORDS) and not words & (_INPUT_WORDS if field == "input" else _OUTPUT_WORDS):
                said = f"its name says it holds the {other}"
            else:
                continue
            own = preset.get(setting.label.rsplit(".", 3)[-3], {}).get(field)
            fix = f"remove the line to read it as the preset does (`{own}`)" if own else f"read the attribute that holds the {field}"
            return Found(
                f"the item's {field} is read from `{attribute}`, but {said}: every item's {field} is then its {other}, and the "
                f"scores judge the wrong text; {fix}",
                "field-reads-another",
            )
        return None


class ShareAgainstComment(NamedTuple):
    """A rate whose comment gives another share: `sampling: 0.01  # one trace in ten` scores
    a tenth of what was meant (a tail that alerts late, a bill that is not what was planned)."""

    #: What is counted, one of them (`trace`).
    noun: str

    def check(self, setting: Setting) -> Found | None:
        value, said = setting.value, setting.comment()
        if not isinstance(value, (int, float)) or isinstance(value, bool) or not 0 < value < 1:
            return None
        shares = shares_said(said)
        meant = 1 - value if SKIPPED.search(said) else value
        if not shares or any(share / 2 < meant < share * 2 for share in shares):
            return None
        share = shares[0]
        written = round(1 - share if SKIPPED.search(said) else share, 6)
        return Found(
            f"{value:g} scores {_as_one_in(value, self.noun)}, but its comment says {_as_one_in(share, self.noun)} ({said!r}): the rate is the "
            f"share itself, from 0 to 1; write {written:g}",
            "unit-against-comment",
        )


def _as_one_in(share: float, noun: str) -> str:
    return f"one {noun} in {round(1 / share):g}" if share <= 0.5 and abs(1 / share - round(1 / share)) < 0.01 else f"{share:.0%} of {noun}s"


#: Words of a comment that leave something out.
_LEAVES_OUT = re.compile(r"\b(?:leave\w*|left|keep\w*)\b[^.;:]*?\bout\b|\b(?:exclud\w*|skip\w*|drop\w*|ignor\w*|except|without|filter\w*\s+out|not)\b", re.IGNORECASE)


class KeptNotLeftOut(NamedTuple):
    """A `where:` value its comment means to leave out: `deployment.environment: staging  #
    leave the staging traffic out` scores the staging spans only, since `where:` keeps the
    spans that match."""

    def check(self, setting: Setting) -> Found | None:
        value, said = setting.value, setting.comment()
        if not isinstance(value, (str, int, float)) or isinstance(value, bool) or not str(value).strip():
            return None
        for clause in re.split(r"[.;:]", said):
            left = _LEAVES_OUT.search(clause)
            if left is not None and re.search(rf"\b{re.escape(str(value))}\b", clause, re.IGNORECASE):
                return Found(
                    f"{value!r} keeps only the spans whose {setting.label.partition('where.')[2]} is {value!r}, but its comment leaves them out "
                    f"({said!r}): `where:` keeps what it names and drops the rest; name the value to keep",
                    "kept-not-left-out",
                )
        return None


class BeyondTheSampledShare(NamedTuple):
    """A `sampled_rate` condition past the share the scorer is sampled at: with `sampling:
    0.1`, at most a tenth of the replies are queued, so `below: 0.9` holds all the time (and
    `above: 0.2` never does); the rate is of every reply seen, not of those sampled."""

    def check(self, setting: Setting) -> Found | None:
        value, rate = setting.value, setting.fact("sampling_rate")
        if setting.sibling("statistic") != "sampled_rate" or not isinstance(value, (int, float)) or isinstance(value, bool) or not isinstance(rate, (int, float)) or rate >= 1:
            return None
        below = setting.label.endswith(".below")
        if (below and value <= rate) or (not below and value < rate):
            return None
        return Found(
            f"{value:g} is past the share the scorer is sampled at, {rate:g} (`traces: sampling:`): sampled_rate is the share of every "
            f"reply seen that was queued, at most {rate:g}, so the monitor {'alerts all the time' if below else 'never alerts'}; write the "
            f"line as a share of every reply (a tenth of the sampled dropped: {round(rate * 0.9, 6):g})",
            "beyond-sampled-share",
        )
