"""What a prompt really shows: a template's statements walked in order, with Jinja's own
scoping rules, so that a name is known where it is read as rendering will find it.

- A `{% for %}` (and a `{% with %}`, a macro, a block, a filter or call block) keeps the names
  set inside it: the loop's variable read after `{% endfor %}` is not defined (an error), and
  a `{% set %}` inside a loop of a name set before it changes only the loop's own copy, so
  the name read after the loop still holds what it held before (a warning: the classic
  counter that stays 0).
- An `{% if %}` keeps nothing: a name set in some of its branches only is set after it only
  when one of those branches ran; read where it may not be set, rendering fails for the items
  that take the other way (a warning), unless the same test guards the reading.
- A value that may be none (an input the scorer does not require, an answer field its schema
  does not require) printed without a test shows the judge 'None' (or 'null').
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from jinja2 import nodes

from ..scoring.shapes import ANY, TEXT, ListOf, Shape
from .findings import loose_pattern, name_pattern, path_of, written
from .names import NameChecker, declared_in, family

#: Keys of `local` holding what the walk knows of a name beside its shape (see `_Note`).
_MAYBE, _GONE, _REBOUND = "\x01maybe\x00", "\x01gone\x00", "\x01rebound\x00"
#: Where a note's message names the line that reads the name, filled in there.
_READ_AT = "\x01read\x00"
#: Filters after which a value that is none no longer shows as 'None'.
_DEFAULTS = {"default", "d"}


@dataclass(frozen=True)
class _Note(Shape):
    """What the walk knows of a name at this point: set only on some ways here (`_MAYBE`:
    `condition` is the test under which it is, written out), set only inside a scope that
    has ended (`_GONE`), or set inside a loop that kept its own copy (`_REBOUND`)."""

    why: str = ""
    shape: Shape = ANY
    condition: str | None = None
    #: Where the name was set, when the slip is there rather than where it is read.
    line: int | None = None


class TemplateChecker(NameChecker):
    """A NameChecker that also walks a template's statements in order (see the module)."""

    def template(self, parsed: nodes.Template, local: Mapping[str, Shape] | None = None) -> None:
        """Walks a template; `local`: what is known where it renders (a `skip_if` that did not hold)."""
        self._stored = declared_in(parsed)
        self._sets: list[dict[str, int]] = [{}]
        self.statements(parsed.body, dict(local or {}))

    # -- names, as the walk knows them

    def name(self, node: nodes.Name, local: Mapping[str, Shape]) -> Shape:
        rebound = local.get(_REBOUND + node.name)
        if isinstance(rebound, _Note) and node.name in local:
            # Said where the name is set inside the loop: that `{% set %}` is the line to change.
            set_at = nodes.Name(node.name, "store", lineno=rebound.line or node.lineno)
            self.warn(set_at, "set-in-loop", f"{node.name!r} {rebound.why.replace(_READ_AT, str(node.lineno))}", name_pattern(node.name))
        return super().name(node, local)

    def unknown(self, node: nodes.Name, name: str, local: Mapping[str, Shape]) -> Shape:
        maybe, gone = local.get(_MAYBE + name), local.get(_GONE + name)
        if isinstance(maybe, _Note):
            self.warn(node, "maybe-undefined", f"{name!r} {maybe.why}: where it is not, rendering fails; set it before, or read it under the same test", name_pattern(name))
            return maybe.shape
        if isinstance(gone, _Note):
            self.report(node, f"{name!r} {gone.why}: here it is not defined, and rendering fails", name_pattern(name))
            return gone.shape
        return super().unknown(node, name, local)

    # -- statements

    def statements(self, body: Sequence[nodes.Node], local: dict[str, Shape]) -> None:
        for node in body:
            self.statement(node, local)

    def statement(self, node: nodes.Node, local: dict[str, Shape]) -> None:
        if isinstance(node, nodes.For):
            self.loop(node, local)
        elif isinstance(node, nodes.If):
            self.branches(node, local)
        elif isinstance(node, nodes.Macro):
            self.set(node.name, ANY, local, node.lineno)
            inner = {**local, "varargs": ANY, "kwargs": ANY, "caller": ANY, **{argument.name: ANY for argument in node.args}}
            for default in node.defaults:
                self.infer(default, local)
            # A macro reads the template's names when it is called: any set in the template.
            before, self._declared = self._declared, self._declared | self._stored
            self.scoped(node.body, inner, "the macro", node.lineno, local)
            self._declared = before
        elif isinstance(node, nodes.CallBlock):
            self.infer(node.call, local)
            self.scoped(node.body, {**local, **{argument.name: ANY for argument in node.args}}, "the call block", node.lineno, local)
        elif isinstance(node, nodes.Assign):
            self.bind(node.target, self.infer(node.node, local), local, node.lineno)
        elif isinstance(node, nodes.AssignBlock):
            self.statements(node.body, local)
            self.bind(node.target, TEXT, local, node.lineno)
        elif isinstance(node, nodes.Import):
            self.set(node.target, ANY, local, node.lineno)
        elif isinstance(node, nodes.FromImport):
            for name in node.names:
                self.set(name if isinstance(name, str) else name[1], ANY, local, node.lineno)
        elif isinstance(node, nodes.With):
            inner = dict(local)
            self._sets.append({})
            for target, value in zip(node.targets, node.values):
                self.bind(target, self.infer(value, local), inner, node.lineno)
            targets = self._sets.pop()
            assigned = self.scoped(node.body, inner, "`{% with %}`", node.lineno, local)
            for name in targets.keys() - assigned.keys():
                if name not in local and name not in self.scope.names:
                    local[_GONE + name] = _Note(why=f"is set only inside `{{% with %}}` at line {node.lineno}", shape=inner.get(name, ANY))
        elif isinstance(node, (nodes.FilterBlock, nodes.Block)):
            if isinstance(node, nodes.FilterBlock):
                self.infer(node.filter, local)
            what = "`{% filter %}`" if isinstance(node, nodes.FilterBlock) else "the block"
            self.scoped(node.body, dict(local), what, node.lineno, local)
        elif isinstance(node, (nodes.Include, nodes.Extends)):
            return
        elif isinstance(node, nodes.Output):
            for printed in node.nodes:
                if not isinstance(printed, nodes.TemplateData):
                    self.shown(printed, local)
        elif isinstance(node, nodes.Expr) and not isinstance(node, nodes.Stmt):
            self.infer(node, local)
        else:
            for child in node.iter_child_nodes():
                self.statement(child, local)

    def bind(self, target: nodes.Node, shape: Shape, local: dict[str, Shape], line: int) -> None:
        if isinstance(target, nodes.Name):
            self.set(target.name, shape, local, line)
        elif isinstance(target, nodes.Tuple):
            for item in target.items:
                self.bind(item, ANY, local, line)
        elif isinstance(target, nodes.NSRef):
            local.setdefault(target.name, ANY)

    def set(self, name: str, shape: Shape, local: dict[str, Shape], line: int) -> None:
        local[name] = shape
        for prefix in (_MAYBE, _GONE, _REBOUND):
            local.pop(prefix + name, None)
        self._sets[-1][name] = line

    def scoped(self, body: Sequence[nodes.Node], inner: dict[str, Shape], what: str, line: int, outer: dict[str, Shape] | None = None) -> dict[str, int]:
        """Walks statements that keep what they set (a loop's body, a macro's, ...); the names
        they set that `outer` does not have are marked as gone from it."""
        self._sets.append({})
        self.statements(body, inner)
        assigned = self._sets.pop()
        for name, set_at in assigned.items():
            if outer is not None and name not in outer and name not in self.scope.names:
                outer[_GONE + name] = _Note(why=f"is set only inside {what} at line {line} (line {set_at})", shape=inner.get(name, ANY))
        return assigned

    def loop(self, node: nodes.For, local: dict[str, Shape]) -> None:
        listed = self.infer(node.iter, local)
        if family(listed) == "number":
            self.report(node.iter, f"{written(node.iter) or 'this'} is {listed.describe()}: `{{% for %}}` needs a list, so rendering fails", None)
        elif family(listed) == "text":
            self.over_text(node.iter, "`{% for %}`", rf"\bin\s+({loose_pattern(written(node.iter) or '')})")
        inner = self.narrow(node.iter, local, True)  # inside the loop, the list has items
        inner["loop"] = ANY
        self._sets.append({})
        self.bind(node.target, listed.item if isinstance(listed, ListOf) else ANY, inner, node.lineno)
        targets = self._sets.pop()
        if node.test is not None:
            self.infer(node.test, inner)
            inner = self.narrow(node.test, inner, True)
        assigned = {**targets, **self.scoped(node.body, inner, "the `{% for %}`", node.lineno)}
        for name, set_at in assigned.items():
            if name in local and name not in targets:
                local[_REBOUND + name] = _Note(
                    why=f"is set inside the `{{% for %}}` at line {node.lineno}, which changes only the loop's own copy: read after the loop "
                    f"(line {_READ_AT}), it still holds what it held before; keep a count in a namespace (`{{% set ns = namespace({name}=...) %}}`, then `ns.{name}`)",
                    line=set_at,
                )
            elif name not in local and name not in self.scope.names:
                at = f" (line {set_at})" if set_at != node.lineno else ""
                local[_GONE + name] = _Note(why=f"is set only inside the `{{% for %}}` at line {node.lineno}{at}", shape=inner.get(name, ANY))
        self.scoped(node.else_, dict(local), "the `{% else %}` of the `{% for %}`", node.lineno, local)

    def branches(self, node: nodes.If, local: dict[str, Shape]) -> None:
        """An `{% if %}` and its `{% elif %}`s and `{% else %}`: what each sets, merged."""
        tests: list[nodes.Node] = [node.test, *(branch.test for branch in node.elif_)]
        bodies: list[Sequence[nodes.Node]] = [node.body, *(branch.body for branch in node.elif_)]
        results: list[tuple[dict[str, Shape], dict[str, int]]] = []
        before = dict(local)
        for test, body in zip(tests, bodies):
            self.infer(test, before)
            inner = self._known_under(test, self.narrow(test, before, True), True)
            self._sets.append({})
            self.statements(body, inner)
            results.append((inner, self._sets.pop()))
            before = self._known_under(test, self.narrow(test, before, False), False)
        self._sets.append({})
        self.statements(node.else_, before)
        results.append((before, self._sets.pop()))
        everywhere = set.intersection(*(set(assigned) for _, assigned in results))
        first_test = written(node.test) or "..."
        for name in set().union(*(assigned for _, assigned in results)):
            shapes = [inner[name] for inner, assigned in results if name in assigned]
            shape = shapes[0]
            for other in shapes[1:]:
                shape = shape.join(other)
            line = min(assigned[name] for _, assigned in results if name in assigned)
            if name in everywhere:
                self.set(name, shape, local, line)
            elif name in local:  # set before: after the `{% if %}` it is one or the other
                self.set(name, local[name].join(shape), local, line)
            else:
                holds = len(tests) == 1 and name in results[0][1]
                local[_MAYBE + name] = _Note(
                    why=f"is set only when `{{% if {first_test} %}}` at line {node.lineno} {'holds' if holds else 'takes some of its ways'} (line {line})",
                    shape=shape, condition=first_test if holds else None,
                )

    def _known_under(self, test: nodes.Node, local: dict[str, Shape], truthy: bool) -> dict[str, Shape]:
        """Names set only under a test are set where the same test holds again."""
        text = written(test)
        if truthy and text is not None:
            for key, note in list(local.items()):
                if key.startswith(_MAYBE) and isinstance(note, _Note) and note.condition == text:
                    local[key.removeprefix(_MAYBE)] = note.shape
                    del local[key]
        return local

    def shown(self, node: nodes.Node, local: Mapping[str, Shape]) -> None:
        """A value printed into the prompt: what may be none shows as 'None' (or 'null')."""
        self.infer(node, local)
        base: nodes.Node = node
        filters: list[str] = []
        while isinstance(base, nodes.Filter) and base.node is not None and base.name not in _DEFAULTS:
            filters.append(base.name)
            base = base.node
        if isinstance(base, nodes.Filter) or path_of(base) is None:
            return
        shape = self.quietly(base, local)
        if shape.nullable:
            path = path_of(base)
            shows = "null" if {"json", "untrusted"} & set(filters) else "None"
            self.may_be_none(base, f"the judge then reads {shows!r} in the prompt", f"{{% if {path} %}}")
