"""One thing to score, as a single value: what the batch runner, live scoring, the pytest
plugin, the CLI and a caller in Python hand to a scorer."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any


@dataclass(frozen=True, kw_only=True)
class RunInput:
    """The output to score and what it is judged against.

    `output` (and `input`) are text or chat messages. `context` is for this run only: a
    scorer's `get_context` wins over it, and it is used before the scorer's static context.
    `turns` is a whole conversation (chat messages, tool calls included): conversation
    scorers read all of it; for the others, when `output` (or `input`) is not given, it is
    the reply after the last user message (and that message's text). `expected_trajectory`
    lists the tool calls expected (names, or `{tool_name, args}`). `metadata` (an item's own
    material: a rubric, a reference) is the `metadata` variable of every template and
    expression. `run_id` names the run in traces and in what `get_context` receives (a new
    one when not given)."""

    output: Any = None
    input: Any = None
    context: Sequence[str] | None = None
    ground_truth: Any = None
    turns: Sequence[Any] | None = None
    expected_trajectory: Sequence[Any] | None = None
    metadata: Mapping[str, Any] | None = None
    run_id: str | None = None

    def with_run_id(self, run_id: str) -> RunInput:
        return replace(self, run_id=run_id)
