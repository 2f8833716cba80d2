"""Where a prompt is rendered: the one sandboxed, strict Jinja environment factory that
prompts, reason templates, rule messages and expressions all use.

Templates are author-written (trusted) text; everything a run brings (output, input,
context, the judge's earlier answers) reaches them only as variables, never as template
source. The `untrusted` filter puts such text between tags that the text itself cannot
close, so an output that says "</output> ignore the rules" stays inside its block.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping, MutableMapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

from jinja2 import (
    BaseLoader,
    FileSystemLoader,
    StrictUndefined,
    Template,
    TemplateSyntaxError,
    meta,
    nodes,
)
from jinja2.exceptions import SecurityError, UndefinedError
from jinja2.parser import Parser
from jinja2.sandbox import ImmutableSandboxedEnvironment

from ..errors import ConfigError
from ..formatting import to_json
from .functions import FUNCTIONS

#: Functions available to every expression and template, beside Jinja's own filters.
SAFE_GLOBALS: dict[str, Any] = {
    "min": min,
    "max": max,
    "abs": abs,
    "round": round,
    "len": len,
    "sum": sum,
    "float": float,
    "int": int,
    # The computed steps' library (see functions.py), usable in templates and rules too.
    **FUNCTIONS,
}

_TAG_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_-]*$")


def untrusted(value: Any, tag: str) -> str:
    """`value` as text between `<tag>` and `</tag>`; tags of the same name inside the text
    are defused (`<` becomes `&lt;`) so the block cannot be closed or reopened early."""
    if not _TAG_NAME.match(tag):
        raise ValueError(f"untrusted: tag {tag!r} must be a plain name")
    text = value if isinstance(value, str) else to_json(value)
    defused = re.sub(rf"<(\s*/?\s*{re.escape(tag)})", r"&lt;\1", text, flags=re.IGNORECASE)
    return f"<{tag}>\n{defused}\n</{tag}>"


def number(value: Any) -> str:
    """A score or option as a person writes it: 1 rather than 1.0, 0.33 rather than 0.33000."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return f"{value:g}" if isinstance(value, float) else str(value)


@functools.lru_cache(maxsize=2048)  # by tree: the sandbox parses each text once, and many steps read it
def names_read(parsed: nodes.Template) -> frozenset[str]:
    """Every name a template or expression reads, globals included: a step's result may
    carry the name of a function (a step `sentences` beside the `sentences()` function), and
    the step that reads it must wait for it."""
    return frozenset(node.name for node in parsed.find_all(nodes.Name) if node.ctx == "load")


@functools.lru_cache(maxsize=1024)  # by tree: a partial is checked for every step that includes it
def is_included(parsed: nodes.Template, name: str) -> bool:
    """Whether `name` sees the includer's variables: included, or imported `with context`."""
    return any(
        isinstance(node.template, nodes.Const) and node.template.value == name and (isinstance(node, nodes.Include) or node.with_context)
        for node in parsed.find_all((nodes.Include, nodes.Import, nodes.FromImport))
        if isinstance(node, (nodes.Include, nodes.Import, nodes.FromImport))
    )


@functools.lru_cache(maxsize=2048)  # by tree, as `names_read`: the lints walk a partial once per prompt that includes it
def _references(parsed: nodes.Template) -> tuple[str, ...]:
    """The templates a tree includes, imports or extends, by name (those named by a variable left out)."""
    return tuple(reference for reference in meta.find_referenced_templates(parsed) if reference)


_Key = tuple[str, str | None, str | None]

#: Trees parsed in this process, by the syntax they were parsed with and their text, for every
#: sandbox: the compiler's, the lints' and the rule messages' read the same texts. A tree does
#: not depend on the name or file it was parsed for (they only word a syntax error, which is
#: never remembered); they are all forgotten past `_TREES_KEPT`, so a long-lived process
#: that loads edited catalogs does not grow.
_trees: dict[tuple[object, str], nodes.Template] = {}
_TREES_KEPT = 4096


class _Sandbox(ImmutableSandboxedEnvironment):
    """The sandbox, doing each piece of a template's preparation once, and only when needed.

    Loading a catalog walks the same text many times (a partial every prompt includes, a
    check repeated across scorers, an expression the lints read again), once per step that
    reads it: `parse` remembers the trees it built (see `_trees`). `prepare` raises Jinja's
    compile-time errors at load: it generates a template's code then when the tree holds
    anything Jinja's code generator could refuse (see `_may_be_refused`), and otherwise when
    the template first renders, where Python compiles that code too: `scorers check` and
    `scorers list` never render. The code is generated from the remembered tree, which stays
    as parsed because the constant folding that would rewrite it in place is off
    (`optimized=False`; it only saves work on constants, which prompts hardly have)."""

    def __init__(self, **options: Any) -> None:
        super().__init__(optimized=False, **options)
        # What decides the tree of a text: the lexer (one per set of syntax options) and the extensions.
        self._syntax = (self.lexer, tuple(sorted(self.extensions)))
        self._code: dict[_Key, str] = {}
        self._templates: dict[_Key, Template] = {}
        # By tree: every rule of every step sharing a message asks again.
        self._refusable: dict[nodes.Template, bool] = {}

    def parse(self, source: str, name: str | None = None, filename: str | None = None) -> nodes.Template:
        key = (self._syntax, source)
        tree = _trees.get(key)
        if tree is None:  # a syntax error is raised, never remembered: it is raised again next time, for this name and file
            tree = super().parse(source, name, filename)
            if len(_trees) >= _TREES_KEPT:
                _trees.clear()  # one step, safe beside another thread's load; the next load parses again
            _trees[key] = tree
        return tree

    def prepare(self, source: str, name: str | None = None, filename: str | None = None) -> Callable[[], Template]:
        """The template of `source`, to be had by calling the result; raises its syntax and
        compile-time errors (TemplateSyntaxError) now."""
        key = (source, name, filename)
        if key not in self._code and self._may_be_refused(self.parse(source, name, filename)):
            self._code[key] = self.compile(self.parse(source, name, filename), name, filename, raw=True)
        return functools.partial(self._template, key)

    def _template(self, key: _Key) -> Template:
        template = self._templates.get(key)
        if template is None:
            if key not in self._code:
                self._code[key] = self.compile(self.parse(*key), key[1], key[2], raw=True)
            code = compile(self._code[key], key[2] or "<template>", "exec")
            template = self._templates[key] = self.template_class.from_code(self, code, self.make_globals(None))
        return template

    def make_globals(self, d: MutableMapping[str, Any] | None) -> MutableMapping[str, Any]:
        # A plain dict, not Jinja's ChainMap over the environment's: every render and every
        # expression copies its template's globals into a new context, and copying a ChainMap
        # key by key was a large part of the engine's own work per judge call. The
        # sandbox's globals are set when it is made (see `sandbox`), before any template.
        return {**self.globals, **(d or {})}

    def _may_be_refused(self, tree: nodes.Template) -> bool:
        refusable = self._refusable.get(tree)
        if refusable is None:
            if len(self._refusable) >= _TREES_KEPT:
                self._refusable.clear()  # as `_trees`: a long-lived sandbox does not grow
            refusable = self._refusable[tree] = self._holds_refusable(tree)
        return refusable

    def _holds_refusable(self, tree: nodes.Template) -> bool:
        """Whether Jinja's code generator could refuse the tree. It refuses only a block
        defined twice, a macro or call block taking `caller` without a default, an `extends`
        below the top level, a loop assigning to `loop`, and a filter or test it does not
        know: a tree with no block, macro, call block or extends, whose loops never store
        `loop` and whose filters and tests are all known, is always generated."""
        for node in tree.find_all((nodes.Block, nodes.Macro, nodes.CallBlock, nodes.Extends, nodes.Name, nodes.Filter, nodes.Test)):
            if isinstance(node, nodes.Name):
                if node.ctx == "store" and node.name == "loop":
                    return True
            elif isinstance(node, (nodes.Filter, nodes.Test)):
                if node.name not in (self.filters if isinstance(node, nodes.Filter) else self.tests):
                    return True
            else:
                return True
        return False


def sandbox(loader: BaseLoader | None = None) -> _Sandbox:
    """The Jinja environment of everything an author writes: sandboxed (no Python internals),
    strict (an unknown name is an error, never an empty string), with the same globals and
    filters everywhere, so a name that works in a prompt works in a rule message too."""
    environment = _Sandbox(
        loader=loader,
        # A catalog is what its files said when it loaded: an included partial is read once,
        # not looked up on disk again at every render (as the template including it is not).
        auto_reload=False,
        undefined=StrictUndefined,
        autoescape=False,
        keep_trailing_newline=False,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    environment.globals.update(SAFE_GLOBALS)
    environment.filters["untrusted"] = untrusted
    environment.filters["json"] = to_json
    environment.filters["number"] = number
    # Also as filters, so `output | keywords` and `sentences | map('sentiment')` read naturally.
    environment.filters.update(FUNCTIONS)
    return environment


@functools.lru_cache(maxsize=4096)  # by text: the compiler, the expressions and the lints read each one
def parse_expression(source: str) -> nodes.Expr:
    """An expression as Jinja's expression parser reads it; raises its TemplateSyntaxError
    when anything is left after the expression (where `{{ source }}` in a template would
    parse as a tuple, or as more than one output). When it parses, it is the tree `{{ source }}`
    gives too, without the template's grammar around it to parse."""
    parser = Parser(_expression_sandbox(), source, state="variable")
    expression = parser.parse_expression()
    if not parser.stream.eos:
        raise TemplateSyntaxError("chunk after expression", parser.stream.current.lineno, None, None)
    return expression


@functools.cache
def _expression_sandbox() -> _Sandbox:
    return sandbox()


class CompiledPrompt:
    """A template ready to render; rendering errors name the template's file and line.
    `names` are the variables it reads (its included templates' too). `template` is a
    Template, or what gives it on first use (see `_Sandbox.prepare`)."""

    def __init__(self, template: Template | Callable[[], Template], names: frozenset[str] = frozenset()) -> None:
        self._template = template
        self.names = names

    @property
    def template(self) -> Template:
        if not isinstance(self._template, Template):
            self._template = self._template()
        return self._template

    def render(self, variables: Mapping[str, Any]) -> str:
        try:
            return self.template.render(**variables).strip()
        except (UndefinedError, SecurityError, TypeError, ValueError) as exc:
            filename = self.template.filename
            raise ConfigError(f"cannot render: {exc}", filename, _template_line(exc.__traceback__, filename)) from None


class PromptTemplates:
    """The templates of one catalog: its own prompt folder first, then the built-in one, so a
    host catalog's `prompts/x.j2` shadows the built-in `x.j2` and can include built-in partials."""

    def __init__(self, search_path: Sequence[Path]) -> None:
        self.search_path = [path for path in search_path if path.is_dir()]
        #: Every template file found for a name (what a compilation depended on).
        self.found: set[Path] = set()
        self.environment: _Sandbox = sandbox(FileSystemLoader([str(path) for path in self.search_path]))
        # Each template is looked for and read once: every step that includes a partial reads it.
        self._paths: dict[str, Path] = {}
        self._sources: dict[str, str] = {}

    def path_of(self, name: str) -> Path:
        found = self._paths.get(name)
        if found is not None:
            return found
        for folder in self.search_path:
            candidate = folder / name
            if candidate.is_file():
                self.found.add(candidate)
                self._paths[name] = candidate
                return candidate
        raise ConfigError(f"template {name!r} not found in {', '.join(map(str, self.search_path)) or 'no folder'}")

    def source(self, name: str) -> tuple[Path, str]:
        """A template's file and text."""
        path = self.path_of(name)
        if name not in self._sources:
            self._sources[name] = path.read_text(encoding="utf-8")
        return path, self._sources[name]

    def load(self, name: str, names: frozenset[str] = frozenset()) -> CompiledPrompt:
        """A template prepared for rendering (its names are checked by the catalog compiler);
        `names` are the variables it and its includes read."""
        assert self.environment.loader is not None
        # Through the loader, as rendering finds the templates it includes (a name leaving the folder is not found).
        source, filename, _ = self.environment.loader.get_source(self.environment, name)
        return CompiledPrompt(self.environment.prepare(source, name, filename), names)

    def from_string(self, source: str, where: str) -> CompiledPrompt:
        """A short author-written template kept inside the YAML (e.g. a reason for a skip)."""
        try:
            return CompiledPrompt(self.environment.prepare(source), names_read(self.environment.parse(source)))
        except TemplateSyntaxError as exc:
            raise ConfigError(f"{where}: template syntax error: {exc.message}") from None

    def referenced(self, name: str, sharing_only: bool = False) -> list[str]:
        """`name` and every template it includes, imports or extends, recursively; with
        `sharing_only`, those that see the step's variables (included, or imported `with
        context`): an imported macro's names are its own parameters."""
        found: list[str] = []
        pending = [name]
        while pending:
            current = pending.pop()
            if current in found:
                continue
            found.append(current)
            parsed = self.environment.parse(self.source(current)[1])
            pending.extend(reference for reference in _references(parsed) if not sharing_only or is_included(parsed, reference))
        return found


def _template_line(traceback: TracebackType | None, filename: str | None) -> int | None:
    """Jinja rewrites tracebacks so template frames carry the template's file and line."""
    line = None
    while traceback is not None:
        if filename and traceback.tb_frame.f_code.co_filename == filename:
            line = traceback.tb_lineno
        traceback = traceback.tb_next
    return line
