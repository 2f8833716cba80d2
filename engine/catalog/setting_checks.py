"""Each written setting held to its row of setting_rules.py, at its own line: a scorer's
once it is compiled (what its scores run, what its steps answer, are known then), a
monitor's and a queue's when their section is read.

What a relation needs to know of the setting's owner is a fact, worked out here and only
when a relation asks for it.
"""

from __future__ import annotations

import functools
import itertools
import math
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from jinja2 import TemplateSyntaxError, nodes

from .schema_limits import CHARACTERS_PER_TOKEN, least_answer, least_tokens
from .setting_relations import Found, Unit
from .setting_rules import RULES, rules_under
from .source import Place, builtin_catalog_path, position
from .templates import parse_expression

if TYPE_CHECKING:
    from ..scoring.plan import ScorerPlan, StepPlan
    from ..scoring.preview import AskedBounds

#: A fact of a setting's owner, from where the setting is written (its keys below the owner).
Fact = Callable[[tuple[Any, ...]], Any]


class Held(NamedTuple):
    """A setting that fails its row: where it is written, its message, its warning code."""

    loc: tuple[Any, ...]
    message: str
    code: str | None


class _Written(NamedTuple):
    label: str
    value: Any
    unit: Unit
    parent: Any
    facts: Mapping[str, Fact]
    loc: tuple[Any, ...]

    def sibling(self, name: str) -> Any:
        return self.parent.get(name) if isinstance(self.parent, Mapping) else None

    def comment(self) -> str:
        return comment_at(self.parent, self.loc[-1])

    def fact(self, name: str) -> Any:
        found = self.facts.get(name)
        return found(self.loc) if found is not None else None


def comment_at(parent: Any, key: Any) -> str:
    """The comment after the setting `key` of `parent` on its line, then those on the lines just
    above it at its indentation (`# gpt-4o reads 128k tokens` over `max_input_chars: 120000`)."""
    place = position(parent, [key])
    if place is None or place.line is None:
        return ""
    lines = file_lines(place.file)
    if not 0 < place.line <= len(lines):
        return ""
    line = lines[place.line - 1]
    found = re.search(r"\s#\s*(.*)$", line)
    said = [found.group(1).strip()] if found else []
    indent = len(line) - len(line.lstrip())
    above = place.line - 2
    while above >= 0 and (comment := re.fullmatch(rf" {{{indent}}}#\s*(.*)", lines[above])) is not None:
        said.insert(1 if found else 0, comment.group(1).strip())
        above -= 1
    return " ".join(said)


def block_said(data: Any, key: Any, header: bool = False) -> str:
    """What the author says of the entry `key` of `data` (a monitor): its name, words apart,
    the comments just above it and every comment inside its block; with `header`, the
    comments that open the file too (what a catalog says of the app it scores)."""
    place = position(data, [key])
    name = re.sub(r"[_-]+", " ", str(key))
    lines = file_lines(place.file) if place is not None else []
    if place is None or place.line is None or not 0 < place.line <= len(lines):
        return name
    first = place.line - 1
    indent = len(lines[first]) - len(lines[first].lstrip())
    while first > 0 and lines[first - 1].strip().startswith("#"):
        first -= 1
    said: list[str] = []
    if header:
        said += [line.lstrip("# ").strip() for line in itertools.takewhile(lambda line: line.startswith("#") or not line.strip(), lines) if line.strip()]
    for index in range(first, min(len(lines), place.line + 200)):
        line = lines[index]
        if index >= place.line and line.strip() and not line.lstrip().startswith("#") and len(line) - len(line.lstrip()) <= indent:
            break  # the next entry
        found = re.search(r"(?:^|\s)#\s*(.*)$", line)
        said += [found.group(1).strip()] if found else []
    return "; ".join([name, " ".join(said)] if said else [name])


def file_lines(file: str | None) -> list[str]:
    """A catalog file's lines, read once for every setting written in it (again once it changes)."""
    try:
        path = Path(file or "")
        return _lines_of(str(path), path.stat().st_mtime_ns)
    except OSError:
        return []


@functools.lru_cache(maxsize=64)
def _lines_of(path: str, modified: int) -> list[str]:
    try:
        return Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return []


def _written(data: Any, parts: Sequence[str], loc: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], Any, Any]]:
    """Every value written along `parts` (`*`: every key or item), with its keys and the
    mapping holding it."""
    head, rest = parts[0], parts[1:]
    if head == "*":
        keys: list[Any] = list(data) if isinstance(data, Mapping) else list(range(len(data))) if isinstance(data, list) else []
    else:
        keys = [head] if isinstance(data, Mapping) and head in data else []
    for key in keys:
        value = data[key]
        if value is None:
            continue
        if rest:
            yield from _written(value, rest, (*loc, key))
        else:
            yield (*loc, key), value, data


def written_settings(prefix: str, data: Any, unit: Unit) -> Iterator[tuple[tuple[Any, ...], Any]]:
    """Every setting of `unit` under `prefix` written in `data` (the owner's mapping), with its keys."""
    start = f"{prefix}."
    for rule in RULES:
        if rule.unit is unit and rule.path.startswith(start):
            for loc, value, _ in _written(data, rule.path[len(start) :].split(".")):
                yield loc, value


def written_expressions(data: Any, holding: str) -> Iterator[tuple[tuple[Any, ...], str, nodes.Expr]]:
    """Every expression a scorer in `data` writes whose text holds `holding` (a quick test
    before parsing), with its keys, parsed; one that does not parse is left to the compiler,
    which names it."""
    for loc, value in written_settings("scorers.*", data, Unit.EXPRESSION):
        if not isinstance(value, str) or holding not in value:
            continue
        try:
            yield loc, value, parse_expression(value)
        except TemplateSyntaxError:
            continue


def _named(data: Any, loc: Sequence[Any]) -> str:
    """`loc` as a message names it: a list's item by its `id` when it has one."""
    parts, node = [], data
    for part in loc:
        node = node[part] if isinstance(node, (Mapping, list)) else None
        parts.append(str(node["id"]) if isinstance(part, int) and isinstance(node, Mapping) and "id" in node else str(part))
    return ".".join(parts)


def held(prefix: str, label: str, data: Any, facts: Mapping[str, Fact]) -> list[Held]:
    """What the settings under `prefix` (a row's path up to the owner, `scorers.*`) written
    in `data` (the owner's mapping, named `label`) fail of their rows."""
    found: list[Held] = []
    for parts, rule in rules_under(prefix):
        for loc, value, parent in _written(data, parts):
            name = f"{label}.{_named(data, loc)}"
            setting = _Written(name, value, rule.unit, parent, facts, loc)
            for relation in rule.relations:
                result: Found | None = relation.check(setting)
                if result is not None:
                    found.append(Held((*loc, *result.at), f"{name}: {result.message}", result.code))
    return found


# -- a scorer's facts


def scorer_facts(plan: ScorerPlan, raw: Any, score_range: Callable[[], tuple[float, float] | None]) -> dict[str, Fact]:
    """What a scorer's settings are held to: the range of its scores (`score_range`, worked
    out when a relation asks), its pass line, the temperature its judge samples at, the
    shortest answer each judge step accepts."""
    span = functools.cache(score_range)

    def threshold(_: tuple[Any, ...]) -> float | None:
        found = span()
        return plan.threshold if plan.threshold is not None else (found[0] + found[1]) / 2 if found else None

    temperatures = [step.sampling.temperature for step in plan.steps if step.sampling is not None]
    # Read by two relations of each max_tokens (the least answer), and by every max_tokens of
    # the scorer (the sample item's bounds): worked out once.
    least = functools.cache(lambda loc: _least_answer(plan, raw, loc))
    asked = functools.cache(lambda: _sample_bounds(plan))
    return {
        "score_range": lambda _: span(),
        "scores": lambda _: f"{plan.id}'s scores",
        "scale_said": lambda _: " (the `scale` option)" if plan.on_scale else "",
        "threshold": threshold,
        "own_threshold": lambda _: plan.threshold,
        "scorer_description": lambda _: raw.get("description") if isinstance(raw, Mapping) else None,
        "no_probabilities": lambda _: _gives_no_probabilities(plan.judge_defaults.model if isinstance(plan.judge_defaults.model, str) else None),
        "temperature": lambda _: max(temperatures) if temperatures else None,
        "judge_model": lambda _: plan.judge_defaults.model,
        "direction": lambda _: plan.direction,
        "samples": lambda _: _most_samples(raw),
        "inherited": lambda loc: _in_builtin(position(raw, list(loc))),
        "least_answer": least,
        "sample_answer": lambda loc: _sample_answer(asked(), raw, loc),
    }


def _gives_no_probabilities(model: str | None) -> str | None:
    """Why a judge returns no token log-probabilities (Claude, OpenAI's reasoning models), or None."""
    from ..judge.capabilities import is_reasoning_family
    from ..judge.config import PROVIDERS

    provider = PROVIDERS.get((model or "").split("/", 1)[0])
    if provider is not None and provider.adapter == "anthropic":
        return f"{model} (Claude) returns no log-probabilities of its answer"
    return f"{model}, a reasoning model, returns no log-probabilities of its answer" if model and is_reasoning_family(model) else None


def _in_builtin(place: Place | None) -> bool:
    """Whether a setting is written in the built-in catalog (a base the author extends)."""
    return place is not None and place.file is not None and Path(place.file).resolve() == builtin_catalog_path().resolve()


def _most_samples(raw: Any) -> tuple[float, str] | None:
    """The most samples of its judge the scorer asks for, and the setting that asks."""
    written: list[tuple[Any, str]] = []
    if isinstance(raw, Mapping):
        for section, key in (("cascade", "samples"), ("judge", "confidence_samples")):
            part = raw.get(section)
            written.append((part.get(key) if isinstance(part, Mapping) else None, f"{section}.{key}"))
    numbers = [(float(value), where) for value, where in written if isinstance(value, (int, float)) and not isinstance(value, bool)]
    return max(numbers) if numbers else None


def _limited_steps(raw: Any, loc: tuple[Any, ...]) -> set[Any]:
    """The ids of the steps a `max_tokens` written at `loc` limits: a step's own, or the
    scorer's for the steps that set none of their own."""
    steps = raw.get("steps") if isinstance(raw, Mapping) else None
    written = [step for step in steps if isinstance(step, Mapping)] if isinstance(steps, list) else []
    if loc[0] == "steps":
        return {written[loc[1]].get("id")} if loc[1] < len(written) else set()
    return {step.get("id") for step in written if not (isinstance(step.get("judge"), Mapping) and step["judge"].get("max_tokens") is not None)}


def _sample_bounds(plan: ScorerPlan) -> list[AskedBounds] | None:
    """What each judged step asks for on the sample item (an output of two sentences), or None
    when the scorer cannot run on it."""
    from ..errors import ConfigError, NotScorable
    from ..scoring.preview import sample_bounds  # the scorer's runner, loaded only when a max_tokens is written

    try:
        return sample_bounds(plan)
    except (ConfigError, NotScorable, ValueError):
        return None  # an abstract scorer (its options decide the bounds), or a step no answer at its bounds passes (said elsewhere)


def _sample_answer(asked: list[AskedBounds] | None, raw: Any, loc: tuple[Any, ...]) -> tuple[int, list[str], str] | None:
    """The most tokens the longest answer takes that the bounds of a step a `max_tokens` at
    `loc` limits allow for the sample item, with those bounds and the step: what a judge that
    writes each text out needs."""
    ids = _limited_steps(raw, loc)
    sized = [(math.ceil(step.answer_characters / CHARACTERS_PER_TOKEN), step.bounds, step.step) for step in asked or [] if step.step in ids and step.answer_characters is not None]
    return max(sized, key=lambda found: found[0]) if sized else None


def _least_answer(plan: ScorerPlan, raw: Any, loc: tuple[Any, ...]) -> tuple[int, int, list[str], str] | None:
    """The longest of the shortest answers the steps a `max_tokens` written at `loc` limits
    accept."""
    ids = _limited_steps(raw, loc)
    longest: tuple[int, int, list[str], str] | None = None
    for step in plan.steps:
        if step.id in ids and step.answer_model is not None and step.sampling is not None:
            answer, long = least_answer(step.answer_model, least_items(step))
            tokens = least_tokens(answer)
            if longest is None or tokens > longest[0]:
                longest = (tokens, len(answer), long, step.id)
    return longest


def first_problem(found: Sequence[Held], data: Any) -> tuple[str, Place | None] | None:
    """The first of `found` that is a problem (a section of its own stops at it), with its place in `data`."""
    for each in found:
        if each.code is None:
            return each.message, position(data, list(each.loc), value=True)
    return None


def least_items(plan: StepPlan) -> dict[str, int]:
    """The least count of each list a step's `bounds:` demand, where it is written as a number
    (`verdicts: {min_items: 30}`): an answer holds at least that many items."""
    found: dict[str, int] = {}
    for bound in getattr(plan, "bounds", ()):
        if bound.keyword in ("items", "min_items") and isinstance(bound.value, (int, float)) and not isinstance(bound.value, bool):
            found[bound.path] = max(found.get(bound.path, 0), int(bound.value))
    return found
