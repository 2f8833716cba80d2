"""What a judge's prompt shows of the item: a prompt that shows one piece of the item's
context (`context[0]`, `context | first`) and never the rest has the judge decide without the
others, so a claim the second piece supports is judged unsupported. Named at the piece. And a
prompt that shows part of a list (`preprocess.claims[:5]`) whose every item the step's bounds
ask an answer for: the judge answers for items it was never shown. Named at the slice. And a
loop over a list that prints the list itself at each turn (`{% for passage in context %}[{{
loop.index }}] {{ context }}`): every numbered piece shows them all. Named at the print.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from jinja2 import TemplateSyntaxError, nodes

from ..errors import ConfigError
from .findings import path_of
from .templates import PromptTemplates
from .warning import CatalogWarning

#: The item's lists whose every piece is evidence the judge weighs (a conversation's last
#: turn alone may be what a judge is meant to read; one retrieved passage alone never is).
_LISTS = frozenset({"context"})
#: Filters that read a list without showing it (`context | length`).
_COUNTING = frozenset({"length", "count"})


#: A template that a step's prompt renders or that sees its variables: its name, file, text and tree.
SharedTree = tuple[str, Path, str, nodes.Template]


def shared_trees(templates: PromptTemplates, names: list[str]) -> list[SharedTree]:
    """The templates `names` reach (see `sharing`), parsed once for every check of what a
    prompt shows; none when one cannot be read or parsed, which the compiler reports."""
    try:
        return sharing(templates, names)
    except (ConfigError, TemplateSyntaxError):
        return []


def one_piece_shown(trees: list[SharedTree], own_folder: Path, label: str) -> Iterator[ConfigError]:
    """A warning at each piece of an item's list that the templates `trees` show alone,
    when none of them shows the whole list."""
    pieces = [(path, text, found) for _, path, text, tree in trees for found in _pieces(tree)]
    if not pieces:
        return
    whole = {field for *_, tree in trees for field in _shown_whole(tree)}
    for path, text, (field, written, line) in pieces:
        if field in whole or not _is_own(path, own_folder):
            continue
        yield _warning(
            f"{label}: the prompt shows {written}, one piece of the item's `{field}`, and never the others: the judge decides without them, "
            f"so what only another piece holds is judged missing; show every piece (`{{% for piece in {field} %}}`)",
            path, text, line, rf"\b({re.escape(field)})\b",
        )


def part_of_a_counted_list(trees: list[SharedTree], own_folder: Path, counted: frozenset[str], label: str) -> Iterator[ConfigError]:
    """A warning at each slice (`LIST[:5]`) of a list in `counted` (those the step's bounds ask
    one answer per item of) in the templates `trees`, when none of them loops over the whole
    list."""
    looped = {path_of(loop.iter) for *_, tree in trees for loop in tree.find_all(nodes.For)}
    for _, path, text, tree in trees:
        if not _is_own(path, own_folder):
            continue
        for node in tree.find_all(nodes.Getitem):
            listed = path_of(node.node)
            if not isinstance(node.arg, nodes.Slice) or listed not in counted or listed in looped:
                continue
            yield _warning(
                f"{label}: the prompt shows a slice of `{listed}`, whose every item the step's bounds ask an answer for: the judge answers "
                f"for items it was never shown; show the whole list (`{{% for item in {listed} %}}`), or bound the answers by the slice",
                path, text, node.lineno, rf"\b({re.escape(listed)})\s*\[",
            )


def list_in_its_own_loop(trees: list[SharedTree], own_folder: Path, label: str) -> Iterator[ConfigError]:
    """A warning at each print, inside `{% for ITEM in LIST %}`, of LIST itself (its length
    aside), in the author's templates among `trees`."""
    for _, path, text, tree in trees:
        if not _is_own(path, own_folder):
            continue
        for loop in tree.find_all(nodes.For):
            listed, item = path_of(loop.iter), loop.target.name if isinstance(loop.target, nodes.Name) else None
            if listed is None or item is None:
                continue
            for output in (node for statement in loop.body for node in ([statement] if isinstance(statement, nodes.Output) else statement.find_all(nodes.Output))):
                for shown in output.nodes:
                    base = shown
                    while isinstance(base, nodes.Filter) and base.name not in _COUNTING and base.node is not None:
                        base = base.node
                    if isinstance(base, nodes.Filter) or path_of(base) != listed:
                        continue
                    yield _warning(
                        f"{label}: inside `{{% for {item} in {listed} %}}` (line {loop.lineno}), `{listed}` shows the whole list at each turn of "
                        f"the loop, so every piece it numbers shows all of them; show the piece: `{{{{ {item} }}}}`",
                        path, text, shown.lineno, rf"{{{{-?\s*({re.escape(listed)})\b",
                    )


def _is_own(path: Path, own_folder: Path) -> bool:
    """Whether a template is the author's (not the built-in catalog's, theirs only to point at)."""
    return path.resolve().is_relative_to(own_folder.resolve())


def _warning(message: str, path: Path, text: str, line: int, pattern: str, code: str = "shows-one-piece") -> CatalogWarning:
    """A warning (`shows-one-piece` unless said) at `line` of a template, at the column where
    `pattern`'s first group starts on it."""
    lines = text.splitlines()
    match = re.search(pattern, lines[line - 1]) if 0 < line <= len(lines) else None
    return CatalogWarning(message, str(path), line, match.start(1) + 1 if match else None, code=code)


def sharing(templates: PromptTemplates, names: list[str]) -> list[SharedTree]:
    """The templates `names` render and those that see their variables, parsed."""
    reached = dict.fromkeys(shared for name in names for shared in templates.referenced(name, sharing_only=True))
    return [(name, *source, templates.environment.parse(source[1])) for name in reached for source in [templates.source(name)]]


def _pieces(tree: nodes.Template) -> Iterator[tuple[str, str, int]]:
    """(field, as written, line) of each `FIELD[N]`, `FIELD | first` and `FIELD | last`."""
    for node in tree.find_all((nodes.Getitem, nodes.Filter)):
        if isinstance(node, nodes.Getitem) and isinstance(node.node, nodes.Name) and node.node.name in _LISTS and isinstance(node.arg, nodes.Const):
            yield node.node.name, f"`{node.node.name}[{node.arg.value!r}]`", node.lineno
        elif isinstance(node, nodes.Filter) and node.name in ("first", "last") and isinstance(node.node, nodes.Name) and node.node.name in _LISTS:
            yield node.node.name, f"`{node.node.name} | {node.name}`", node.lineno


def _shown_whole(tree: nodes.Template) -> Iterator[str]:
    """The item's lists a tree reads other than one piece or their length (a loop, a macro's
    argument, a join): those it shows whole, as far as a reading of the tree can tell."""
    parts: set[int] = set()
    for node in tree.find_all((nodes.Getitem, nodes.Filter)):
        inner = node.node if isinstance(node, (nodes.Getitem, nodes.Filter)) else None
        if isinstance(inner, nodes.Name) and (isinstance(node, nodes.Getitem) and isinstance(node.arg, nodes.Const) or isinstance(node, nodes.Filter) and node.name in ("first", "last", *_COUNTING)):
            parts.add(id(inner))
    for name in tree.find_all(nodes.Name):
        if name.ctx == "load" and name.name in _LISTS and id(name) not in parts:
            yield name.name


#: What follows a printed score to tell its scale: "out of 10", "/10", "on a scale of 0 to 10".
_SCALE_AFTER = re.compile(r"^\s*(?:out of|/|on a scale (?:of|from) \d+(?:\.\d+)? to)\s*(?P<top>\d+(?:\.\d+)?)\b", re.IGNORECASE)


def scale_told(trees: list[SharedTree], own_folder: Path, top: float | None, on_scale: bool, label: str) -> Iterator[ConfigError]:
    """A warning where the author's template prints `{{ score }}` and then gives its scale in
    words ("out of 10") other than `top`, the most the scorer's scores reach: a judge asked to
    explain a 0.9 "out of 10" explains a near-total failure."""
    if top is None:
        return
    for _, path, text, tree in trees:
        if not _is_own(path, own_folder):
            continue
        for output in tree.find_all(nodes.Output):
            for shown, after in zip(output.nodes, output.nodes[1:]):
                told = _SCALE_AFTER.match(after.data) if isinstance(after, nodes.TemplateData) and _prints_score(shown) else None
                if told is None or float(told["top"]) == top:
                    continue
                said = told.group(0).strip()
                write = "`out of {{ options.scale | number }}`" if on_scale else f"`out of {top:g}`"
                message = (
                    f"{label}: the prompt says the score is {said!r}, but the scores run from 0 to {top:g}"
                    f"{' (options.scale)' if on_scale else ''}: the judge explains a {top * 0.9:g}, near the best, as {top * 0.9:g} {said}; write {write}"
                )
                yield _warning(message, path, text, after.lineno, f"({re.escape(said)})", "scale-told")


def _prints_score(node: nodes.Node) -> bool:
    """Whether a printed expression is the score (`score`, `score | number`, `score | round(2)`)."""
    while isinstance(node, nodes.Filter) and node.node is not None:
        node = node.node
    return isinstance(node, nodes.Name) and node.name == "score"


#: The item's texts a step's answer may be bounded by and its prompt should then show.
_ITEM_TEXTS = ("output", "input", "context", "ground_truth", "turns", "tool_calls")


def bounded_by_unshown(trees: list[SharedTree], own_folder: Path, bounded_by: frozenset[str], label: str) -> Iterator[ConfigError]:
    """A warning where the author's prompt shows another of the item's texts than the ones the
    step's bounds read (`bounded_by`): a sentence splitter bounded by `sentences(output)` that
    is shown `input` splits the user's message, and the scorer judges what the user wrote.
    Named at the other text."""
    if not trees or not bounded_by:
        return
    read = {name.name for *_, tree in trees for name in tree.find_all(nodes.Name) if name.ctx == "load"}
    texts = [field for field in _ITEM_TEXTS if field in bounded_by]
    shown = [field for field in _ITEM_TEXTS if field in read and field not in bounded_by]
    unshown = texts if texts and not any(field in read for field in texts) else []
    if not unshown or len(shown) != 1:
        return
    for _, path, text, tree in trees:
        if not _is_own(path, own_folder):
            continue
        instead = next((name for name in tree.find_all(nodes.Name) if name.name == shown[0] and name.ctx == "load"), None)
        if instead is None:
            continue
        yield _warning(
            f"{label}: the step's bounds are worked out from `{unshown[0]}`, but its prompt shows `{shown[0]}` and never "
            f"`{unshown[0]}`: the judge answers about another text than its answer is bounded by; show `{{{{ {unshown[0]} }}}}`",
            path, text, instead.lineno, f"({re.escape(shown[0])})", "shows-other-text",
        )
        return


#: The item's texts a judge weighs as a whole; a prompt that cuts one has it judge a part.
_WHOLE_TEXTS = frozenset({"output", "input", "ground_truth"})


def text_cut_short(trees: list[SharedTree], own_folder: Path, label: str) -> Iterator[ConfigError]:
    """A warning at each `TEXT | truncate(N)` or `TEXT[:N]` of an item's text in the author's
    templates, when none of the step's templates shows that text whole: what the text says
    past the cut is never judged (a promise in a reply's last paragraph scores as none)."""
    cuts: list[tuple[Path, str, str, str, int]] = []
    whole: set[str] = set()
    for _, path, text, tree in trees:
        cut_names: set[int] = set()
        for node in tree.find_all((nodes.Filter, nodes.Getitem)):
            inner = node.node if isinstance(node, (nodes.Filter, nodes.Getitem)) else None
            if not isinstance(inner, nodes.Name) or inner.name not in _WHOLE_TEXTS:
                continue
            if isinstance(node, nodes.Filter) and node.name == "truncate":
                cut_names.add(id(inner))
                cuts.append((path, text, inner.name, "truncate", node.lineno))
            elif isinstance(node, nodes.Getitem) and isinstance(node.arg, nodes.Slice):
                cut_names.add(id(inner))
                cuts.append((path, text, inner.name, "slice", node.lineno))
            elif isinstance(node, nodes.Filter) and node.name in _COUNTING:
                cut_names.add(id(inner))
        whole |= {name.name for name in tree.find_all(nodes.Name) if name.ctx == "load" and name.name in _WHOLE_TEXTS and id(name) not in cut_names}
    for path, text, field, how, line in cuts:
        if field in whole or not _is_own(path, own_folder):
            continue
        written = f"`{field} | truncate(...)`" if how == "truncate" else f"`{field}[...]`"
        yield _warning(
            f"{label}: the prompt shows {written}, the item's `{field}` cut short, and never the whole of it: what it says past the cut "
            f"is never judged, and scores as if it were not there; show `{{{{ {field} }}}}` (the scorer's `max_input_chars:` and "
            f"`long_input:` bound what a judge is sent)",
            path, text, line, f"({re.escape(field)})", "text-cut-short",
        )


def answered_list_unshown(trees: list[SharedTree], own_folder: Path, counted: frozenset[str], label: str) -> Iterator[ConfigError]:
    """A warning where the step's bounds ask one answer per item of an earlier step's list
    (`enum: preprocess.statements`) that its prompt never shows (its length aside): the judge
    is to copy items it was never given, and judges what the prompt shows instead. Named at the
    item's text the prompt shows in its place, else at the count."""
    earlier = sorted(name for name in counted if "." in name)
    if not trees or not earlier:
        return
    counting = {id(node.node) for *_, tree in trees for node in tree.find_all(nodes.Filter) if node.name in _COUNTING}
    shown = {path_of(node) for *_, tree in trees for node in tree.find_all(nodes.Getattr) if id(node) not in counting}
    for listed in earlier:
        if listed in shown:
            continue
        for _, path, text, tree in trees:
            if not _is_own(path, own_folder):
                continue
            instead = next((name for name in tree.find_all(nodes.Name) if name.name in _ITEM_TEXTS and name.ctx == "load"), None)
            where = instead or next((node for node in tree.find_all(nodes.Getattr) if path_of(node) == listed), None)
            if where is None:
                continue
            shows = f"it shows `{instead.name}` in its place" if instead is not None else "it shows only how many there are"
            yield _warning(
                f"{label}: the step's bounds ask one answer per item of `{listed}`, but its prompt never shows them ({shows}): the judge is "
                f"to answer for items it was never given; show them (`{{% for item in {listed} %}}`)",
                path, text, where.lineno, f"({re.escape(instead.name if instead is not None else listed)})",
            )
            return
