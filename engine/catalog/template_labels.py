"""A label in a prompt over another field of the item: a block headed `Reply:` that shows `{{
input }}`, copied from the block above and left unchanged. The judge reads the question where
it is told the reply is, never sees the reply, and judges something else than the scorer says;
nothing fails. A warning at the expression, for the author's own templates.

A label is a line holding only words (`Reply:`, `## Reply`, `Expected answer (reference):`)
or words and then the expression (`Reply: {{ output }}`); it is read only when all its words
are one of the labels below, so that a sentence ending with a colon is never taken for one.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from pathlib import Path

from .source import Place

#: The labels authors write over each field of an item: data, read by `labels_against_fields`.
LABELS: Mapping[str, frozenset[str]] = {
    "input": frozenset({"question", "input", "query", "user question", "user input", "user message", "user query", "request", "user request", "prompt", "user prompt"}),
    "output": frozenset({
        "reply", "answer", "response", "output", "completion", "ai output", "ai response", "ai answer", "assistant reply", "assistant response",
        "assistant answer", "actual output", "model output", "model response", "generated answer", "generated output", "candidate answer",
    }),
    "context": frozenset({"context", "document", "documents", "passage", "passages", "sources", "retrieved context", "retrieval context", "retrieved documents", "retrieved passages", "context pieces"}),
    "ground_truth": frozenset({
        "expected", "expected answer", "expected output", "expected response", "reference", "reference answer", "ground truth", "gold answer",
        "ideal answer", "correct answer",
    }),
    "turns": frozenset({"conversation", "dialogue", "transcript", "turns"}),
    "tool_calls": frozenset({"tool calls", "tools called"}),
}
_FIELD_OF_LABEL = {label: field for field, labels in LABELS.items() for label in labels}
_LABEL = re.compile(r"^\s*(?:#{1,6}\s*)?(?:\*\*)?(?P<label>[A-Za-z][A-Za-z' ]{0,40}?)(?:\s*\([^()]*\))?(?:\*\*)?\s*(?P<colon>:)?(?:\*\*)?\s*(?P<rest>{{.*)?$")
#: The item field an expression shows first: `{{ input | ... }}`, `{{ blocks.context_pieces(context) }}`.
_SHOWN = re.compile(r"{{-?\s*(?:\w+\.\w+\(\s*)?(?P<field>\w+)\b")


def labels_against_fields(path: Path, text: str) -> Iterator[tuple[str, Place]]:
    """Each expression showing an item field under a label of another field: the message and
    where the expression is."""
    lines = text.splitlines()
    for index, line in enumerate(lines):
        found = _LABEL.match(line)
        if found is None or not (found["colon"] or line.lstrip().startswith("#")):
            continue
        label = re.sub(r"^(?:the|a|an)\s+", "", " ".join(found["label"].lower().replace("'s ", " ").split()))
        meant = _FIELD_OF_LABEL.get(label)
        if meant is None:
            continue
        number, shown = (index, found["rest"]) if found["rest"] else next(
            ((later, lines[later]) for later in range(index + 1, len(lines)) if lines[later].strip()), (index, "")
        )
        expression = _SHOWN.match(shown.lstrip())
        field = expression["field"] if expression is not None else None
        if field is None or field == meant or field not in LABELS:
            continue
        column = shown.index("{{") + 1
        yield (
            f"the block labelled {found['label'].strip()!r} (line {index + 1}) shows `{field}`, not `{meant}`: the judge reads the item's {field} "
            f"as the {label} and never sees the {meant} there; show `{meant}`, or label the block for the {field}",
            Place(str(path), number + 1, column),
        )
