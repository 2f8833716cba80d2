"""The warnings of a catalog's sections beside its scorers (`queues:`, `monitors:`, `traces:`),
each held to the scorers it names; a section's module is loaded only when it is written, so a
catalog of scorers alone pays for none of them. A new section's warnings join here."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING

from ..errors import ConfigError
from .source import CatalogSource, position
from .warning import CatalogWarning

if TYPE_CHECKING:
    from ..scoring.plan import ScorerPlan


def section_warnings(source: CatalogSource, plan_of: Callable[[str], ScorerPlan | None]) -> list[ConfigError]:
    """What the queues, monitors and traces a catalog file writes would do otherwise than meant."""
    found: list[ConfigError] = [*named_for_another_scorer(source), *labelling_another_step(source, plan_of)]
    if source.data.get("queues") is not None:
        from .queue_fields import choices_not_values, fields_hidden, flagging_against_pass_line, instructions_against_meaning, text_not_what_is_judged

        found += [*fields_hidden(source, plan_of), *choices_not_values(source, plan_of), *text_not_what_is_judged(source, plan_of), *instructions_against_meaning(source)]
        found += flagging_against_pass_line(source, plan_of)
        found += _settings_held(source, "queues")
    if source.data.get("monitors") is not None:
        from .monitors import monitor_warnings

        found += monitor_warnings(source.data, source.path, plan_of)
    if source.data.get("traces") is not None:
        from .traces import trace_warnings

        found += trace_warnings(source.data, source.path, plan_of)
    return found


#: Words of an entry's name that say what it does, not what it watches.
_DOING = frozenset("review reviews queue monitor alert alerts rising falling drop drops drift drifts low high rate check checks no not watch the of and".split())


def _words(name: str) -> frozenset[str]:
    return frozenset(re.sub(r"(?:ing|ed|es|s)$", "", word) for word in re.split(r"[-_\s.]+", name.lower()) if len(word) > 2 and word not in _DOING)


def named_for_another_scorer(source: CatalogSource) -> Iterator[ConfigError]:
    """A monitor or queue whose name speaks of another scorer of the catalog than the one it
    names (`secret_leaked` watching `code-in-fences` beside `no-leaked-secrets`): copied from
    its neighbour, it watches or labels what its name does not say; and, where the catalog
    scores traces, a live monitor of a scorer its `traces:` section never runs."""
    traces = source.data.get("traces")
    live = {str(name) for kind in ("llm", "agent") for name in (((traces.get(kind) or {}).get("scorers") or []) if isinstance(traces, Mapping) and isinstance(traces.get(kind), Mapping) else [])}
    for section in ("monitors", "queues"):
        entries = source.data.get(section)
        for name, entry in entries.items() if isinstance(entries, Mapping) else ():
            scorer = str(entry.get("scorer", "")).split("@", 1)[0] if isinstance(entry, Mapping) else ""
            place = position(entries, [name, "scorer"], value=True)
            if not scorer or place is None:
                continue
            said = _words(str(name))
            others = [other for other in source.scorers if other != scorer and len(said & _words(other)) >= min(2, len(_words(other)))]
            if said and not said & _words(scorer) and len(others) == 1:
                yield CatalogWarning(
                    f"{section}.{name}.scorer: {scorer}, but the name speaks of {others[0]}, another scorer of this catalog: copied from "
                    f"its neighbour, it {'watches' if section == 'monitors' else 'labels'} what its name does not say; name {others[0]}",
                    *place, code="named-for-another-scorer",
                )
            elif scorer not in source.scorers and not said & _words(scorer) and len(extending := [own for own, written in source.scorers.items() if isinstance(written, Mapping) and written.get("extends") == scorer]) == 1:
                yield CatalogWarning(
                    f"{section}.{name}.scorer: {scorer} is the base that {extending[0]}, this catalog's scorer, extends: outcomes are kept under the "
                    f"scorer that ran, so it {'watches' if section == 'monitors' else 'labels'} the base's, never {extending[0]}'s; name {extending[0]}",
                    *place, code="named-for-another-scorer",
                )
            elif section == "monitors" and live and scorer not in live and entry.get("source", "live") == "live":
                yield CatalogWarning(
                    f"monitors.{name}.scorer: {scorer} is not among the scorers the `traces:` section runs live ({', '.join(sorted(live))}): "
                    f"the monitor reads live outcomes of {scorer}, which this catalog never makes; watch one of those",
                    *place, code="named-for-another-scorer",
                )


def _settings_held(source: CatalogSource, section: str) -> list[ConfigError]:
    """The warnings of the rows of setting_rules.py that a section's settings fail on their own
    (a queue's `labels_per_item` against its comment); their problems are the section's module's."""
    from .setting_checks import held

    entries = source.data.get(section)
    found: list[ConfigError] = []
    for name, written in entries.items() if isinstance(entries, Mapping) else ():
        for each in held(f"{section}.*", f"{section}.{name}", written, {}):
            place = position(entries, [name, *each.loc], value=True)
            if each.code is not None and place is not None:
                found.append(CatalogWarning(each.message, *place, code=each.code))
    return found


def labelling_another_step(source: CatalogSource, plan_of: Callable[[str], ScorerPlan | None]) -> Iterator[ConfigError]:
    """A queue whose name speaks of one step of its scorer while its `steps.answers` reads
    another's (`delivery-review` labelling `policy.verdicts` beside a `delivery` step): copied
    from the queue of the other step, people label answers their instructions are not about,
    and their agreement is measured against the wrong verdicts."""
    queues = source.data.get("queues")
    for name, queue in queues.items() if isinstance(queues, Mapping) else ():
        written = queue.get("steps") if isinstance(queue, Mapping) else None
        answers = written.get("answers") if isinstance(written, Mapping) else None
        plan = plan_of(str(queue.get("scorer", "")).split("@", 1)[0]) if isinstance(answers, str) else None
        if plan is None or not isinstance(answers, str):
            continue
        read = answers.split(".", 1)[0]
        said = _words(str(name)) - _words(str(queue.get("scorer", "")))  # the words naming the scorer say no step
        judged = [step.id for step in plan.steps if step.id != read and step.id != "score" and len(said & _words(step.id)) >= min(2, len(_words(step.id)))]
        place = position(queues, [name, "steps", "answers"], value=True)
        if len(judged) == 1 and not said & _words(read) and place is not None:
            yield CatalogWarning(
                f"queues.{name}.steps.answers: {answers}, but the queue's name speaks of {judged[0]}, another step of {queue.get('scorer')}: "
                f"copied from its neighbour, it has people label the {read} step's answers; did you mean {judged[0]}{answers[len(read):]}?",
                *place, code="named-for-another-step",
            )
