"""A label in a prompt over another field of the item: a block headed `Reply:` that shows `{{
input }}`, copied from the block above and left unchanged. The judge reads the question where
it is told the reply is, never sees the reply, and judges something else than the scorer says;
nothing fails. A warning at the expression, for the author's own templates.

A label is a line holding only words (`Reply:`, `## Reply`, `Expected answer (reference):`)
or words and then the expression (`Reply: {{ output }}`); it is read only when all its words
are one of the labels below, or when it is two or three words ending in a one-word label
(`The support reply:`) none of which a sentence needs (`of`, `each`, `below` ...), so that a
sentence ending with a colon is never taken for one.

Two options a prompt shows under each other's headings ("The reply must mention:" above
`options.must_avoid` and "The reply must not contain:" above `options.must_include`) have the
judge reward what the brief forbids. A heading fits an option by the words it shares with the
option's `description:` and name; named at each option shown under the other's heading
(`swapped_headings`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, NamedTuple

from jinja2 import TemplateSyntaxError, nodes

from ..errors import ConfigError
from .source import Place
from .template_shows import sharing
from .templates import PromptTemplates
from .warning import CatalogWarning

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
        "ideal answer", "correct answer", "answer key", "mark scheme", "marking scheme",
    }),
    "turns": frozenset({"conversation", "dialogue", "transcript", "turns"}),
    "tool_calls": frozenset({"tool calls", "tools called"}),
}
#: The same labels in the languages prompts are most often written in (German, French,
#: Spanish, Italian, Portuguese), and what a summary's or a translation's scorer calls its output.
_TRANSLATED: Mapping[str, frozenset[str]] = {
    "input": frozenset("frage anfrage nachricht pregunta consulta domanda richiesta pergunta".split()),
    "output": frozenset(
        "summary translation antwort zusammenfassung übersetzung uebersetzung réponse reponse résumé traduction respuesta resumen "
        "traducción traduccion risposta riassunto traduzione resposta resumo tradução traducao".split()
    ),
    "context": frozenset("kontext contexte contexto contesto quellen fuentes fonti fontes".split()),
    "ground_truth": frozenset("referenz référence referencia riferimento referência musterlösung".split()),
}
LABELS = {field: labels | _TRANSLATED.get(field, frozenset()) for field, labels in LABELS.items()}
_FIELD_OF_LABEL = {label: field for field, labels in LABELS.items() for label in labels}
_LABEL = re.compile(r"^\s*(?:#{1,6}\s*)?(?:\*\*)?(?P<label>[A-Za-z][A-Za-z' ]{0,40}?)(?:\s*\([^()]*\))?(?:\*\*)?\s*(?P<colon>:)?(?:\*\*)?\s*(?P<rest>{{.*)?$")
#: The item field an expression shows first: `{{ input | ... }}`, `{{ blocks.context_pieces(context) }}`.
_SHOWN = re.compile(r"{{-?\s*(?:\w+\.\w+\(\s*)?(?P<field>\w+)\b")


#: An item field shown inside a tag that names what it is: `{{ output | untrusted("input") }}`.
_TAGGED = re.compile(r"{{-?\s*(?P<field>\w+)\s*\|(?:[^{}|]*\|)*\s*untrusted\(\s*[\"'](?P<tag>\w+)[\"']\s*\)")


#: Words of a sentence, not of a label: a line of them ending in a colon introduces what follows
#: ("Judge each sentence of the reply:") rather than naming it.
_SENTENCE_WORDS = frozenset("of to for with each every this that these those below above here is are be in on from by and or judge read give rate".split())


def _field_of_head_noun(label: str) -> str | None:
    """The field a short label names by its last word, one of the one-word labels (`support
    reply`, `customer question`, `retrieved sources`); None for a sentence or any other label."""
    words = label.split()
    if not 2 <= len(words) <= 3 or set(words) & _SENTENCE_WORDS:
        return None
    field = _FIELD_OF_LABEL.get(words[-1])
    return field if field is not None and words[-1] != "expected" else None


def labels_against_fields(path: Path, text: str) -> Iterator[tuple[str, Place]]:
    """Each expression showing an item field under a label of another field: the message and
    where the expression is."""
    lines = text.splitlines()
    for index, line in enumerate(lines):
        found = _LABEL.match(line)
        if found is None or not (found["colon"] or line.lstrip().startswith("#")):
            continue
        label = re.sub(r"^(?:the|a|an)\s+", "", " ".join(found["label"].lower().replace("'s ", " ").split()))
        meant = _FIELD_OF_LABEL.get(label, _field_of_head_noun(label))
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


def tags_against_fields(path: Path, text: str) -> Iterator[tuple[str, Place]]:
    """Each item field shown inside an `untrusted` tag that names another field of the item
    (`{{ output | untrusted("input") }}`): the judge is told the reply is the question."""
    for number, line in enumerate(text.splitlines(), 1):
        for found in _TAGGED.finditer(line):
            field, tag = found["field"], found["tag"]
            meant = tag if tag in LABELS else _FIELD_OF_LABEL.get(tag.replace("_", " "))
            if field not in LABELS or meant is None or meant == field:
                continue
            unseen = "" if re.search(rf"[{{(\s]{meant}\b", text) else f" and never sees the {meant}"
            yield (
                f"`{field}` is shown inside the tag <{tag}>, which names the item's {meant}: the judge reads the {field} as the {meant}"
                f"{unseen}; show `{meant}` there, or tag the block for the {field}",
                Place(str(path), number, found.start() + 1),
            )


#: Words that say nothing about which value a heading introduces.
_FILLER = frozenset(
    "the a an of these this that each any every to is are be in for and or it its with below above following here all "
    "as on by from at one per list item items point points".split()
)
#: The longest line read as a heading.
_HEADING_WORDS = 14


class _Shown(NamedTuple):
    what: str  # `options.NAME`
    heading: str
    line: int
    path: Path


def _words(text: str) -> set[str]:
    return {word for word in re.findall(r"[a-z]+", text.lower()) if word not in _FILLER}


def _subject(node: nodes.Node) -> str | None:
    """The option an expression shows (`options.NAME`), through its filters."""
    while isinstance(node, nodes.Filter) and node.node is not None:
        node = node.node
    if isinstance(node, nodes.Getattr) and isinstance(node.node, nodes.Name) and node.node.name == "options":
        return f"options.{node.attr}"
    return None


def _shown(tree: nodes.Node, path: Path) -> Iterator[_Shown]:
    """Each value a template shows, with the line of text just above it."""
    text: list[str] = []

    def walk(node: nodes.Node) -> Iterator[_Shown]:
        if isinstance(node, nodes.TemplateData):
            text.append(node.data)
            return
        if isinstance(node, nodes.For):
            yield from seen(node.iter, node.lineno)
            for child in node.body:
                yield from walk(child)
            return
        if isinstance(node, nodes.Output):
            for child in node.nodes:
                if isinstance(child, nodes.TemplateData):
                    text.append(child.data)
                else:
                    yield from seen(child, child.lineno)
            return
        for child in node.iter_child_nodes():
            yield from walk(child)

    def seen(expression: nodes.Node, line: int) -> Iterator[_Shown]:
        what = _subject(expression)
        lines = [line for line in "".join(text).splitlines() if line.strip()]
        text.clear()
        heading = lines[-1].strip() if lines else ""
        if what is not None and heading and len(heading.split()) <= _HEADING_WORDS:
            yield _Shown(what, heading, line, path)

    yield from walk(tree)


def swapped_headings(templates: PromptTemplates, own_folder: Path, names: list[str], options: Mapping[str, Any], label: str) -> Iterator[ConfigError]:
    """A warning at each value the templates `names` show under the heading of another value
    they show, whose own heading fits the first."""
    try:
        trees = sharing(templates, names)
    except (ConfigError, TemplateSyntaxError):
        return  # reported by the compiler
    shown = [found for _, path, _, tree in trees for found in _shown(tree, path)]
    texts = {path: text.splitlines() for _, path, text, _ in trees}
    described = {what: _described(what, options) for what in {found.what for found in shown}}

    def fit(heading: str, what: str) -> int:
        return len(_words(heading) & described[what])

    for found in shown:
        for other in shown:
            if other.what == found.what or not found.path.resolve().is_relative_to(own_folder.resolve()):
                continue
            if fit(found.heading, other.what) > fit(found.heading, found.what) and fit(other.heading, found.what) > fit(other.heading, other.what):
                yield CatalogWarning(
                    f"{label}: `{found.what}` is shown under {found.heading!r}, which describes `{other.what}`, and `{other.what}` under "
                    f"{other.heading!r} (line {other.line}), which describes `{found.what}`: the judge reads each under the other's heading; swap them",
                    str(found.path), found.line, _column(texts[found.path], found), code="shown-under-another-heading",
                )
                break


def _described(what: str, options: Mapping[str, Any]) -> set[str]:
    name = what.removeprefix("options.")
    declaration = options.get(name)
    description = str(declaration.get("description") or "") if isinstance(declaration, Mapping) else ""
    return _words(f"{name.replace('_', ' ')} {description}")


def _column(lines: list[str], found: _Shown) -> int | None:
    written = lines[found.line - 1] if 0 < found.line <= len(lines) else ""
    match = re.search(rf"\b{re.escape(found.what.removeprefix('options.'))}\b", written)
    return match.start() + 1 - (len("options.") if match.start() >= len("options.") else 0) if match else None


#: The words a prompt labels a conversation's turns with, by the role they name.
_ROLE_WORDS: Mapping[str, frozenset[str]] = {
    "assistant": frozenset({"assistant", "agent", "bot", "ai", "model"}),
    "user": frozenset({"user", "customer", "client", "caller"}),
}
_ROLE_OF_WORD = {word: role for role, words in _ROLE_WORDS.items() for word in words}
_ROLE_WORD = re.compile(rf"\b({'|'.join(sorted(_ROLE_OF_WORD))})s?\b", re.IGNORECASE)


def turns_under_one_role(path: Path, text: str, tree: nodes.Template) -> Iterator[tuple[str, Place]]:
    """A loop over a conversation's `turns` that labels each turn with one role's word
    ("Agent:", "assistant:") without reading the turn's own `role`: the other side's messages
    are shown as that role's, and the judge weighs what the customer wrote as the agent's. And
    a loop keeping only one role's turns (`if turn.role == 'user'`) that labels them as the
    other role's. Named at the label."""
    for loop in tree.find_all(nodes.For):
        item = loop.target.name if isinstance(loop.target, nodes.Name) else None
        if item is None or not isinstance(loop.iter, nodes.Name) or loop.iter.name != "turns":
            continue
        kept = _role_kept(loop.test, item) if loop.test is not None else None
        reads_role = any(
            isinstance(node.node, nodes.Name) and node.node.name == item and node.attr == "role"
            for statement in loop.body for node in [statement, *statement.find_all(nodes.Getattr)] if isinstance(node, nodes.Getattr)
        )
        labels = [(data, found) for statement in loop.body for data in [statement, *statement.find_all(nodes.TemplateData)]
                  if isinstance(data, nodes.TemplateData) for found in _ROLE_WORD.finditer(data.data)]
        roles = {_ROLE_OF_WORD[found[1].lower()] for _, found in labels}
        other = next((role for role in _roles_compared(loop.body, item) if role != kept), None) if kept is not None and reads_role else None
        if other is not None:
            yield (
                f"the loop over `turns` keeps only the turns whose role is {kept!r}, yet its body tells {other!r} turns apart from them: "
                f"the {other}'s messages never reach the judge; keep every turn (drop the `if`), or the role the rule is about",
                Place(str(path), loop.lineno, 1),
            )
            continue
        if reads_role or len(roles) != 1 or (kept is not None and kept in roles):
            continue
        data, found = labels[0]
        line = data.lineno + data.data[: found.start()].count("\n")
        written = found[0]
        if kept is not None:
            message = (f"the loop over `turns` (line {loop.lineno}) keeps only the turns whose role is {kept!r} but labels each {written!r}: "
                       f"the judge reads the {kept}'s messages as written by the {written.lower()}; keep the turns the label names")
        else:
            message = (f"the loop over `turns` (line {loop.lineno}) labels every turn {written!r}, whatever its role: the judge reads the other side's "
                       f"messages as written by the {written.lower()}; label each turn with its role (`{{{{ {item}.role }}}}`), or keep only that role's turns")
        lines = text.splitlines()
        column = lines[line - 1].find(written) + 1 if 0 < line <= len(lines) else 1
        yield message, Place(str(path), line, max(column, 1))


def _roles_compared(body: list[nodes.Node], item: str) -> Iterator[str]:
    """The roles a loop's body compares `ITEM.role` with (`"student" if turn.role == "user"`)."""
    for statement in body:
        for test in statement.find_all(nodes.Compare):
            kept = _role_kept(test, item)
            if kept is not None:
                yield kept


def _role_kept(test: nodes.Node, item: str) -> str | None:
    """The role a loop's `if ITEM.role == 'x'` keeps."""
    if isinstance(test, nodes.Compare) and len(test.ops) == 1 and test.ops[0].op == "eq" and isinstance(test.ops[0].expr, nodes.Const):
        side = test.expr
        if isinstance(side, nodes.Getattr) and side.attr == "role" and isinstance(side.node, nodes.Name) and side.node.name == item:
            value = test.ops[0].expr.value
            return _ROLE_OF_WORD.get(str(value).lower(), str(value))
    return None
