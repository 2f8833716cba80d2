"""From a `RunInput` to what a scorer's steps read: the input checked (transcripts, the
fields the scorer requires, an empty output, lengths), the `Run` that `get_context` sees,
and the variables of every template and expression."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Any

from ..errors import NotScorable, RunInputError
from ..formatting import plain, to_json
from .context import ContextList
from .plan import ScorerPlan
from .results import Run
from .run_input import RunInput
from .transcripts import (
    as_messages,
    assistant_text,
    conversation_turns,
    empty_output,
    extract_tool_calls,
    extract_tool_results,
    role_text,
    split_conversation,
)

logger = logging.getLogger("engine.scoring")


def prepared_run(plan: ScorerPlan, given: RunInput) -> Run:
    """The run as the steps and `get_context` see it (`given.run_id` is set); refuses what
    cannot be scored, and input longer than the scorer takes."""
    output, input, turns = given.output, given.input, given.turns  # noqa: A001 - the run's own names
    if turns is not None:
        if not isinstance(turns, (list, tuple)):
            raise RunInputError(f"{plan.id}: `turns` must be a list of chat messages, got {type(turns).__name__}")
        last_input, last_reply = split_conversation(list(turns))
        output = last_reply if output is None else output
        input = last_input if input is None else input  # noqa: A001
    if given.expected_trajectory is not None and not isinstance(given.expected_trajectory, (list, tuple)):
        raise RunInputError(f"{plan.id}: `expected_trajectory` must be a list of tool names or {{tool_name, args}} objects")
    for field, value in (("output", output), ("input", input)):
        _check_transcript(field, value)
    present = {"output": output, "input": input, "ground_truth": given.ground_truth, "turns": turns, "expected_trajectory": given.expected_trajectory}
    for field, value in present.items():
        if field in plan.requires and value is None:
            raise NotScorable(f"{plan.id} needs `{field}` for every run", parameter=field)
    output_text = assistant_text(output)
    if "output" in plan.requires and plan.empty_output == "not_scorable":
        # A judge given nothing finds nothing wrong in it: the best score of many scorers.
        empty = empty_output(output, output_text)
        if empty is not None:
            raise NotScorable(f"{plan.id}: the output is {empty}: there is nothing to judge")
    assert given.run_id is not None
    return Run(
        run_id=given.run_id,
        output=output,
        input=input,
        ground_truth=given.ground_truth,
        output_text=within_limit(plan, "output", output_text),
        input_text=within_limit(plan, "input", role_text(input, "user")) if input is not None else None,
        turns=turns,
        expected_trajectory=given.expected_trajectory,
    )


def run_variables(run: Run, given: RunInput, options: Mapping[str, Any]) -> dict[str, Any]:
    """The variables every template and expression of the run reads, before any step's."""
    ground_truth, expected_trajectory = run.ground_truth, run.expected_trajectory
    return {
        "output": run.output_text,
        "input": run.input_text,
        "ground_truth": ground_truth if ground_truth is None or isinstance(ground_truth, str) else to_json(ground_truth),
        "options": dict(options),
        "messages": plain(as_messages(run.output)),
        "tool_calls": extract_tool_calls(run.output),
        "tool_results": extract_tool_results(run.output),
        "turns": conversation_turns(run.turns) if run.turns is not None else None,
        "expected_trajectory": plain(list(expected_trajectory)) if expected_trajectory is not None else None,
        "metadata": plain(dict(given.metadata or {})),
    }


def within_limit(plan: ScorerPlan, field: str, text: str) -> str:
    """`text`, when it is within the scorer's `max_input_chars`; else refused, or cut with a
    warning, as the scorer's `long_input` says."""
    limit = plan.max_input_chars
    if len(text) <= limit:
        return text
    if plan.long_input == "refuse":
        raise RunInputError(
            f"{plan.id}: the {field} is {len(text):,} characters, over max_input_chars ({limit:,}); raise `judge: "
            "max_input_chars:` (max_input_chars= in Python) or set `judge: long_input: truncate`"
        )
    logger.warning("%s: the %s is %s characters; only the first %s are judged (judge: max_input_chars)", plan.id, field, f"{len(text):,}", f"{limit:,}")
    return text[:limit]


def context_within_limit(plan: ScorerPlan, context: ContextList) -> ContextList:
    """The context within `max_input_chars`, all pieces together."""
    total = sum(len(piece) for piece in context)
    if total <= plan.max_input_chars:
        return context
    kept = within_limit(plan, "context", "\n".join(context))  # refuses, or warns and cuts
    pieces: ContextList = []
    for piece in context:  # whole pieces as far as they fit, then the start of the next
        room = len(kept) - sum(len(item) + 1 for item in pieces)
        if room <= 0:
            break
        pieces.append(piece[:room])
    return pieces


def _check_transcript(field: str, value: Any) -> None:
    """Structured values must be chat messages: anything else would be judged as an empty
    text and get the best score of a scorer that finds nothing wrong in nothing."""
    if value is None or isinstance(value, str):
        return
    messages = [value] if isinstance(value, Mapping) else value if isinstance(value, (list, tuple)) else None
    if messages is None:
        raise RunInputError(f"the {field} must be text or chat messages, got {type(value).__name__}")
    bad = next((message for message in messages if not isinstance(message, Mapping) or not isinstance(message.get("role"), str)), None)
    if bad is not None or (isinstance(value, Mapping) and not messages):
        shown = json.dumps(bad, default=str)[:80] if bad is not None else "{}"
        raise RunInputError(
            f"the {field} is not a chat transcript (a list of messages with a `role`, e.g. "
            f'[{{"role": "assistant", "content": "..."}}]); found {shown}'
        )
