"""The variables of the step whose answer is being validated (earlier step results,
options, ...), for the rules that compare an answer with earlier steps ("as many verdicts as
claims"). The scorer sets them around each judge call; the answer models built by the
catalog read them.

Kept out of Instructor's own `context=` argument on purpose: Instructor renders the messages
as Jinja templates when given a context, and our messages hold user text that must never be
rendered.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

_rule_variables: ContextVar[Mapping[str, Any] | None] = ContextVar("rule_variables", default=None)


@contextmanager
def answer_scope(variables: Mapping[str, Any]) -> Iterator[None]:
    """Make `variables` visible to the rules of answers validated inside the block."""
    token = _rule_variables.set(variables)
    try:
        yield
    finally:
        _rule_variables.reset(token)


@contextmanager
def outside_answer_scope() -> Iterator[None]:
    """Validate answers inside the block by their schema alone, as outside a run: no rule
    is enforced (for trying each rule on its own)."""
    token = _rule_variables.set(None)
    try:
        yield
    finally:
        _rule_variables.reset(token)


def current_answer_scope() -> Mapping[str, Any] | None:
    """The variables set by the innermost `answer_scope`; None outside a run (e.g. an answer
    validated at load time, with no earlier steps to compare with)."""
    return _rule_variables.get()
