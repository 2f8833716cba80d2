"""What a run gives every step of a scorer, as the load-time checks see it: the shapes of the
run's variables, the fields an item may come without unless the scorer requires them."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from ..scoring.shapes import ANY, NUMBER, TEXT, ListOf, Record, Shape, shape_of
from ..scoring.transcripts import ToolCall, ToolResult
from .spec import RUN_VARIABLES

#: What the run gives every step, whatever the scorer.
RUN_NAMES: dict[str, Shape] = {
    "output": TEXT,
    "input": TEXT,
    "ground_truth": TEXT,
    "context": ListOf(TEXT),
    "messages": ListOf(ANY),
    "tool_calls": ListOf(shape_of(ToolCall, "a tool call")),
    "tool_results": ListOf(shape_of(ToolResult, "a tool result")),
    "turns": ListOf(
        Record(
            {"turn": NUMBER, "role": TEXT, "text": TEXT, "tool_calls": ListOf(shape_of(ToolCall, "a tool call")), "tool_results": ListOf(shape_of(ToolResult, "a tool result"))},
            "a turn",
        )
    ),
    "expected_trajectory": ListOf(ANY),
    "metadata": ANY,
}
# A run variable added to the spec without a shape here is still known (its fields are not).
RUN_NAMES.update({name: ANY for name in RUN_VARIABLES if name not in RUN_NAMES and name != "options"})
#: Run fields an item may come without, unless the scorer requires them.
_OPTIONAL_FIELDS = ("input", "ground_truth", "turns", "expected_trajectory")


def run_names(requires: Sequence[str]) -> dict[str, Shape]:
    """What the run gives a scorer that requires `requires`: the others may be none."""
    return {**RUN_NAMES, **{name: dataclasses.replace(RUN_NAMES[name], nullable=True) for name in _OPTIONAL_FIELDS if name not in requires}}
