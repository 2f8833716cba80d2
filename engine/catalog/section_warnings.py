"""The warnings of a catalog's sections beside its scorers (`queues:`, `monitors:`, `traces:`),
each held to the scorers it names; a section's module is loaded only when it is written, so a
catalog of scorers alone pays for none of them. A new section's warnings join here."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ..errors import ConfigError
from .source import CatalogSource

if TYPE_CHECKING:
    from ..scoring.plan import ScorerPlan


def section_warnings(source: CatalogSource, plan_of: Callable[[str], ScorerPlan | None]) -> list[ConfigError]:
    """What the queues, monitors and traces a catalog file writes would do otherwise than meant."""
    found: list[ConfigError] = []
    if source.data.get("queues") is not None:
        from .queue_fields import choices_not_values, fields_hidden, instructions_against_meaning, text_not_what_is_judged

        found += [*fields_hidden(source, plan_of), *choices_not_values(source, plan_of), *text_not_what_is_judged(source, plan_of), *instructions_against_meaning(source)]
    if source.data.get("monitors") is not None:
        from .monitors import monitor_warnings

        found += monitor_warnings(source.data, source.path, plan_of)
    if source.data.get("traces") is not None:
        from .traces import trace_warnings

        found += trace_warnings(source.data, source.path, plan_of)
    return found
