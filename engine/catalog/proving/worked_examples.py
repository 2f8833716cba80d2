"""A step's worked examples held to what its verdicts mean. An example's answer gives a value
and says why (`'"yes": the guideline gives this dose; the wording differs only'`); when the
why reads as the other side of the value's meaning ("yes" is a hallucination, and the why says
the guideline states it), the judge is taught to answer by the value against its meaning, and
every such verdict counts the other way.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from ...errors import ConfigError
from ..source import CatalogSource, position
from ..warning import CatalogWarning
from .meanings import Meaning, Polarity, polarity_of_words

#: A source the example's item holds, saying what the claim says: "the guideline gives this
#: dose", "the policy says members return items free".
_AFFIRMS = re.compile(
    r"\b(?:context|guideline|guidelines|policy|record|passage|passages|document|documents|source|sources|reference|page|pages|manual|article|text|notes?)\s+"
    r"(?:gives|states|says|confirms|mentions|lists|shows|supports|backs|contains|holds|includes)\s+(?P<what>.+)",
    re.IGNORECASE,
)
#: Words that turn such a saying into a contrast ("the policy gives 30 days, not 60").
_CONTRAST = re.compile(r"\b(?:not|no|nothing|never|but|instead|rather|only|another|other|different|otherwise|else|beyond)\b", re.IGNORECASE)
_REFERS_BACK = frozenset("this that these those it so exactly same".split())
_STOP = frozenset("the a an of to in on for and or with by at from is are be as".split())


def examples_against_meanings(source: CatalogSource, scorer_id: str, meanings: Mapping[str, Meaning]) -> list[ConfigError]:
    """`example-against-meaning` at each worked example whose reason says the other side of
    the value it gives."""
    raw = source.scorers.get(scorer_id)
    steps = raw.get("steps") if isinstance(raw, Mapping) else None
    found: list[ConfigError] = []
    for index, step in enumerate(steps if isinstance(steps, list) else []):
        if not isinstance(step, Mapping) or not isinstance(step.get("examples"), list):
            continue
        polarities = _value_polarities(str(step.get("id", "")), meanings)
        for number, example in enumerate(step["examples"]):
            answer = example.get("answer") if isinstance(example, Mapping) else None
            if not isinstance(answer, str) or not polarities:
                continue
            for value, reason, read in _reasons(answer, polarities, str(example.get("output", ""))):
                if read == polarities[value][0] or read == "neutral" or polarities[value][0] == "neutral":
                    continue
                place = position(raw, ["steps", index, "examples", number, "answer"], value=True)
                file, line, column = place or (str(source.path), None, None)
                found.append(CatalogWarning(
                    f"{scorer_id}.steps.{step.get('id')}.examples[{number}]: the worked example answers {value!r}, {polarities[value][0]} by "
                    f"the meaning of `{polarities[value][1]}`, with a reason that reads {read} ({reason!r}): the judge learns to "
                    f"give {value!r} where its meaning is the other, and such verdicts count the other way; give the value the reason means",
                    file, line, column, code="example-against-meaning",
                ))
                break
    return found


def _value_polarities(step: str, meanings: Mapping[str, Meaning]) -> dict[str, tuple[Polarity, str]]:
    """Each text value of the step's verdicts with what it means, where every field of the step
    that has the value agrees (`'yes'` bad, with the field that says so)."""
    found: dict[str, tuple[Polarity, str]] = {}
    clashing: set[str] = set()
    for path, meaning in meanings.items():
        if not path.startswith(f"{step}."):
            continue
        for value, polarity in (meaning.polarities or {}).items():
            if not isinstance(value, str):
                continue
            if value in found and found[value][0] != polarity:
                clashing.add(value)
            found.setdefault(value, (polarity, path.split(".", 1)[1]))
    return {value: said for value, said in found.items() if value not in clashing}


def _reasons(answer: str, polarities: Mapping[str, Any], output: str) -> Iterator[tuple[str, str, Polarity]]:
    """Each value the answer gives in quotes, with the reason written after it (to the next
    quote or the end of its clause) and how that reason reads."""
    for quoted in re.finditer(r"[\"“']([^\"”']{1,40})[\"”']", answer):
        value = quoted.group(1)
        if value not in polarities:
            continue
        reason = re.split(r"[;.\"“]|\s[-–—]\s", answer[quoted.end():], maxsplit=1)[0].strip(" :,()")
        read = polarity_of_words(reason) or _affirmed(reason, output)
        if reason and read is not None:
            yield value, reason, read


def _affirmed(reason: str, output: str) -> Polarity | None:
    """good where the reason says the item's source states what the output says (what it
    states refers back to the claim, or shares its words), with no contrast."""
    said = _AFFIRMS.search(reason)
    if said is None or _CONTRAST.search(reason):
        return None
    words = [word for word in re.findall(r"[a-z0-9]+", said["what"].lower()) if word not in _STOP]
    if words and words[0] in _REFERS_BACK:
        return "good"
    claimed = {word.rstrip("s") for word in re.findall(r"[a-z0-9]+", output.lower())}
    return "good" if len({word.rstrip("s") for word in words} & claimed) >= 2 else None
