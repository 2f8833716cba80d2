"""A review queue that hides from its reviewers a field its scorer's judge reads: people told
to label the judge's answers (each claim against the context, say) decide without what the
judge saw, so their labels measure a guess against it. Named at the queue's `show:`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping

from ..errors import ConfigError
from ..scoring.plan import ScorerPlan
from .source import CatalogSource, position
from .warning import CatalogWarning

#: The item's fields a queue may show but need not: metadata may hold a label.
_NEVER_NEEDED = frozenset({"metadata"})


def fields_hidden(source: CatalogSource, plan_of: Callable[[str], ScorerPlan | None]) -> Iterator[ConfigError]:
    """A warning at each queue's written `show:` that leaves out a field of the item that
    the judge steps of its scorer read."""
    from .queues import FIELDS

    queues = source.data.get("queues")
    for name, queue in queues.items() if isinstance(queues, Mapping) else ():
        shown = queue.get("show") if isinstance(queue, Mapping) else None
        plan = plan_of(str(queue.get("scorer", ""))) if isinstance(shown, list) else None
        if plan is None or not isinstance(shown, list):
            continue
        judged = [step for step in plan.steps if step.sampling is not None]
        hidden = [field for field in FIELDS if field not in shown and field not in _NEVER_NEEDED and any(field in step.reads for step in judged)]
        if not hidden:
            continue
        readers = [step.id for step in judged if hidden[0] in step.reads]
        steps = f"step{'s' if len(readers) > 1 else ''} {', '.join(readers)}"
        place = position(queues, [name, "show"], value=True)
        yield CatalogWarning(
            f"queues.{name}.show: leaves out {', '.join(f'`{field}`' for field in hidden)}, which {plan.id}'s judge reads ({steps}): "
            f"reviewers labelling its answers decide without what the judge saw; add {'it' if len(hidden) == 1 else 'them'} to `show:`",
            *(place or (str(source.path), None, None)), code="queue-hides-field",
        )
