"""Checks every expression and template against what exists at that point of a scorer,
before any judge is called, and works out what each expression gives.

Names: earlier steps and the fields of their answers, the fields of list items inside
`where`, options, the run's inputs. A misspelt name, a field the schema does not have, a
later step's result, a string compared with an enum that can never produce it: each is a
finding with the place of the mistake and, when one is close, the name meant.

Types and ranges: what a name holds is a `Shape`, read from the answer models (pydantic)
and the options model, with the bounds of their schemas (see `scoring/shapes.py`); the
shape of an expression follows from its parts (operations.py, and `scoring/ranges.py` for
the arithmetic), and what cannot be meant is found there. A test narrows what it tests for
the code it guards (`a / n if n else 0`), as a step's `skip_if` does for the rest of the step.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping
from dataclasses import replace
from typing import Any

from jinja2 import TemplateSyntaxError, nodes
from jinja2.sandbox import ImmutableSandboxedEnvironment

from ..scoring import ranges
from ..scoring.shapes import ANY, BOOLEAN, NUMBER, TEXT, Boolean, ListOf, Number, Record, Scope, Shape, Text, shape_of
from .findings import Finding, Severity, attribute_pattern, name_pattern, path_of, string_pattern, written
from .operations import ARITHMETIC, FACT, Operations, family
from .suggest import did_you_mean
from .syntax import syntax_finding
from .templates import parse_expression

# The shapes are imported from here by the catalog's other checks.
__all__ = [
    "ANY", "BOOLEAN", "NUMBER", "TEXT", "Boolean", "Finding", "ListOf", "NameChecker", "Number", "Record", "Scope", "Shape", "Text",
    "family", "referenced_templates", "shape_of", "syntax_finding",
]

#: Methods a mapping answers to in expressions (`{...}.get(item.verdict, 0)`, `options.items()`).
_MAPPING_METHODS = {"get", "items", "keys", "values"}
_LIST_METHODS = {"index", "count"}
#: Names Jinja itself gives templates.
IMPLICIT_NAMES = {"loop", "self", "super", "caller", "varargs", "kwargs"}
#: Attributes the sandbox refuses beside those starting with `_`.
_UNSAFE_ATTRIBUTES = {"mro", "func_globals", "func_code", "gi_frame", "gi_code", "cr_frame", "cr_code", "ag_code", "ag_frame", "f_globals", "f_locals"}

@functools.lru_cache(maxsize=1024)  # by tree: a partial is checked for every step that includes it
def declared_in(parsed: nodes.Template) -> frozenset[str]:
    """The names a template sets, takes as parameters or defines as macros."""
    stored = {node.name for node in parsed.find_all(nodes.Name) if node.ctx in ("store", "param")}
    return frozenset(stored | {node.name for node in parsed.find_all(nodes.Macro)})


#: Shapes read from a scope, stamped with where they come from (by the shape read, and that):
#: every step reads the same answer fields and options again.
_STAMPED: dict[tuple[int, frozenset[str], bool], tuple[Shape, Shape]] = {}


class NameChecker(Operations):
    """Walks the Jinja AST of an expression and reports what cannot work (or may not be meant)."""

    def __init__(self, environment: ImmutableSandboxedEnvironment, scope: Scope, unknown_names_allowed: bool = False) -> None:
        self.environment = environment
        self.scope = scope
        # An included template also sees the variables of the loop or block it is included
        # from, which cannot be known here: its unknown names are let through.
        self.unknown_names_allowed = unknown_names_allowed
        self.findings: list[Finding] = []
        #: Every name and field read from the scope (`options.audience`), and the names read
        #: whole (`options` passed to a macro): what the scorer's declarations are used by.
        self.paths_read: set[str] = set()
        self.read_whole: set[str] = set()
        #: The texts compared with an enum that never holds them, with what is compared
        #: (`options.order`, 'strict'): the other side of the mismatch may be the enum's.
        self.enum_misses: list[tuple[str, str]] = []
        self.defaults_deciding = []
        self.options_gone_through = []
        self._declared: set[str] = set(IMPLICIT_NAMES)
        self._base = False  # the name being read is the base of a field read
        self._quiet = 0  # looking a shape up to narrow it: nothing is reported

    # -- entry points

    def expression(self, source: str, local: Mapping[str, Shape] | None = None) -> Shape:
        """The shape an expression gives; its problems are added to `findings`. `local`: what
        is known here beside the scope (what a `skip_if` that did not hold tells)."""
        try:
            expression: nodes.Expr | None = parse_expression(source)
        except TemplateSyntaxError:  # read again below as a template's `{{ }}`: it words the error as authors see it, or reads a tuple
            expression = None
        if expression is not None:
            return self.infer(expression, local or {})
        try:
            parsed = self.environment.parse(f"{{{{ {source} }}}}")
        except TemplateSyntaxError as exc:
            self.findings.append(syntax_finding(source, exc, template=False))
            return ANY
        outputs = [node for node in parsed.body if isinstance(node, nodes.Output)]
        expressions = [child for output in outputs for child in output.nodes if not isinstance(child, nodes.TemplateData)]
        if len(expressions) != 1:
            return ANY
        return self.infer(expressions[0], local or {})

    def narrowed(self, source: str, truthy: bool) -> dict[str, Shape]:
        """What an expression (a `skip_if`) being true, or false, tells of what it tests."""
        try:
            return self.narrow(parse_expression(source), {}, truthy)
        except TemplateSyntaxError:
            return {}

    # -- findings

    def report(self, node: nodes.Node, message: str, pattern: str | None = None, severity: Severity = "error", code: str | None = None) -> None:
        if not self._quiet:
            self.findings.append(Finding(message, node.lineno or 1, pattern, severity, code))

    # -- expressions

    def infer(self, node: nodes.Node, local: Mapping[str, Shape]) -> Shape:
        if FACT in local and not isinstance(node, (nodes.Name, nodes.Getattr, nodes.Const)):
            text = written(node)
            if text is not None and FACT + text in local:
                self.children(node, local)
                return local[FACT + text]
        method = _INFERRED_BY.get(type(node))
        if method is None:
            self.children(node, local)
            return ANY
        found: Shape = getattr(self, method)(node, local)
        return found

    # -- a method per kind of expression (the table _INFERRED_BY, below the class)

    def field(self, node: nodes.Getattr, local: Mapping[str, Shape]) -> Shape:
        path = path_of(node)
        if path is not None and path in local:
            return local[path]
        self._base = True
        base = self.infer(node.node, local)
        self._base = False
        return self.attribute(node, base, node.attr)

    def constant(self, node: nodes.Const, local: Mapping[str, Shape]) -> Shape:
        value = node.value
        if isinstance(value, bool):
            return BOOLEAN
        if isinstance(value, (int, float)):
            return ranges.constant(value)
        return TEXT if isinstance(value, str) else ANY

    def listed(self, node: nodes.List | nodes.Tuple, local: Mapping[str, Shape]) -> Shape:
        shapes = [self.infer(item, local) for item in node.items]
        item = functools.reduce(Shape.join, shapes) if shapes else ANY
        return ListOf(item, len(shapes), len(shapes))

    def mapping(self, node: nodes.Dict, local: Mapping[str, Shape]) -> Shape:
        for pair in node.items:
            self.infer(pair.key, local)
            self.infer(pair.value, local)
        return ANY

    def test(self, node: nodes.Test, local: Mapping[str, Shape]) -> Shape:
        if node.name in ("defined", "undefined"):
            return BOOLEAN  # a test for presence may name what is not there
        if node.name not in self.environment.tests:
            # Jinja itself lets an unknown test through inside a conditional, until it runs.
            self.report(node, f"unknown test {node.name!r}{did_you_mean(node.name, self.environment.tests)}", rf"\bis\s+(?:not\s+)?({node.name})\b")
        self.children(node, local)
        return BOOLEAN

    def comparison(self, node: nodes.Compare, local: Mapping[str, Shape]) -> Shape:
        self.compare(node, local)
        return BOOLEAN

    def negation(self, node: nodes.Not, local: Mapping[str, Shape]) -> Shape:
        self.infer(node.node, local)
        return BOOLEAN

    def both(self, node: nodes.And, local: Mapping[str, Shape]) -> Shape:
        left = self.infer(node.left, local)
        right = self.infer(node.right, self.narrow(node.left, local, True))
        return BOOLEAN if isinstance(left, Boolean) and isinstance(right, Boolean) else ranges.falsy(left).join(right)

    def either(self, node: nodes.Or, local: Mapping[str, Shape]) -> Shape:
        left = self.infer(node.left, local)
        right = self.infer(node.right, self.narrow(node.left, local, False))
        return BOOLEAN if isinstance(left, Boolean) and isinstance(right, Boolean) else ranges.truthy(left).join(right)

    def conditional(self, node: nodes.CondExpr, local: Mapping[str, Shape]) -> Shape:
        self.infer(node.test, local)
        first = self.infer(node.expr1, self.narrow(node.test, local, True))
        second = self.infer(node.expr2, self.narrow(node.test, local, False)) if node.expr2 is not None else ANY
        return first.join(second)

    def operation(self, node: nodes.BinExpr, local: Mapping[str, Shape]) -> Shape:
        return self.arithmetic(node, ARITHMETIC[type(node)], local)

    def signed(self, node: nodes.Neg | nodes.Pos, local: Mapping[str, Shape]) -> Shape:
        inner = ranges.as_number(self.infer(node.node, local))
        return (ranges.negated(inner) if isinstance(node, nodes.Neg) else inner) if inner is not None else NUMBER

    def joined(self, node: nodes.Concat, local: Mapping[str, Shape]) -> Shape:
        self.children(node, local)
        return TEXT

    def children(self, node: nodes.Node, local: Mapping[str, Shape]) -> None:
        for child in node.iter_child_nodes():
            self.infer(child, local)

    def quietly(self, node: nodes.Node, local: Mapping[str, Shape]) -> Shape:
        """The shape of `node`, reporting nothing (it is reported where it is read)."""
        self._quiet += 1
        try:
            return self.infer(node, local)
        finally:
            self._quiet -= 1

    def read(self, path: str, shape: Shape) -> Shape:
        """A name or field read from the scope: remembered, and the numbers, texts and lists
        read from it know where they come from (an option, or a step or run field and what
        its rules tie it to)."""
        if not self._quiet:
            self.paths_read.add(path)
        if not isinstance(shape, (Number, ListOf, Text)) or shape.sources:
            return shape
        parts = path.split(".")
        root = ".".join(parts[:2]) if parts[0] == "options" else parts[0]
        sources = frozenset({root}) | self.scope.tied_to(root)
        loose = root in self.scope.constrained  # its rules may hold it narrower than its schema
        key = (id(shape), sources, loose)
        kept = _STAMPED.get(key)
        if kept is None or kept[0] is not shape:
            stamped = replace(shape, sources=sources, tight=False) if loose and isinstance(shape, Number) else replace(shape, sources=sources)
            if len(_STAMPED) >= 4096:
                _STAMPED.clear()
            kept = _STAMPED[key] = (shape, stamped)  # the shape kept too: its id is not reused while kept
        return kept[1]

    def name(self, node: nodes.Name, local: Mapping[str, Shape]) -> Shape:
        name = node.name
        whole, self._base = not self._base, False
        if name in local:
            return local[name]
        if name in self.scope.names:
            if whole and not self._quiet:
                self.read_whole.add(name)
            return self.read(name, self.scope.names[name])
        if name in self._declared or name in self.environment.globals:
            return ANY
        return self.unknown(node, name, local)

    def unknown(self, node: nodes.Name, name: str, local: Mapping[str, Shape]) -> Shape:
        if name in self.scope.unavailable:
            self.report(node, self.scope.unavailable[name], name_pattern(name))
            return ANY
        if self.unknown_names_allowed:
            return ANY
        known = [key for key in [*local, *self.scope.names] if not key.startswith(FACT) and "." not in key]
        meant = did_you_mean(name, [*known, *self.environment.globals])  # a misspelt function too
        self.report(node, f"unknown name {name!r}" + (meant or f" (known here: {', '.join(known)})"), name_pattern(name))
        return ANY

    def attribute(self, node: nodes.Node, base: Shape, attribute: str) -> Shape:
        if attribute.startswith("_") or attribute in _UNSAFE_ATTRIBUTES:
            self.report(node, f"attribute {attribute!r} is not allowed: templates and expressions cannot reach Python internals", attribute_pattern(attribute))
            return ANY
        subject = path_of(node.node) if isinstance(node, (nodes.Getattr, nodes.Getitem)) else None
        if isinstance(base, Record):
            if attribute in base.fields:
                path = path_of(node)
                return self.read(path, base.fields[attribute]) if path is not None else base.fields[attribute]
            if attribute in _MAPPING_METHODS:
                if subject is not None and not self._quiet:
                    self.read_whole.add(subject)  # its fields are read by a key known only at run time
                return ANY
            self.report(
                node,
                f"{subject or base.what} has no field {attribute!r}{did_you_mean(attribute, base.fields)} (fields of {base.what}: {', '.join(base.fields)})",
                attribute_pattern(attribute),
            )
            return ANY
        if isinstance(base, ListOf) and attribute not in _LIST_METHODS:
            fields = f"; its items have {', '.join(base.item.fields)}" if isinstance(base.item, Record) else ""
            self.report(node, f"{path_of(getattr(node, 'node', node)) or 'this'} is a list: it has no field {attribute!r}{fields}", attribute_pattern(attribute))
            return ANY
        if isinstance(base, Text) and not hasattr(str, attribute):
            self.report(node, f"{path_of(getattr(node, 'node', node)) or 'this'} is text: it has no field {attribute!r}", attribute_pattern(attribute))
            return ANY
        if isinstance(base, (Number, Boolean)):
            self.report(node, f"{path_of(getattr(node, 'node', node)) or 'this'} is {base.describe()}: it has no field {attribute!r}", attribute_pattern(attribute))
        return ANY

    def item(self, node: nodes.Getitem, local: Mapping[str, Shape]) -> Shape:
        self._base = True
        base = self.infer(node.node, local)
        self._base = False
        if isinstance(node.arg, nodes.Const) and isinstance(node.arg.value, str):
            return self.attribute(node, base, node.arg.value)
        key = self.infer(node.arg, local)
        if isinstance(node.node, nodes.Dict):
            if isinstance(key, Text) and key.enum:
                self.enum_keys(node.node, key, node.arg, every=True)
            return self.values_of(node.node, local)
        if isinstance(base, ListOf):
            return base if isinstance(node.arg, nodes.Slice) else base.item
        return ANY

    def values_of(self, literal: nodes.Dict, local: Mapping[str, Shape], default: Shape | None = None) -> Shape:
        """What looking a mapping written in the expression up gives: one of its values."""
        shapes = [self.quietly(pair.value, local) for pair in literal.items] + ([default] if default is not None else [])
        return functools.reduce(Shape.join, shapes) if shapes else ANY

    def enum_keys(self, literal: nodes.Dict, key: Text, key_node: nodes.Node, every: bool) -> None:
        """A mapping looked up by an enum field: keys the enum never gives, and (for `[...]`,
        which fails on a missing key) enum values the mapping lacks."""
        assert key.enum is not None
        keys = [pair.key.value for pair in literal.items if isinstance(pair.key, nodes.Const) and isinstance(pair.key.value, str)]
        subject = path_of(key_node) or "the key"
        for value in keys:
            if value not in key.enum:
                if not self._quiet:
                    self.enum_misses.append((path_of(key_node) or "", value))
                self.report(literal, f"{value!r} is never a value of {subject}, which is {key.describe()}{did_you_mean(value, key.enum)}", string_pattern(value))
        missing = [value for value in key.enum if value not in keys]
        if every and missing and len(keys) == len(literal.items):
            self.report(literal, f"no entry for {', '.join(map(repr, missing))}: {subject} is {key.describe()} (use .get({subject}, default) for a default)", None)


    def enum_literal(self, shape: Shape, subject: nodes.Node, literal: nodes.Node, negated: bool) -> None:
        """A string compared with an enum field that can never hold it: the comparison has
        one outcome whatever the judge answers (answers are normalised to the enum's case)."""
        if not (isinstance(shape, Text) and shape.enum and isinstance(literal, nodes.Const) and isinstance(literal.value, str)):
            return
        if literal.value not in shape.enum:
            outcome = "always true" if negated else "never true"
            if not self._quiet:
                self.enum_misses.append((path_of(subject) or "", literal.value))
            self.report(
                literal,
                f"{path_of(subject) or 'this'} is {shape.describe()}: comparing it with {literal.value!r} is {outcome}{did_you_mean(literal.value, shape.enum)}",
                string_pattern(literal.value),
            )

    # -- calls

#: The method of NameChecker that works out each kind of expression (by its node's class):
#: another kind is looked into for its names, and gives what cannot be known.
_INFERRED_BY: dict[type[nodes.Node], str] = {
    nodes.Name: "name", nodes.Getattr: "field", nodes.Getitem: "item", nodes.Const: "constant",
    nodes.List: "listed", nodes.Tuple: "listed", nodes.Dict: "mapping", nodes.Filter: "filter", nodes.Test: "test",
    nodes.Compare: "comparison", nodes.Not: "negation", nodes.And: "both", nodes.Or: "either", nodes.CondExpr: "conditional",
    nodes.Neg: "signed", nodes.Pos: "signed", nodes.Concat: "joined", nodes.Call: "call",
    **dict.fromkeys(ARITHMETIC, "operation"),
}


@functools.lru_cache(maxsize=1024)  # by tree: a partial is checked for every step that includes it
def referenced_templates(parsed: nodes.Template) -> tuple[tuple[str, str, int, bool], ...]:
    """The templates a template includes, imports or extends: name, the tag (include,
    import, from, extends), line, and whether a missing one is allowed (`ignore missing`)."""
    found: Iterator[Any] = parsed.find_all((nodes.Include, nodes.Import, nodes.FromImport, nodes.Extends))
    return tuple(
        (node.template.value, {"FromImport": "from"}.get(type(node).__name__, type(node).__name__.lower()), node.lineno, bool(getattr(node, "ignore_missing", False)))
        for node in found
        if isinstance(node.template, nodes.Const) and isinstance(node.template.value, str)
    )
