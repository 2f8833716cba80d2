"""What a judge's answer means for a scorer: which value of a verdict is good and which is
bad, and which way a rating is better. An author declares it in the answer schema, beside the
field (`meaning: {"yes": bad, "no": good}`; `meaning: higher_is_better` on a number); where
nothing is declared, the words of the values and of the field's description are read for it
("yes" when the claim is a hallucination), and what is read there is only a hint.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ..source import Place, load_shared, position

Polarity = Literal["good", "bad", "neutral"]
POLARITIES: tuple[Polarity, ...] = ("good", "bad", "neutral")
NUMBER_MEANINGS = ("higher_is_better", "lower_is_better")

#: Words that say an answer is good or bad for the item judged, as authors write verdicts and
#: their descriptions. A word read after a negation ("not", "no", "never") means the opposite.
_GOOD_WORDS = frozenset(
    "supported supports support faithful relevant correct accurate consistent pass passes passed passing grounded attributable "
    "complete covered covers aligned appropriate safe polite helpful met meets satisfied satisfies fulfilled fulfils fulfills "
    "matched matches match entailed entails follows followed agrees agree right true valid useful clear coherent fluent "
    "respectful acceptable good high present answered answers addressed addresses adheres adhered easy perfect perfectly "
    "excellent best ideal fully keeps kept complies complied comply compliant obeys obeyed respects respected honors honours "
    "upholds upheld conforms conformed fair balanced unbiased impartial objective even-handed "
    "help helps helped helping on-point fine okay harmless benign civil innocuous resolved resolves solved solves settles settled fixed fixes back backs backed effortless".split()
)
_BAD_WORDS = frozenset(
    "hallucination hallucinated hallucinates contradicted contradicts contradiction contradicting unsupported irrelevant "
    "incorrect inaccurate inconsistent wrong fail fails failed failing toxic toxicity biased bias harmful unsafe missing "
    "misses violates violated violation offensive rude fabricated fabricates invented unfaithful off-topic absent "
    "omitted omits incomplete unmet misaligned inappropriate insulting hateful false invalid unclear incoherent bad low "
    "misleading misled error errors mistake mistakes refuses refused unanswered ignores ignored deviates deviated impossible "
    "confusing confused hard difficult unreadable poor terrible worst useless severe breaks broke breaking breach breaches "
    "breached disobeys disobeyed noncompliant unfair one-sided prejudiced disparages disparaging demeans demeaning stereotypes "
    "stereotyping discriminatory "
    "differs mismatched mistranslates mistranslated mistranslation misrepresents misrepresented misquotes misquoted "
    "strays strayed straying drifts drifted drifting digresses digressed digression tangent tangential unrelated unresolved unsolved unsettled unbacked".split()
)
#: The same words in the languages catalogs are most often translated to (German, French,
#: Spanish, Italian, Portuguese): a prompt translated for a market defines its verdicts in them.
_GOOD_WORDS |= frozenset(
    "gut ausgezeichnet hervorragend flüssig bien bueno buena excelente bon bonne excellente ottimo ottima buono buona ótimo ótima bom boa "
    "gestützt belegt unterstützt richtig korrekt zutreffend wahr höflich harmlos vollständig erfüllt treffend "
    "soutenu soutenue étayé étayée correcte exact exacte pertinent pertinente fidèle vrai vraie poli polie respectueux respectueuse "
    "respaldado respaldada correcto correcta verdadero verdadera relevante fiel cortés "
    "supportato supportata corretto corretta vero vera cortese "
    "apoiado apoiada correto correta".split()
)
_BAD_WORDS |= frozenset(
    "mangelhaft ungenügend schlecht schwer holprig mauvais mauvaise malo mala pésimo pésima scarso scarsa cattivo cattiva ruim péssimo péssima "
    "halluziniert halluzination erfunden falsch unbelegt widerspricht widersprochen toxisch beleidigend unhöflich schädlich fehlt unvollständig "
    "halluciné hallucinée inventé inventée faux fausse incorrecte inexact inexacte toxique insultant insultante offensant offensante impoli impolie contredit nuisible "
    "alucinado alucinada alucinación inventado inventada falso falsa incorrecto incorrecta tóxico tóxica ofensivo ofensiva irrelevante contradice dañino grosero "
    "allucinato allucinata allucinazione inventato inventata scorretto scorretta errato errata tossico tossica offensivo offensiva irrilevante contraddice "
    "incorreto incorreta".split()
)
_KNOWN_WORDS = _GOOD_WORDS | _BAD_WORDS
_NEGATIONS = frozenset(
    "not no nothing never neither nor without isn't doesn't don't wasn't aren't cannot can't fails_to un "
    "nicht kein keine keinen ohne nie pas sans aucun aucune jamais sin nunca senza mai non".split()
)
#: Verbs that start what is said of a subject anew, past a negation of the words before them.
_NEW_CLAUSE = frozenset({"are", "is", "was", "were", "but"})
#: Words after a good word that point it at something else than what is judged.
_ELSEWHERE = frozenset({"different", "another", "other", "wrong"})
#: Phrases that say as one word what their words do not: "made up" is "invented".
_PHRASES: Mapping[str, str] = {"made up": "invented", "made-up": "invented", "makes up": "invented", "on topic": "relevant", "on-topic": "relevant", "off topic": "irrelevant", "hors sujet": "irrelevant", "hors-sujet": "irrelevant", "fuori tema": "irrelevant",
            "cross the line": "violates", "crosses the line": "violates", "crossed the line": "violates", "over the line": "violates"}
#: Value words that stand for themselves ("yes" and "no" say nothing without the description).
_VALUE_ALIASES: Mapping[str, Polarity] = {"partial": "neutral", "partly": "neutral", "unsure": "neutral", "tie": "neutral", "idk": "neutral"}


@dataclass(frozen=True)
class Meaning:
    """The meaning of one choice field: its values' polarities (an enum or a boolean) or
    which way is better (a number); `declared` in the schema, or read from its words
    (`evidence` quotes them); `place` is where the declaration (or the description) is."""

    polarities: Mapping[Any, Polarity] | None = None
    better: Literal["higher", "lower"] | None = None
    declared: bool = True
    place: Place | None = None
    evidence: str = ""
    #: What the field's description says of its values, read as an undeclared meaning is
    #: (beside a declared meaning only: the two may disagree).
    description_says: Meaning | None = None
    #: A number's least and greatest values, when its schema bounds both.
    ends: tuple[float, float] | None = None
    #: What the field's description says of each value it names ("the context supports the claim").
    clauses: Mapping[Any, str] | None = None
    #: Where its object's `required:` leaves the field out (a judge may then answer without it).
    optional_at: Place | None = None

    def polarity(self, value: Any) -> Polarity | None:
        if self.polarities is not None:
            return self.polarities.get(value)
        return None

    def against_description(self) -> bool:
        """Whether the field's description says each value it speaks of means the opposite
        of what `meaning:` declares ("yes" when supported, declared bad; a rating "from 1
        (impossible to follow) to 5 (perfectly clear)" declared lower-is-better)."""
        if self.description_says is not None and self.better is not None and self.description_says.better is not None:
            return self.better != self.description_says.better
        said = {value: polarity for value, polarity in ((self.description_says.polarities or {}) if self.description_says else {}).items() if polarity != "neutral"}
        return bool(said) and all(self.polarity(value) not in (None, polarity, "neutral") for value, polarity in said.items())

    def value_of(self, domain: Sequence[Any], wanted: Polarity) -> Any:
        """The first value of `domain` meaning `wanted` (NOTHING when none does)."""
        if self.better is not None and domain:
            numbers = sorted(domain)
            if wanted == "neutral":
                return numbers[len(numbers) // 2]
            return numbers[-1] if (wanted == "good") == (self.better == "higher") else numbers[0]
        for value in domain:
            if self.polarity(value) == wanted:
                return value
        return NOTHING

    def declared_as(self) -> str:
        """What the meaning says, as a message quotes it: `higher is better`, `'yes' (good), 'no' (bad)`."""
        return f"{self.better} is better" if self.better else ", ".join(self.described(value) for value in self.polarities or {})

    def described(self, value: Any) -> str:
        """How a message names a value and what it means: `'yes' (bad)`."""
        shown = f"'{value}'" if isinstance(value, str) else str(value).lower() if isinstance(value, bool) else f"{value:g}"
        polarity = self.polarity(value)
        return f"{shown} ({polarity})" if polarity else shown


NOTHING = object()


def schema_meanings(path: Path, step: str) -> dict[str, Meaning]:
    """The meanings of the choice fields of the answer schema file at `path`, by field path
    qualified with `step` (`analyze.verdicts[].verdict`): each declared one, else what the
    words of its values and description say when they say it clearly."""
    data = load_shared(path)
    if not isinstance(data, Mapping):
        return {}
    found: dict[str, Meaning] = {}
    for field_path, node, loc in choice_field_nodes(data):
        meaning = declared_meaning(node, data, loc) if "meaning" in node else _read_meaning(node, data, loc)
        if meaning is not None and "meaning" in node and node.get("description"):
            meaning = dataclasses.replace(meaning, description_says=_read_meaning(node, data, loc))
        if meaning is not None and node.get("description"):
            meaning = dataclasses.replace(meaning, clauses=value_clauses(node))
        if meaning is not None:
            found[f"{step}.{field_path}"] = dataclasses.replace(meaning, optional_at=_left_optional(data, loc))
    return found


def bounds_described_otherwise(path: Path) -> Iterator[tuple[str, tuple[float, float], tuple[float, float], Place]]:
    """Each number of the answer schema at `path` whose description gives another range than
    its minimum and maximum ("From 1 (...) to 5 (...)" beside `maximum: 10`; a band such as
    "4-5: polite" is part of a range, not the range): its path, its bounds, the described range
    and where the bound that differs is written (the maximum when both differ)."""
    from ..prompt_answers import RANGE_SAID

    data = load_shared(path)
    for field_path, node, loc in choice_field_nodes(data) if isinstance(data, Mapping) else ():
        ends = number_ends(node)
        said = RANGE_SAID.search(str(node.get("description") or "")) if ends is not None else None
        if ends is None or said is None or said["low"] is not None:
            continue
        low, high = (float(end) for end in (said["from"] or said["between"], said["to"] or said["and"]))
        place = position(data, [*loc, "maximum" if high != ends[1] else "minimum"], value=True)
        if (low, high) != ends and low < high and place is not None:
            yield field_path, ends, (low, high), place


def _left_optional(data: Any, loc: list[Any]) -> Place | None:
    """Where the object holding the field at `loc` lists what it requires (or the field
    itself, when it lists nothing), when the field is not among them; None when it is."""
    if len(loc) < 2 or loc[-2] != "properties":
        return None
    parent: Any = data
    for key in loc[:-2]:
        parent = parent.get(key) if isinstance(parent, Mapping) else parent[key] if isinstance(parent, list) and isinstance(key, int) else None
    if not isinstance(parent, Mapping) or loc[-1] in (parent.get("required") or []):
        return None
    return position(data, [*loc[:-2], "required"], value=True) or position(data, loc)


def choice_field_nodes(data: Mapping[str, Any]) -> Iterator[tuple[str, Mapping[str, Any], list[Any]]]:
    """Each choice field (an enum, a boolean, a number) of a schema file's data: its path
    (`verdicts[].verdict`), its schema and where that is written."""
    return _fields(data, data.get("$defs") or data.get("definitions") or {}, "", [])


def _fields(node: Any, definitions: Mapping[str, Any], path: str, loc: list[Any]) -> Iterator[tuple[str, Mapping[str, Any], list[Any]]]:
    if not isinstance(node, Mapping):
        return
    if isinstance(node.get("$ref"), str):
        name = node["$ref"].rsplit("/", 1)[-1]
        key = "$defs" if "$defs" in node.get("$ref", "") else "definitions"
        yield from _fields(definitions.get(name), definitions, path, [key, name])
        return
    for option_index, option in enumerate(node.get("anyOf") or []):
        if isinstance(option, Mapping) and option.get("type") != "null":
            yield from _fields(option, definitions, path, [*loc, "anyOf", option_index])
    kind = node.get("type")
    if "enum" in node or kind in ("boolean", "number", "integer"):
        yield path, node, loc
    elif kind == "object":
        for key, child in (node.get("properties") or {}).items():
            yield from _fields(child, definitions, f"{path}.{key}" if path else str(key), [*loc, "properties", key])
    elif kind == "array":
        yield from _fields(node.get("items"), definitions, f"{path}[]", [*loc, "items"])


def declared_meaning(node: Mapping[str, Any], data: Any, loc: list[Any]) -> Meaning | None:
    """The meaning a field declares (checked at load by answers.py, so well formed here)."""
    written = node.get("meaning")
    place = position(data, [*loc, "meaning"])
    if isinstance(written, str) and written in NUMBER_MEANINGS:
        return Meaning(better="higher" if written == "higher_is_better" else "lower", place=place, ends=number_ends(node))
    if not isinstance(written, Mapping):
        return None
    values = list(node.get("enum") or ([False, True] if node.get("type") == "boolean" else []))
    polarities: dict[Any, Polarity] = {matching_value(key, values): polarity for key, polarity in written.items() if polarity in POLARITIES}
    return Meaning(polarities={key: polarity for key, polarity in polarities.items() if polarity in POLARITIES}, place=place)


def matching_value(key: Any, values: Sequence[Any]) -> Any:
    """The enum value a key of `meaning:` names. YAML reads an unquoted yes/no as true/false:
    such a key names the enum's "yes"/"no" when the enum has no booleans."""
    if key in values:
        return key
    if isinstance(key, bool) and not any(isinstance(value, bool) for value in values):
        for word in (("yes", "true", "on") if key else ("no", "false", "off")):
            if word in values:
                return word
    return key


def _read_meaning(node: Mapping[str, Any], data: Any, loc: list[Any]) -> Meaning | None:
    """A meaning read from the values' own words, else from the description's clause about
    each value; None unless some value reads good and another bad."""
    values = list(node.get("enum") or ([True, False] if node.get("type") == "boolean" else []))
    description = str(node.get("description") or "")
    if not values and node.get("type") in ("integer", "number"):
        return _read_number_meaning(node, description, data, loc)
    if not values:
        return None
    polarities: dict[Any, Polarity] = {}
    evidence: list[str] = []
    for value in values:
        polarity = _value_polarity(value)
        clause = _clause_about(value, description, [other for other in values if other != value]) if polarity is None else None
        if clause is not None:
            polarity = _polarity_of_words(clause)
            if polarity is not None:
                evidence.append(f"{_quoted(value)}: {clause.strip(' ,:;(')}")
        if polarity is not None:
            polarities[value] = polarity
    if set(values) == {True, False} and len(polarities) == 1:
        # A yes-or-no field whose description says what one value means ("true when the context
        # does not support the claim, false when it does"): the other means the opposite.
        [(said, polarity)] = polarities.items()
        if polarity in ("good", "bad"):
            polarities[not said] = "good" if polarity == "bad" else "bad"
    if "good" not in polarities.values() or "bad" not in polarities.values():
        return None
    place = position(data, [*loc, "description"]) if description else position(data, [*loc, "enum"])
    return Meaning(polarities=polarities, declared=False, place=place, evidence="; ".join(evidence))


def _read_number_meaning(node: Mapping[str, Any], description: str, data: Any, loc: list[Any]) -> Meaning | None:
    """Which way a rating is better, read from what its description says of its two ends:
    "from 1 (perfectly clear) to 5 (impossible to follow)" is lower-is-better."""
    ends = number_ends(node)
    read = scale_read(description, ends) if ends is not None else None
    if read is None:
        return None
    return Meaning(better=read[0], declared=False, place=position(data, [*loc, "description"]), evidence=description.strip(), ends=ends)


def number_ends(node: Mapping[str, Any]) -> tuple[float, float] | None:
    """A number field's least and greatest values, when the schema bounds both."""
    least, greatest = node.get("minimum"), node.get("maximum")
    if isinstance(least, bool) or isinstance(greatest, bool) or not isinstance(least, (int, float)) or not isinstance(greatest, (int, float)):
        return None
    return float(least), float(greatest)


def scale_read(text: str, ends: tuple[float, float], one_end: bool = False) -> tuple[Literal["higher", "lower"], int] | None:
    """Which end of a scale from `ends[0]` to `ends[1]` a text calls good, by the words it ties
    to each (`1 (rude)`, `5 = very polite`, `1: perfectly clear`), and where it ties words to
    the least; None unless one end reads good and the other bad (or, with `one_end`, one end
    reads good or bad and the other says nothing)."""
    said: list[tuple[Polarity | None, int]] = []
    for end in ends:
        shown = f"{end:g}"
        tied = re.finditer(rf"(?<![\w.]){re.escape(shown)}(?![\d.])[ \t]*(?:\(([^)\n]*)\)|(?:=|:|means|is|for|[-–—](?=\s))[ \t]*(?![ \t\d])((?:(?!\s(?:and|or|while|whereas)\s+-?\d)[^,;.()\n])+))", text)
        read = ((_polarity_of_words(found.group(1) or found.group(2)), found.start()) for found in tied)
        said.append(next((pair for pair in read if pair[0] is not None), (None, 0)))
    (low, where), (high, high_where) = said
    where = where if low is not None else high_where
    # With `one_end` (a prompt telling the judge how to rate), one end tied to words that say
    # good or bad and the other to words that say nothing ("5 means it is hard to understand",
    # "1 means a native speaker wrote it"): the other end is the opposite.
    if one_end and low is None and high in ("good", "bad"):
        low = "bad" if high == "good" else "good"
    if one_end and high is None and low in ("good", "bad"):
        high = "bad" if low == "good" else "good"
    if {low, high} != {"good", "bad"}:
        return None
    return ("higher" if high == "good" else "lower"), where


def _quoted(value: Any) -> str:
    return f'"{value}"' if isinstance(value, str) else str(value).lower()


def _value_polarity(value: Any) -> Polarity | None:
    if not isinstance(value, str):
        return None
    word = value.strip().lower()
    if word in _VALUE_ALIASES:
        return _VALUE_ALIASES[word]
    if word in ("yes", "no", "true", "false"):
        return None
    return _polarity_of_words(word.replace("_", " ").replace("-", " "))


def value_clauses(node: Mapping[str, Any]) -> dict[Any, str]:
    """What a choice field's description says of each of its values that it names."""
    values = list(node.get("enum") or ([True, False] if node.get("type") == "boolean" else []))
    description = str(node.get("description") or "")
    said = {value: _clause_about(value, description, [other for other in values if other != value]) for value in values}
    return {value: clause.strip(" ,:;(") for value, clause in said.items() if clause}


def _clause_about(value: Any, description: str, others: Sequence[Any] = ()) -> str | None:
    """What the description says of `value`: the words after `"value" when|if|means|:` up to
    the next value (`true when it strays, false when it helps`) or the end of the sentence."""
    word = _word(value)
    quoted = rf"[\"'`]{re.escape(word)}[\"'`]\s*(?:when|if|means|meaning|for|=|:|-|–|—)?\s*([^\"'`;.]*)"
    bare = rf"\b{re.escape(word)}\s+(?:when|if|means)\s+([^\"'`;.]*)"
    found = re.search(quoted, description, re.IGNORECASE) or re.search(bare, description, re.IGNORECASE)
    if found is None or not found.group(1):
        return None
    # An aside in brackets lists examples ("contact details, addresses"), whose words are no verdict.
    clause = re.sub(r"\s*\([^()]*\)", "", found.group(1))
    for other in others:
        clause = re.split(rf"[,\s]+(?:and\s+|or\s+|but\s+)?\b{re.escape(_word(other))}\b\s*(?:when|if|means|for|=|:)", clause, maxsplit=1, flags=re.IGNORECASE)[0]
    return clause or None


def _word(value: Any) -> str:
    """A value as a description writes it: booleans in lower case."""
    return str(value).lower() if isinstance(value, bool) else str(value)


#: One of two responses compared, by its place: the first is the one a pairwise score counts as 1.
_SIDE = r"(?P<{0}>first|second|response[ _]?[12]|output[ _]?[12])"
#: A side said to win (`the first response is better`, `the second beats the first`), or to lose
#: (`beats the first`, `better than the second`).
_WINS = re.compile(_SIDE.format("winner") + r"(?:\s+(?:one|response|output|answer))?\s+(?:is\s+|was\s+)?(?:better|wins|beats|outperforms|preferred|superior)\b")
_LOSES = re.compile(r"\b(?:beats|outperforms|better than|preferred over|superior to)\s+(?:the\s+)?" + _SIDE.format("loser"))


def _winner_polarity(lowered: str) -> Polarity | None:
    """good where the words say the first of two responses wins, bad where the second does
    (a pairwise verdict's description); None where they name no winner, or both."""
    sides = {_side(found["winner"]) for found in _WINS.finditer(lowered)} | {1 - _side(found["loser"]) for found in _LOSES.finditer(lowered)}
    return ("good" if sides == {0} else "bad") if len(sides) == 1 else None


def _side(word: str) -> int:
    return 0 if word == "first" or word.endswith("1") else 1


def _polarity_of_words(text: str) -> Polarity | None:
    """good or bad by the words of `text`, a negation turning the next words around; None
    when the words say nothing or both."""
    lowered = text.lower()
    won = _winner_polarity(lowered)
    if won is not None:
        return won
    for phrase, word in _PHRASES.items():
        lowered = lowered.replace(phrase, word)
    tokens = [_singular(token) for token in re.findall(r"[a-zß-öø-ÿ'_-]+", lowered)]
    score = 0
    negated = False
    for index, token in enumerate(tokens):
        if token in _NEGATIONS:
            negated = True
            continue
        if token in _NEW_CLAUSE:
            negated = False  # "arguments that change nothing are fine": the negation was the verb's before it
            continue
        sign = 1 if token in _GOOD_WORDS else -1 if token in _BAD_WORDS else 0
        if token.startswith(("un", "in", "ir", "not_", "non")) and sign == 0:
            stem = token.removeprefix("not_").removeprefix("non").removeprefix("un").removeprefix("in").removeprefix("ir")
            sign = -1 if stem in _GOOD_WORDS else 0
        if sign > 0 and set(tokens[index + 1:index + 3]) & _ELSEWHERE:
            sign = -sign  # "answers a different question" does not answer this one
        if sign:
            score += -sign if negated else sign
            negated = False
    if score > 0:
        return "good"
    if score < 0:
        return "bad"
    return None


def _singular(token: str) -> str:
    """A plural of a word of the table as that word ("hallucinations"), and an adverb made
    of one ("accurately", "faithfully")."""
    if token in _KNOWN_WORDS:
        return token
    if token.endswith("s") and token[:-1] in _KNOWN_WORDS:
        return token[:-1]
    if token.endswith("ly") and token[:-2] in _KNOWN_WORDS:
        return token[:-2]
    return token


def polarity_of_words(text: str) -> Polarity | None:
    """good or bad by the words of `text` (a prompt's definition of a value), None when they
    say nothing or both: the reading of a description's clause, for other checks."""
    return _polarity_of_words(text)
