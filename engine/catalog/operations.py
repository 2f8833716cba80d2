"""What operators, comparisons, filters and calls do with the shapes of their operands, and
what cannot be meant: `NameChecker`'s half that works out an expression's type and range
(see names.py for the walk and the names).

A comparison that is never true because its sides can never be equal (true or false against
the text 'true', a list against 0), arithmetic or an ordering Python refuses (text minus a
number), a filter given what it cannot take: errors. A comparison whose outcome the ranges
decide, a division by a number that can be 0, a value that may be none where none breaks
it: warnings. A test narrows what it tests for the code it guards (`a / n if n else 0`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import replace
from types import MappingProxyType

from jinja2 import nodes
from jinja2.sandbox import ImmutableSandboxedEnvironment

from ..scoring import ranges
from ..scoring.shapes import ANY, NUMBER, TEXT, Boolean, ListOf, Number, Record, Scope, Shape, Text
from .findings import Severity, bare, loose_pattern, path_of, string_pattern, written
from .filters import ANYTHING, FUNCTIONS, Given, Row, filter_row, function_gives
from .suggest import did_you_mean

#: A key of `local` holding what a test told of an expression that is not a name or field (`claims | length`).
FACT = "\0"

ARITHMETIC: dict[type[nodes.BinExpr], ranges.Operator] = {
    nodes.Add: "add", nodes.Sub: "sub", nodes.Mul: "mul", nodes.Div: "div", nodes.FloorDiv: "floordiv", nodes.Mod: "mod", nodes.Pow: "pow",
}
_SYMBOLS = {"add": "+", "sub": "-", "mul": "*", "div": "/", "floordiv": "//", "mod": "%", "pow": "**"}
_COMPARISONS = {"eq": "==", "ne": "!=", "gt": ">", "gteq": ">=", "lt": "<", "lteq": "<="}


def family(shape: Shape) -> str | None:
    """What kind of value a shape is, as Python tells them apart in `==` and arithmetic: true
    and false are the numbers 1 and 0 there. None when not known."""
    if isinstance(shape, (Number, Boolean)):
        return "number"
    if isinstance(shape, Text):
        return "text"
    if isinstance(shape, ListOf):
        return "list"
    if isinstance(shape, Record):
        return "mapping"
    return None


def _described(shape: Shape) -> str:
    if isinstance(shape, Number) and shape.bounded:
        return f"the number {shape.span()}" if shape.low == shape.high else f"a number from {shape.span()}"
    return shape.describe()


#: The filters whose argument names a test.
_TAKES_A_TEST = frozenset({"select", "reject", "selectattr", "rejectattr"})


class Operations:
    """The types and ranges of operations, for a walk that infers the shapes of their parts
    (NameChecker gives the walk: `infer`, `quietly`, the names and fields)."""

    environment: ImmutableSandboxedEnvironment
    scope: Scope
    #: The numeric defaults of the scorer's options (`options.min_similarity`: 80): a bound
    #: the option's range leaves open may be decided by the value it has unless a caller sets it.
    option_defaults: Mapping[str, float] = MappingProxyType({})
    #: The options whose default decided a comparison (see constant_at_default): the option,
    #: the comparison as written, and the range of what it is compared with.
    defaults_deciding: list[tuple[str, str, Number]]
    #: The options declared as text that a loop or a filter goes through as a list: the
    #: option, and how (`{% for %}`), for their declaration's line (see declarations.py).
    options_gone_through: list[tuple[str, str]]

    def infer(self, node: nodes.Node, local: Mapping[str, Shape]) -> Shape:
        raise NotImplementedError

    def quietly(self, node: nodes.Node, local: Mapping[str, Shape]) -> Shape:
        raise NotImplementedError

    def attribute(self, node: nodes.Node, base: Shape, attribute: str) -> Shape:
        raise NotImplementedError

    def report(self, node: nodes.Node, message: str, pattern: str | None = None, severity: Severity = "error", code: str | None = None) -> None:
        raise NotImplementedError

    def warn(self, node: nodes.Node, code: str, message: str, pattern: str | None = None) -> None:
        self.report(node, message, pattern, "warning", code)

    def enum_literal(self, shape: Shape, subject: nodes.Node, literal: nodes.Node, negated: bool) -> None:
        raise NotImplementedError

    def enum_keys(self, literal: nodes.Dict, key: Text, key_node: nodes.Node, every: bool) -> None:
        raise NotImplementedError

    def values_of(self, literal: nodes.Dict, local: Mapping[str, Shape], default: Shape | None = None) -> Shape:
        raise NotImplementedError

    def filter(self, node: nodes.Filter, local: Mapping[str, Shape]) -> Shape:
        """What a filter gives (its row in filters.FILTERS), and what it cannot take."""
        base = self.infer(node.node, local) if node.node is not None else ANY
        arguments = [self.infer(argument, local) for argument in node.args]
        for keyword in node.kwargs:
            self.infer(keyword.value, local)
        if node.name not in self.environment.filters:
            self.report(node, f"unknown filter {node.name!r}{did_you_mean(node.name, self.environment.filters)}", rf"\|\s*({node.name})\b")
            return ANY
        row = filter_row(node.name)
        if not self.taken(node, base, row):
            return ANY
        strings = [argument.value for argument in node.args if isinstance(argument, nodes.Const) and isinstance(argument.value, str)]
        # The test a select names (`select('odd')`, `selectattr('x', 'equalto', 1)`): Jinja looks it up only when it runs.
        named = node.args[0 if node.name in ("select", "reject") else 1] if node.name in _TAKES_A_TEST and len(node.args) > (0 if node.name in ("select", "reject") else 1) else None
        if isinstance(named, nodes.Const) and isinstance(named.value, str) and named.value not in self.environment.tests:
            self.report(node, f"unknown test {named.value!r}{did_you_mean(named.value, self.environment.tests)}", rf"[\"']({re.escape(named.value)})[\"']")
            return ANY
        if node.name == "attr":
            return self.attribute(node, base, strings[0]) if strings else ANY
        fields = self.fields_taken(node, base, strings)
        if fields is not None:
            return fields
        listed = node.node.items if isinstance(node.node, (nodes.List, nodes.Tuple)) else None
        return row.gives(Given(base, arguments, strings, bool(node.kwargs), (lambda: [self.quietly(item, local) for item in listed]) if listed is not None else None))

    def taken(self, node: nodes.Filter, base: Shape, row: Row) -> bool:
        """Whether the filter can take `base` (what it cannot is reported: it fails for every
        item); a value that may be none, and text gone through as if a list, are reported too."""
        if node.node is None:
            return True
        if base.nullable and row.takes is not ANYTHING:
            self.may_be_none(node.node, f"`| {node.name}` then fails")
        if row.takes.refuses and isinstance(base, row.takes.refuses):
            self.report(node, f"{written(node.node) or 'this'} is {base.describe()}: `| {node.name}` takes {row.takes.words}, so it fails for every item", rf"\|\s*({node.name})\b")
            return False
        if row.through_items and isinstance(base, Text):
            self.over_text(node.node, f"`| {node.name}`", rf"({loose_pattern(written(node.node) or '')})\s*\|\s*{node.name}\b")
        return True

    def fields_taken(self, node: nodes.Filter, base: Shape, strings: list[str]) -> Shape | None:
        """A filter that reads a field of each item of a list (`map(attribute='label')`,
        `selectattr('grounded')`): the field is checked, and `map` gives the list of its values."""
        attribute = strings[0] if node.name in ("selectattr", "rejectattr") and strings else next(
            (keyword.value.value for keyword in node.kwargs if keyword.key == "attribute" and isinstance(keyword.value, nodes.Const)), None
        )
        if not isinstance(attribute, str) or not isinstance(base, ListOf):
            return None
        field_shape = self.attribute(node, base.item, attribute.split(".")[0])
        return ListOf(field_shape, base.least, base.most, base.sources) if node.name == "map" else None

    # -- arithmetic

    def arithmetic(self, node: nodes.BinExpr, operator: ranges.Operator, local: Mapping[str, Shape]) -> Shape:
        left, right = self.infer(node.left, local), self.infer(node.right, local)
        families = (family(left), family(right))
        symbol = _SYMBOLS[operator]
        allowed = {
            "add": {("number", "number"), ("text", "text"), ("list", "list")},
            "mul": {("number", "number"), ("text", "number"), ("number", "text"), ("list", "number"), ("number", "list")},
            "mod": {("number", "number")} | {("text", other) for other in ("number", "text", "list", "mapping")},
        }.get(operator, {("number", "number")})
        if None not in families and families not in allowed:
            self.refuse_arithmetic(node, symbol, left, right)
            return ANY
        if families == ("text", "text") or "text" in families and operator in ("mul", "mod"):
            return TEXT
        if "list" in families:
            return left if isinstance(left, ListOf) else right
        first, second = ranges.as_number(left), ranges.as_number(right)
        for side, shape in ((node.left, left), (node.right, right)):
            if shape.nullable and family(shape) == "number":
                self.may_be_none(side, f"`{symbol}` then fails")
        if operator in ("div", "floordiv", "mod") and second is not None:
            self.division(node, second)
        if first is None or second is None:
            # A number if it works at all; what it is computed from still counts.
            known = first or second
            return Number(sources=known.sources) if known is not None else (ANY if operator == "add" else NUMBER)
        return ranges.arithmetic(operator, first, second)

    def refuse_arithmetic(self, node: nodes.BinExpr, symbol: str, left: Shape, right: Shape) -> None:
        first, second = written(node.left) or "the left side", written(node.right) or "the right side"
        hint = ""
        for shape, text in ((left, first), (right, second)):
            if isinstance(shape, Text) and shape.enum and all(_numeric(value) for value in shape.enum):
                hint = f"; {text}'s values are text ({', '.join(map(repr, shape.enum))}): give its schema `type: integer` (or `number`), or write `({text} | int)`"
        self.report(
            node,
            f"{first} is {_described(left)} and {second} is {_described(right)}: `{symbol}` cannot take them, so the expression fails for every item{hint}",
            rf"({_symbol_pattern(symbol)})",
        )

    def division(self, node: nodes.BinExpr, divisor: Number) -> None:
        """A division by a number that can be 0 (a count, a length, an option of minimum 0),
        with nothing around it testing it first."""
        if not divisor.may_be_zero() or not (divisor.low == 0 or divisor.high == 0 or divisor.bounded):
            return
        text, whole = written(node.right), written(node)
        guard = f"`{bare(whole)} if {bare(text)} else 0`" if whole and text else "a condition that the divisor is not 0"
        pattern = rf"(?:/|%)\s*\(?\s*({loose_pattern(bare(text))})" if text else None
        self.warn(node, "division-by-zero", f"division by {bare(text) if text else 'a number'}, which {_zero_words(divisor)}; guard it: {guard}", pattern)

    def over_text(self, node: nodes.Node, what: str, pattern: str | None) -> None:
        """Text gone through where a list was surely meant (an option declared `type: string`
        looped over): each character is taken as an item."""
        text = written(node)
        subject = f"`{bare(text)}`" if text else "this"
        whole = f"show it whole (`{{{{ {bare(text)} }}}}`)" if text else "show it whole"
        declared = " (`type: array`, `items: {type: string}`)" if text and text.startswith("options.") else ""
        if text and declared:
            self.options_gone_through.append((bare(text), what))
        self.report(
            node,
            f"{subject} is text: {what} goes through it one character at a time, taking each character for an item; "
            f"make it a list{declared}, or {whole}",
            pattern,
        )

    def may_be_none(self, node: nodes.Node, then: str, guard: str | None = None) -> None:
        """A value read where none would break it, or show as 'None'."""
        path = path_of(node)
        if path is None:
            return
        root = path.split(".")[0]
        why = f"an item may come without one: the scorer does not require `{root}`" if root in _OPTIONAL_FIELDS else "its schema does not require it"
        advice = f"`{guard or f'{path} is not none'}`"
        also = f", or add `{root}` to the scorer's `requires:`" if root in _OPTIONAL_FIELDS else ""
        self.warn(node, "may-be-none", f"{path} may be none ({why}), and {then}: test it first ({advice}){also}", rf"({loose_pattern(path)})")

    # -- comparisons

    def compare(self, node: nodes.Compare, local: Mapping[str, Shape]) -> None:
        left_node: nodes.Node = node.expr
        left = self.infer(left_node, local)
        for operand in node.ops:
            right = self.infer(operand.expr, local)
            negated = operand.op in ("ne", "notin")
            if operand.op in ("eq", "ne"):
                self.enum_literal(left, left_node, operand.expr, negated)
                self.enum_literal(right, operand.expr, left_node, negated)
                self.equality(operand.op, left_node, left, operand.expr, right)
            elif operand.op in ("in", "notin"):
                if isinstance(operand.expr, (nodes.List, nodes.Tuple)):
                    for item in operand.expr.items:
                        self.enum_literal(left, left_node, item, negated)
                self.membership(operand.op, left_node, left, operand.expr, right)
            elif operand.op in _COMPARISONS:
                self.ordering(operand.op, left_node, left, operand.expr, right)
            left_node, left = operand.expr, right

    def equality(self, operator: str, left_node: nodes.Node, left: Shape, right_node: nodes.Node, right: Shape) -> None:
        families = (family(left), family(right))
        if None in families or families[0] == families[1]:
            self.constant_outcome(operator, left_node, left, right_node, right)
            return
        first, second = written(left_node) or "the left side", written(right_node) or "the right side"
        never = "never true" if operator == "eq" else "always true"
        hint = ""
        if isinstance(left, Boolean) or isinstance(right, Boolean):
            subject = first if isinstance(left, Boolean) else second
            hint = f" (write `{subject}` for true, `not {subject}` for false)"
        elif "list" in families and "number" in families:
            subject = first if isinstance(left, ListOf) else second
            hint = f"; did you mean `{subject} | length`?"
        self.report(
            right_node if isinstance(right_node, nodes.Const) else left_node,
            f"{first} is {_described(left)} and {second} is {_described(right)}: they are never equal, so `{_COMPARISONS[operator]}` is {never}{hint}",
            string_pattern(right_node.value) if isinstance(right_node, nodes.Const) and isinstance(right_node.value, str) else rf"({_symbol_pattern(_COMPARISONS[operator])})",
        )

    def ordering(self, operator: str, left_node: nodes.Node, left: Shape, right_node: nodes.Node, right: Shape) -> None:
        families = (family(left), family(right))
        if None in families or families[0] == families[1]:
            for side, shape in ((left_node, left), (right_node, right)):
                if shape.nullable and family(shape) == "number":
                    self.may_be_none(side, f"`{_COMPARISONS[operator]}` then fails")
            self.constant_outcome(operator, left_node, left, right_node, right)
            return
        first, second = written(left_node) or "the left side", written(right_node) or "the right side"
        hint = f"; did you mean `{first if isinstance(left, ListOf) else second} | length`?" if "list" in families else ""
        if isinstance(left, Text) and left.enum and all(_numeric(value) for value in left.enum) or isinstance(right, Text) and right.enum and all(_numeric(value) for value in right.enum):
            hint = "; the enum's values are text: give its schema `type: integer`, or write `| int`"
        self.report(
            right_node if isinstance(right_node, nodes.Const) else left_node,
            f"{first} is {_described(left)} and {second} is {_described(right)}: `{_COMPARISONS[operator]}` cannot order them, so it fails for every item{hint}",
            string_pattern(right_node.value) if isinstance(right_node, nodes.Const) and isinstance(right_node.value, str) else rf"({_symbol_pattern(_COMPARISONS[operator])})",
        )

    def membership(self, operator: str, left_node: nodes.Node, left: Shape, right_node: nodes.Node, right: Shape) -> None:
        first, second = written(left_node) or "the left side", written(right_node) or "the right side"
        if isinstance(right, ListOf) and None not in (family(left), family(right.item)) and family(left) != family(right.item):
            never = "never true" if operator == "in" else "always true"
            self.report(left_node, f"{first} is {_described(left)} and the items of {second} are {_described(right.item)}: `{operator.replace('notin', 'not in')}` is {never}", None)
        elif isinstance(right, (Number, Boolean)) or isinstance(right, Text) and family(left) not in (None, "text"):
            self.report(left_node, f"{second} is {_described(right)}: `in` cannot look {first} up in it, so it fails for every item", None)

    def constant_outcome(self, operator: str, left_node: nodes.Node, left: Shape, right_node: nodes.Node, right: Shape) -> None:
        """A comparison of two numbers whose ranges decide its outcome (`rating > 7` for a
        rating from 1 to 5): what it guards never (or always) happens."""
        first, second = ranges.as_number(left), ranges.as_number(right)
        if first is None or second is None or operator not in _COMPARISONS:
            return
        if isinstance(left_node, nodes.Const) and isinstance(right_node, nodes.Const):
            return
        found = ranges.outcome(operator, first, second)  # type: ignore[arg-type]
        if found is None:
            self.constant_at_default(operator, left_node, first, right_node, second)
            return
        text = f"{written(left_node) or 'the left side'} {_COMPARISONS[operator]} {written(right_node) or 'the right side'}"
        why = "; ".join(f"{written(side)} is {number.span()}" for side, number in ((left_node, first), (right_node, second)) if not isinstance(side, nodes.Const) and written(side))
        self.warn(right_node, "constant-condition", f"`{text}` is {'always' if found else 'never'} true: {why}", rf"({_symbol_pattern(_COMPARISONS[operator])})")

    def constant_at_default(self, operator: str, left_node: nodes.Node, left: Number, right_node: nodes.Node, right: Number) -> None:
        """A comparison with an option whose range leaves it open but whose default decides it
        (`similarity >= options.min_similarity`, a share of 0 to 1 against a default of 80):
        the default is in another unit, or on another scale, than what it is compared with."""
        for option_node, other_node, other in ((left_node, right_node, right), (right_node, left_node, left)):
            path = path_of(option_node)
            default = self.option_defaults.get(path) if path is not None else None
            if default is None or not other.bounded or isinstance(other_node, nodes.Const) or not written(other_node):
                continue
            at_default = ranges.constant(default)
            sides = (at_default, other) if option_node is left_node else (other, at_default)
            found = ranges.outcome(operator, *sides)  # type: ignore[arg-type]
            if found is None:
                continue
            text = f"{written(left_node) or 'the left side'} {_COMPARISONS[operator]} {written(right_node) or 'the right side'}"
            self.defaults_deciding.append((path, text, other))  # type: ignore[arg-type]
            self.warn(
                right_node, "constant-at-default",
                f"`{text}` is {'always' if found else 'never'} true with {path} at its default {default:g}: {written(other_node)} is {other.span()}, "
                f"so every item is decided alike; is the default in another unit than {written(other_node)} (a percent against a share)?",
                rf"({_symbol_pattern(_COMPARISONS[operator])})",
            )
            return

    def call(self, node: nodes.Call, local: Mapping[str, Shape]) -> Shape:
        """What a call gives: a mapping written in the expression looked up (`{...}.get(key)`),
        or a function of filters.FUNCTIONS; anything else cannot be known."""
        callee = node.node
        if isinstance(callee, nodes.Getattr) and callee.attr == "get" and isinstance(callee.node, nodes.Dict) and node.args:
            return self.looked_up(callee.node, node.args, local)
        self.infer(callee, local)
        arguments = [self.infer(argument, local) for argument in node.args]
        for keyword in node.kwargs:
            self.infer(keyword.value, local)
        for extra in (node.dyn_args, node.dyn_kwargs):
            if extra is not None:
                self.infer(extra, local)
        name = callee.name if isinstance(callee, nodes.Name) and callee.name not in local and callee.name not in self.scope.names else None
        function = FUNCTIONS.get(name) if name is not None else None
        return function_gives(function, arguments) if function is not None else ANY

    def looked_up(self, literal: nodes.Dict, arguments: list[nodes.Expr], local: Mapping[str, Shape]) -> Shape:
        """`{...}.get(key, default)`: one of the mapping's values, or the default; keys that
        the key, an enum, never takes are reported."""
        for pair in literal.items:
            self.infer(pair.value, local)
        key = self.infer(arguments[0], local)
        if isinstance(key, Text) and key.enum:
            self.enum_keys(literal, key, arguments[0], every=False)
        defaults = [self.infer(argument, local) for argument in arguments[1:]]
        return self.values_of(literal, local, defaults[0] if defaults else ANY)

    # -- what a test tells

    def narrow(self, test: nodes.Node, local: Mapping[str, Shape], truthy: bool) -> dict[str, Shape]:
        """`local`, with what `test` being true (or false) tells of the names, fields and
        expressions it tests: for the code it guards."""
        found = dict(local)
        if isinstance(test, nodes.Not):
            return self.narrow(test.node, local, not truthy)
        if isinstance(test, nodes.And):
            return self.narrow(test.right, self.narrow(test.left, local, True), True) if truthy else found
        if isinstance(test, nodes.Or):
            return found if truthy else self.narrow(test.right, self.narrow(test.left, local, False), False)
        if isinstance(test, nodes.Test) and test.name in ("none", "defined", "undefined"):
            present = truthy != (test.name != "defined")
            key = self._key(test.node)
            if key is not None and present:
                shape = self.quietly(test.node, local) if test.name != "defined" else ANY
                found[key] = replace(shape, nullable=False) if shape is not ANY else ANY
            return found
        if isinstance(test, nodes.Compare) and len(test.ops) == 1:
            return self._compared(test, found, truthy)
        key = self._key(test)
        if key is not None:
            shape = self.quietly(test, local)
            found[key] = ranges.truthy(shape) if truthy else ranges.falsy(shape)
        if any(key.startswith(FACT) for key in found):
            found.setdefault(FACT, ANY)
        return found

    def _compared(self, test: nodes.Compare, found: dict[str, Shape], truthy: bool) -> dict[str, Shape]:
        operator = test.ops[0].op
        sides = [(test.expr, test.ops[0].expr, operator), (test.ops[0].expr, test.expr, ranges.FLIPPED.get(operator, operator))]  # type: ignore[call-overload]
        for subject, other, op in sides:
            key = self._key(subject)
            if key is None or op not in _COMPARISONS:
                continue
            if isinstance(other, nodes.Const) and other.value is None and op in ("eq", "ne"):
                if (op == "ne") == truthy:
                    found[key] = replace(self.quietly(subject, found), nullable=False)
                return found
            value = ranges.as_number(self.quietly(other, found))
            shape = ranges.as_number(self.quietly(subject, found))
            if shape is None or value is None or value.low != value.high or not math.isfinite(value.low):
                continue
            found[key] = ranges.compared_with(shape, op if truthy else ranges.NEGATED[op], value.low)
            if key.startswith(FACT):
                found[FACT] = ANY
            return found
        return found

    def _key(self, node: nodes.Node) -> str | None:
        """Where what is known of `node` is kept in `local`: its path, or its written text."""
        path = path_of(node)
        if path is not None:
            return path
        text = written(node)
        return FACT + text if text is not None and isinstance(node, (nodes.Filter, nodes.Call, nodes.BinExpr)) else None


def _numeric(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _symbol_pattern(symbol: str) -> str:
    escaped = "".join(f"\\{char}" for char in symbol)
    return rf"(?<![=!<>*/]){escaped}(?![=*/])" if symbol not in ("==", "!=", ">=", "<=") else escaped


#: Run fields an item may come without, unless the scorer requires them.
_OPTIONAL_FIELDS = ("input", "ground_truth", "turns", "expected_trajectory")


def _zero_words(number: Number) -> str:
    if number.low == 0 and number.integer and not math.isfinite(number.high):
        return "is 0 for an empty list or text"
    return f"can be 0 (it runs {number.span()})"
