"""Checks every name an expression or template reads against what exists at that point of a
scorer, before any judge is called: earlier steps and the fields of their answers, the
fields of list items inside `where`, options, the run's inputs. A misspelt name, a field
the schema does not have, a later step's result, a string compared with an enum that can
never produce it, a true/false score: each is a finding with the place of the mistake and,
when one is close, the name meant.

What a name holds is a `Shape`, read from the answer models (pydantic) and the options
model (see `scoring/shapes.py`); a step kind only says which names it adds.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from jinja2 import TemplateSyntaxError, nodes
from jinja2.sandbox import ImmutableSandboxedEnvironment

from ..scoring.shapes import ANY, BOOLEAN, NUMBER, TEXT, Boolean, ListOf, Number, Record, Scope, Shape, Text, shape_of
from .suggest import did_you_mean
from .templates import parse_expression
from .wording import lone_equals

# The shapes are imported from here by the catalog's other checks.
__all__ = [
    "ANY", "BOOLEAN", "NUMBER", "TEXT", "Boolean", "Finding", "ListOf", "NameChecker", "Number", "Record", "Scope", "Shape", "Text",
    "referenced_templates", "shape_of", "syntax_finding",
]  # fmt: skip

#: Methods a mapping answers to in expressions (`{...}.get(item.verdict, 0)`, `options.items()`).
_MAPPING_METHODS = {"get", "items", "keys", "values"}
_LIST_METHODS = {"index", "count"}
#: Attributes the sandbox refuses beside those starting with `_`.
#: Names Jinja itself gives templates.
_IMPLICIT_NAMES = {"loop", "self", "super", "caller", "varargs", "kwargs"}
_UNSAFE_ATTRIBUTES = {"mro", "func_globals", "func_code", "gi_frame", "gi_code", "cr_frame", "cr_code", "ag_code", "ag_frame", "f_globals", "f_locals"}


@dataclass(frozen=True)
class Finding:
    """A problem in an expression or template: its message, the template line it is on
    (1 in a one-line expression), and a pattern finding its column (group 1 when given)."""

    message: str
    line: int
    pattern: str | None = None


def _name_pattern(name: str) -> str:
    return rf"(?<![\w.'\"])({re.escape(name)})(?!\w)"


def _attribute_pattern(name: str) -> str:
    return rf"(?:\.\s*|\[\s*['\"])({re.escape(name)})(?!\w)"


def _string_pattern(value: str) -> str:
    return rf"(['\"]{re.escape(value)}['\"])"


# ---------------------------------------------------------------------------- syntax


def syntax_finding(source: str, exc: TemplateSyntaxError, template: bool) -> Finding:
    """A syntax error at the place to fix: an unclosed quote, bracket or block where it was
    opened (Jinja reports where it gave up)."""
    message = exc.message or str(exc)
    opened = _unclosed_block(source) if template and "end of template" in message.lower() else None
    if opened is not None:
        tag, line = opened
        return Finding(f"`{{% {tag} %}}` is never closed (no `{{% end{tag} %}}` after it)", line, rf"\{{%-?\s*({tag})\b")
    lines = source.splitlines() or [""]
    line = exc.lineno if 1 <= exc.lineno <= len(lines) else len(lines)
    text = lines[line - 1]
    unclosed = _unclosed_bracket(text)
    if unclosed is not None:
        char, column = unclosed
        what = "quote" if char in "'\"" else "bracket"
        detail = f" ({message})" if template else ""
        prefix = "" if template else "invalid expression: "
        return Finding(f"{prefix}{what} {char} is never closed{detail}", line, rf"^.{{{column}}}(.)")
    assignment = None if template else lone_equals(source)
    if assignment is not None:
        return Finding("invalid expression: `=` sets a value; to compare, write `==`", 1, rf"^.{{{assignment}}}(=)")
    at = re.search(r" at (\d+)$", message)
    if at is not None and not template:
        return Finding(f"invalid expression: {message}", 1, rf"^.{{{int(at.group(1)) - 3}}}(.)")
    token = re.search(r"unexpected '(.+?)'", message)
    pattern = rf"({re.escape(token.group(1))})" if token and token.group(1) != "end of template" else None
    return Finding(message if template else f"invalid expression: {message}", line, pattern)


def _unclosed_bracket(text: str) -> tuple[str, int] | None:
    """The innermost bracket or quote of `text` left open, and its 0-based column."""
    stack: list[tuple[str, int]] = []
    quote: tuple[str, int] | None = None
    pairs = {")": "(", "]": "[", "}": "{"}
    for index, char in enumerate(text):
        if quote is not None:
            if char == quote[0] and text[index - 1] != "\\":
                quote = None
        elif char in "'\"":
            quote = (char, index)
        elif char in "([{":
            stack.append((char, index))
        elif char in pairs and stack and stack[-1][0] == pairs[char]:
            stack.pop()
        elif char in pairs and text[index - 1 : index + 1] not in ("}}", "%}") and text[index : index + 2] not in ("}}",):
            stack.clear()  # a stray closer: not an unclosed bracket
    if quote is not None:
        return quote
    # `{{` and `{%` open template tags, not brackets
    real = [(char, index) for char, index in stack if not (char == "{" and text[index + 1 : index + 2] in ("{", "%") or text[index - 1 : index] == "{")]
    return real[-1] if real else None


_BLOCK_TAGS = {"if", "for", "macro", "call", "filter", "block", "with", "autoescape", "raw", "trans"}


def _unclosed_block(source: str) -> tuple[str, int] | None:
    """The innermost `{% tag %}` block left open, and its line."""
    stack: list[tuple[str, int]] = []
    for match in re.finditer(r"\{%-?\s*(\w+)([^%]*)", source):
        tag, rest = match.group(1), match.group(2)
        line = source.count("\n", 0, match.start()) + 1
        if tag in _BLOCK_TAGS or (tag == "set" and "=" not in rest):
            stack.append((tag, line))
        elif tag.startswith("end") and stack and stack[-1][0] == tag[3:]:
            stack.pop()
    return stack[-1] if stack else None


# ---------------------------------------------------------------------------- the walk


@functools.lru_cache(maxsize=1024)  # by tree: a partial is checked for every step that includes it
def _declared_in(parsed: nodes.Template) -> frozenset[str]:
    """The names a template sets, takes as parameters or defines as macros."""
    stored = {node.name for node in parsed.find_all(nodes.Name) if node.ctx in ("store", "param")}
    return frozenset(stored | {node.name for node in parsed.find_all(nodes.Macro)})


class NameChecker:
    """Walks the Jinja AST of an expression or a template and reports what cannot work."""

    def __init__(self, environment: ImmutableSandboxedEnvironment, scope: Scope, unknown_names_allowed: bool = False) -> None:
        self.environment = environment
        self.scope = scope
        # An included template also sees the variables of the loop or block it is included
        # from, which cannot be known here: its unknown names are let through.
        self.unknown_names_allowed = unknown_names_allowed
        self.findings: list[Finding] = []
        self._declared: set[str] = set(_IMPLICIT_NAMES)

    # -- entry points

    def expression(self, source: str) -> Shape:
        """The shape an expression gives; its problems are added to `findings`."""
        try:
            expression: nodes.Expr | None = parse_expression(source)
        except TemplateSyntaxError:  # read again below as a template's `{{ }}`: it words the error as authors see it, or reads a tuple
            expression = None
        if expression is not None:
            return self.infer(expression, {})
        try:
            parsed = self.environment.parse(f"{{{{ {source} }}}}")
        except TemplateSyntaxError as exc:
            self.findings.append(syntax_finding(source, exc, template=False))
            return ANY
        outputs = [node for node in parsed.body if isinstance(node, nodes.Output)]
        expressions = [child for output in outputs for child in output.nodes if not isinstance(child, nodes.TemplateData)]
        if len(expressions) != 1:
            return ANY
        return self.infer(expressions[0], {})

    def template(self, parsed: nodes.Template) -> None:
        self._declared |= _declared_in(parsed)
        self.statements(parsed.body, {})

    # -- templates

    def statements(self, body: Sequence[nodes.Node], local: dict[str, Shape]) -> None:
        for node in body:
            self.statement(node, local)

    def statement(self, node: nodes.Node, local: dict[str, Shape]) -> None:
        if isinstance(node, nodes.For):
            listed = self.infer(node.iter, local)
            inner = dict(local)
            inner["loop"] = ANY
            self.bind(node.target, listed.item if isinstance(listed, ListOf) else ANY, inner)
            if node.test is not None:
                self.infer(node.test, inner)
            self.statements(node.body, inner)
            self.statements(node.else_, local)
        elif isinstance(node, nodes.Macro):
            inner = {**local, "varargs": ANY, "kwargs": ANY, "caller": ANY}
            for argument in node.args:
                inner[argument.name] = ANY
            for default in node.defaults:
                self.infer(default, local)
            self.statements(node.body, inner)
        elif isinstance(node, nodes.CallBlock):
            self.infer(node.call, local)
            self.statements(node.body, {**local, **{argument.name: ANY for argument in node.args}})
        elif isinstance(node, nodes.Assign):
            self.bind(node.target, self.infer(node.node, local), local)
        elif isinstance(node, nodes.AssignBlock):
            self.statements(node.body, local)
            self.bind(node.target, TEXT, local)
        elif isinstance(node, (nodes.Import, nodes.FromImport)):
            if isinstance(node, nodes.Import):
                local[node.target] = ANY
            else:
                for name in node.names:
                    local[name if isinstance(name, str) else name[1]] = ANY
        elif isinstance(node, nodes.With):
            inner = dict(local)
            for target, value in zip(node.targets, node.values):
                self.bind(target, self.infer(value, local), inner)
            self.statements(node.body, inner)
        elif isinstance(node, (nodes.Include, nodes.Extends)):
            return
        elif isinstance(node, nodes.Expr) and not isinstance(node, nodes.Stmt):
            self.infer(node, local)
        else:
            for child in node.iter_child_nodes():
                self.statement(child, local)

    def bind(self, target: nodes.Node, shape: Shape, local: dict[str, Shape]) -> None:
        if isinstance(target, nodes.Name):
            local[target.name] = shape
        elif isinstance(target, nodes.Tuple):
            for item in target.items:
                self.bind(item, ANY, local)
        elif isinstance(target, nodes.NSRef):
            local.setdefault(target.name, ANY)

    # -- expressions

    def report(self, node: nodes.Node, message: str, pattern: str | None = None) -> None:
        self.findings.append(Finding(message, node.lineno or 1, pattern))

    def infer(self, node: nodes.Node, local: Mapping[str, Shape]) -> Shape:
        if isinstance(node, nodes.Name):
            return self.name(node, local)
        if isinstance(node, nodes.Getattr):
            return self.attribute(node, self.infer(node.node, local), node.attr)
        if isinstance(node, nodes.Getitem):
            return self.item(node, local)
        if isinstance(node, nodes.Const):
            value = node.value
            if isinstance(value, bool):
                return BOOLEAN
            if isinstance(value, (int, float)):
                return NUMBER
            return TEXT if isinstance(value, str) else ANY
        if isinstance(node, (nodes.List, nodes.Tuple)):
            shapes = [self.infer(item, local) for item in node.items]
            return ListOf(shapes[0] if shapes and all(shape == shapes[0] for shape in shapes) else ANY)
        if isinstance(node, nodes.Dict):
            for pair in node.items:
                self.infer(pair.key, local)
                self.infer(pair.value, local)
            return ANY
        if isinstance(node, nodes.Filter):
            return self.filter(node, local)
        if isinstance(node, nodes.Test):
            if node.name in ("defined", "undefined"):
                return BOOLEAN  # a test for presence may name what is not there
            if node.name not in self.environment.tests:
                # Jinja itself lets an unknown test through inside a conditional, until it runs.
                self.report(node, f"unknown test {node.name!r}{did_you_mean(node.name, self.environment.tests)}", rf"\bis\s+(?:not\s+)?({re.escape(node.name)})\b")
            self.children(node, local)
            return BOOLEAN
        if isinstance(node, nodes.Compare):
            self.compare(node, local)
            return BOOLEAN
        if isinstance(node, nodes.Not):
            self.infer(node.node, local)
            return BOOLEAN
        if isinstance(node, (nodes.And, nodes.Or)):
            left, right = self.infer(node.left, local), self.infer(node.right, local)
            return BOOLEAN if isinstance(left, Boolean) and isinstance(right, Boolean) else ANY
        if isinstance(node, nodes.CondExpr):
            self.infer(node.test, local)
            first = self.infer(node.expr1, local)
            second = self.infer(node.expr2, local) if node.expr2 is not None else ANY
            return first if first == second else ANY
        if isinstance(node, (nodes.Add, nodes.Sub, nodes.Mul, nodes.Div, nodes.FloorDiv, nodes.Mod, nodes.Pow)):
            left, right = self.infer(node.left, local), self.infer(node.right, local)
            if isinstance(node, nodes.Add) and isinstance(left, Text) and isinstance(right, Text):
                return TEXT
            numeric = all(isinstance(shape, (Number, Boolean)) for shape in (left, right))
            return NUMBER if numeric or not isinstance(node, nodes.Add) else ANY
        if isinstance(node, (nodes.Neg, nodes.Pos)):
            self.infer(node.node, local)
            return NUMBER
        if isinstance(node, nodes.Concat):
            self.children(node, local)
            return TEXT
        if isinstance(node, nodes.Call):
            return self.call(node, local)
        self.children(node, local)
        return ANY

    def children(self, node: nodes.Node, local: Mapping[str, Shape]) -> None:
        for child in node.iter_child_nodes():
            self.infer(child, local)

    def name(self, node: nodes.Name, local: Mapping[str, Shape]) -> Shape:
        name = node.name
        if name in local:
            return local[name]
        if name in self.scope.names:
            return self.scope.names[name]
        if name in self._declared or name in self.environment.globals:
            return ANY
        if name in self.scope.unavailable:
            self.report(node, self.scope.unavailable[name], _name_pattern(name))
            return ANY
        if self.unknown_names_allowed:
            return ANY
        known = [*local, *self.scope.names]
        meant = did_you_mean(name, [*known, *self.environment.globals])  # a misspelt function too
        self.report(node, f"unknown name {name!r}" + (meant or f" (known here: {', '.join(known)})"), _name_pattern(name))
        return ANY

    def attribute(self, node: nodes.Node, base: Shape, attribute: str) -> Shape:
        if attribute.startswith("_") or attribute in _UNSAFE_ATTRIBUTES:
            self.report(node, f"attribute {attribute!r} is not allowed: templates and expressions cannot reach Python internals", _attribute_pattern(attribute))
            return ANY
        subject = _path(node.node) if isinstance(node, (nodes.Getattr, nodes.Getitem)) else None
        if isinstance(base, Record):
            if attribute in base.fields:
                return base.fields[attribute]
            if attribute in _MAPPING_METHODS:
                return ANY
            self.report(
                node,
                f"{subject or base.what} has no field {attribute!r}{did_you_mean(attribute, base.fields)} (fields of {base.what}: {', '.join(base.fields)})",
                _attribute_pattern(attribute),
            )
            return ANY
        if isinstance(base, ListOf) and attribute not in _LIST_METHODS:
            fields = f"; its items have {', '.join(base.item.fields)}" if isinstance(base.item, Record) else ""
            self.report(node, f"{_path(getattr(node, 'node', node)) or 'this'} is a list: it has no field {attribute!r}{fields}", _attribute_pattern(attribute))
            return ANY
        if isinstance(base, Text) and not hasattr(str, attribute):
            self.report(node, f"{_path(getattr(node, 'node', node)) or 'this'} is text: it has no field {attribute!r}", _attribute_pattern(attribute))
            return ANY
        if isinstance(base, (Number, Boolean)):
            self.report(node, f"{_path(getattr(node, 'node', node)) or 'this'} is {base.describe()}: it has no field {attribute!r}", _attribute_pattern(attribute))
        return ANY

    def item(self, node: nodes.Getitem, local: Mapping[str, Shape]) -> Shape:
        base = self.infer(node.node, local)
        if isinstance(node.arg, nodes.Const) and isinstance(node.arg.value, str):
            return self.attribute(node, base, node.arg.value)
        key = self.infer(node.arg, local)
        if isinstance(node.node, nodes.Dict) and isinstance(key, Text) and key.enum:
            self.enum_keys(node.node, key, node.arg, every=True)
        if isinstance(base, ListOf):
            return base if isinstance(node.arg, nodes.Slice) else base.item
        return ANY

    def enum_keys(self, literal: nodes.Dict, key: Text, key_node: nodes.Node, every: bool) -> None:
        """A mapping looked up by an enum field: keys the enum never gives, and (for `[...]`,
        which fails on a missing key) enum values the mapping lacks."""
        assert key.enum is not None
        keys = [pair.key.value for pair in literal.items if isinstance(pair.key, nodes.Const) and isinstance(pair.key.value, str)]
        subject = _path(key_node) or "the key"
        for value in keys:
            if value not in key.enum:
                self.report(literal, f"{value!r} is never a value of {subject}, which is {key.describe()}{did_you_mean(value, key.enum)}", _string_pattern(value))
        missing = [value for value in key.enum if value not in keys]
        if every and missing and len(keys) == len(literal.items):
            self.report(literal, f"no entry for {', '.join(map(repr, missing))}: {subject} is {key.describe()} (use .get({subject}, default) for a default)", None)

    def filter(self, node: nodes.Filter, local: Mapping[str, Shape]) -> Shape:
        base = self.infer(node.node, local) if node.node is not None else ANY
        for argument in node.args:
            self.infer(argument, local)
        for keyword in node.kwargs:
            self.infer(keyword.value, local)
        name = node.name
        if name not in self.environment.filters:
            self.report(node, f"unknown filter {name!r}{did_you_mean(name, self.environment.filters)}", rf"\|\s*({re.escape(name)})\b")
            return ANY
        strings = [argument.value for argument in node.args if isinstance(argument, nodes.Const) and isinstance(argument.value, str)]
        attribute = next((keyword.value.value for keyword in node.kwargs if keyword.key == "attribute" and isinstance(keyword.value, nodes.Const)), None)
        if name in ("selectattr", "rejectattr") and strings:
            attribute = strings[0]
        if name == "attr":
            return self.attribute(node, base, strings[0]) if strings else ANY
        if isinstance(attribute, str) and isinstance(base, ListOf):
            field_shape = self.attribute(node, base.item, attribute.split(".")[0])
            if name == "map":
                return ListOf(field_shape)
        if name in ("length", "count", "wordcount", "int", "float", "round", "abs", "sum"):
            return NUMBER
        if name in ("list", "unique", "sort", "reverse", "selectattr", "rejectattr", "select", "reject", "batch", "slice"):
            return base if isinstance(base, ListOf) else ListOf(ANY) if name != "reverse" else ANY
        if name in ("first", "last", "min", "max", "random"):
            return base.item if isinstance(base, ListOf) else ANY
        if name in ("trim", "lower", "upper", "title", "capitalize", "string", "join", "replace", "truncate", "json", "untrusted", "number", "format", "indent", "center", "striptags", "urlencode"):
            return TEXT
        return ANY

    def compare(self, node: nodes.Compare, local: Mapping[str, Shape]) -> None:
        left_node: nodes.Node = node.expr
        left = self.infer(left_node, local)
        for operand in node.ops:
            right = self.infer(operand.expr, local)
            negated = operand.op in ("ne", "notin")
            if operand.op in ("eq", "ne"):
                self.enum_literal(left, left_node, operand.expr, negated)
                self.enum_literal(right, operand.expr, left_node, negated)
            elif operand.op in ("in", "notin") and isinstance(operand.expr, (nodes.List, nodes.Tuple)):
                for item in operand.expr.items:
                    self.enum_literal(left, left_node, item, negated)
            left_node, left = operand.expr, right

    def enum_literal(self, shape: Shape, subject: nodes.Node, literal: nodes.Node, negated: bool) -> None:
        """A string compared with an enum field that can never hold it: the comparison has
        one outcome whatever the judge answers (answers are normalised to the enum's case)."""
        if not (isinstance(shape, Text) and shape.enum and isinstance(literal, nodes.Const) and isinstance(literal.value, str)):
            return
        if literal.value not in shape.enum:
            outcome = "always true" if negated else "never true"
            self.report(
                literal,
                f"{_path(subject) or 'this'} is {shape.describe()}: comparing it with {literal.value!r} is {outcome}{did_you_mean(literal.value, shape.enum)}",
                _string_pattern(literal.value),
            )

    def call(self, node: nodes.Call, local: Mapping[str, Shape]) -> Shape:
        callee = node.node
        if isinstance(callee, nodes.Getattr) and callee.attr == "get" and isinstance(callee.node, nodes.Dict) and node.args:
            for pair in callee.node.items:
                self.infer(pair.value, local)
            key = self.infer(node.args[0], local)
            if isinstance(key, Text) and key.enum:
                self.enum_keys(callee.node, key, node.args[0], every=False)
            for argument in node.args[1:]:
                self.infer(argument, local)
            return ANY
        self.infer(callee, local)
        for argument in node.args:
            self.infer(argument, local)
        for keyword in node.kwargs:
            self.infer(keyword.value, local)
        for extra in (node.dyn_args, node.dyn_kwargs):
            if extra is not None:
                self.infer(extra, local)
        if isinstance(callee, nodes.Name) and callee.name in ("min", "max", "abs", "round", "len", "sum", "float", "int"):
            return NUMBER
        if isinstance(callee, nodes.Name) and callee.name == "range":
            return ListOf(NUMBER)
        return ANY


def _path(node: nodes.Node) -> str | None:
    """`a.b.c` for a chain of names and attributes, for messages."""
    if isinstance(node, nodes.Name):
        return node.name
    if isinstance(node, nodes.Getattr):
        base = _path(node.node)
        return f"{base}.{node.attr}" if base else None
    if isinstance(node, nodes.Getitem) and isinstance(node.arg, nodes.Const):
        base = _path(node.node)
        if base is None:
            return None
        return f"{base}.{node.arg.value}" if isinstance(node.arg.value, str) else f"{base}[{node.arg.value!r}]"
    return None


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
