"""Where a step's context comes from, first match wins: the scorer's `get_context(run,
step)`, the context given for this run, the scorer's static context, and (for scorers that
say so) the tool results in the scored transcript."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Any, Union

from ..errors import NotScorable, RunInputError, ScorerError
from ..formatting import one_line, to_json
from .results import Run
from .transcripts import tool_result_context

ContextList = list[str]
#: `get_context(run=..., step=...)`, sync or async, returning the context strings.
GetContext = Callable[..., Union[ContextList, Awaitable[ContextList]]]


def context_strings(value: Any, where: str) -> ContextList:
    """Context pieces as strings: structured pieces (tool results, records) become their JSON."""
    if not isinstance(value, (list, tuple)):
        raise RunInputError(f"{where} must be a list of strings, got {type(value).__name__}")
    return [item if isinstance(item, str) else to_json(item) for item in value]


class ContextSources:
    """The context sources of one scorer, consulted per step."""

    def __init__(self, scorer_id: str, static: ContextList | None, get_context: GetContext | None, from_tool_results: bool, required: bool) -> None:
        self.scorer_id = scorer_id
        self.static = static
        self.get_context = get_context
        self.from_tool_results = from_tool_results
        self.required = required

    async def resolve(self, step_id: str, run: Run, run_context: ContextList | None, get_context: GetContext | None = None) -> ContextList:
        """The context for `step_id`. `get_context` given here (for this run) wins over the
        scorer's own. A scorer that needs a context does not judge against an empty one."""
        context = await self._found(step_id, run, run_context, get_context)
        if self.required and not any(piece.strip() for piece in context):
            source = "get_context gave" if (get_context or self.get_context) is not None else "the context given is"
            raise NotScorable(f"{self.scorer_id} needs a context, and {source} {'only blank text' if context else 'an empty list'}: there is nothing to judge against")
        return context

    async def _found(self, step_id: str, run: Run, run_context: ContextList | None, get_context: GetContext | None) -> ContextList:
        getter = get_context or self.get_context
        if getter is not None:
            try:
                value = getter(run=run, step=step_id)
                if inspect.isawaitable(value):
                    value = await value
            except ScorerError:
                raise
            except Exception as exc:
                raise RunInputError(f"get_context failed in step {step_id!r}: {one_line(exc)}") from exc
            return context_strings(value, "get_context's result")
        if run_context is not None:
            return run_context
        if self.static is not None:
            return self.static
        if self.from_tool_results:
            from_tools = tool_result_context(run.output)
            if from_tools:
                return from_tools
        if self.required:
            raise NotScorable(f"{self.scorer_id} needs a context", parameter="context")
        return []
