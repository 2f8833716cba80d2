"""A default the docs restate is the code's default: every "`--flag` (default X)",
"`--flag` (X by default)" or "`key` (..., default X)" in README.md, docs/ and
examples/README.md is checked against the value the code uses, read from the code itself (the
options of every `scorers` command, as `--help` reads them; the judge's settings; the scripts
under bench/), so a default that changes in the code fails here until the sentence is fixed.
The store's default path and the side of the pass line are checked the same way."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import typer

from engine import builtin_catalog
from engine.catalog.queues import QueueSpec
from engine.catalog.spec import JudgeSpec, ScorerDefinition
from engine.cli import app
from engine.cli.common import DEFAULT_STORE
from engine.judge.config import JudgeConfig, Sampling
from engine.scoring.jury import DEFAULT_MARGIN

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", ROOT / "examples" / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]

#: A parenthesis that states a default: "(default 8)", "(default: 8)", "(or `N%`, default 0)",
#: "(0.1 by default)", and a sentence's "defaults to 8".
STATED = re.compile(
    r"\((?P<inside>[^()]*?(?:\bdefault:?\s+(?P<value>`[^`]+`|[^\s;,)]+)|(?P<before>`[^`]+`|\d[\d.,]*)\s+by default)[^()]*)\)"
    r"|\bdefaults to\s+(?P<to>`[^`]+`|[^\s;,)]+)"
)
#: Words after "default" that begin a phrase ("off by default for ..."), not a value.
PROSE = {"for", "of", "on", "in", "is", "when", "the", "a", "an", "and", "or", "to", "it", "its", "all", "with", "unless", "if", "value", "values"}
#: A name in backticks: a flag (`--concurrency`, `--max-errors N`) or a setting (`timeout`).
NAMED = re.compile(r"`(?P<name>--[a-z][\w-]*|[a-z_]+)(?:[ =][^`]*)?`")


def cli_commands() -> Iterator[Any]:
    """Every command of `scorers`, groups walked (`scorers queue create` ...)."""
    pending: list[Any] = [typer.main.get_command(app)]
    while pending:
        command = pending.pop()
        if hasattr(command, "list_commands"):
            pending += [command.get_command(None, name) for name in command.list_commands(None)]
        else:
            yield command


def cli_defaults() -> dict[str, set[str]]:
    """Each flag's defaults over every command (`--reasons` is `failing` for eval, `always`
    for run), as the command objects hold them; a default that the option leaves to the code
    (None) and its help states, "(default 60; SCORERS_TIMEOUT)", as the help says it."""
    found: dict[str, set[str]] = {}
    for command in cli_commands():
        for param in command.params:
            flags = [flag for flag in getattr(param, "opts", []) if flag.startswith("--")]
            values: list[Any] = []
            if isinstance(param.default, (str, int, float, Path)):
                values.append(param.default)
            stated = re.search(r"\bdefault:?\s+([^\s;,)]+)", getattr(param, "help", None) or "")
            if stated:
                values.append(stated.group(1))
            for flag in flags:
                found.setdefault(flag, set()).update(normal(value) for value in values)
    return found


def bench_defaults() -> dict[str, set[str]]:
    """The defaults of the bench scripts' own flags (docs/quality.md describes judge_quality's)."""
    found: dict[str, set[str]] = {}
    for script in sorted((ROOT / "bench").glob("*.py")):
        for call in ast.walk(ast.parse(script.read_text(encoding="utf-8"))):
            if not (isinstance(call, ast.Call) and getattr(call.func, "attr", "") == "add_argument" and call.args):
                continue
            flag = call.args[0]
            default = next((keyword.value for keyword in call.keywords if keyword.arg == "default"), None)
            if isinstance(flag, ast.Constant) and isinstance(flag.value, str) and default is not None:
                try:  # a literal, or a path built of literals; a default computed otherwise is left out
                    value = eval(compile(ast.Expression(default), str(script), "eval"), {"__builtins__": {}, "Path": Path, "str": str})  # noqa: S307 - the repository's own literals
                except NameError:
                    continue
                found.setdefault(flag.value, set()).add(normal(value))
    return found


def setting_defaults() -> dict[str, set[str]]:
    """The defaults of the settings a catalog's YAML names, from the models that read them."""
    judge = JudgeConfig.model_fields
    return {
        "timeout": {normal(judge["timeout"].default)},
        "retries": {normal(judge["http_retries"].default)},
        "reasks": {normal(Sampling.model_fields["reasks"].default)},
        "temperature": {normal(Sampling.model_fields["temperature"].default)},
        "max_input_chars": {normal(JudgeSpec.model_fields["max_input_chars"].default)},
        "long_input": {normal(JudgeSpec.model_fields["long_input"].default)},
        "empty_output": {normal(ScorerDefinition.model_fields["empty_output"].default)},
        "lease": {normal(QueueSpec.model_fields["lease"].default)},
        "margin": {normal(DEFAULT_MARGIN)},
    }


def option_defaults() -> dict[str, set[str]]:
    """The defaults of the built-in scorers' options (`scale`, `partial_weight` ...), over all
    scorers that declare each."""
    catalog = builtin_catalog()
    found: dict[str, set[str]] = {}
    for scorer_id in catalog.ids():
        for name, schema in (catalog.definition(scorer_id).options or {}).items():
            if isinstance(schema, dict) and isinstance(schema.get("default"), (str, int, float, bool)):
                found.setdefault(name, set()).add(normal(schema["default"]))
    return found


def code_defaults() -> dict[str, set[str]]:
    found = cli_defaults()
    for name, values in [*bench_defaults().items(), *setting_defaults().items(), *option_defaults().items()]:
        found.setdefault(name, set()).update(values)
    return found


def normal(value: Any) -> str:
    """A default as text that compares across spellings: 60 and 60.0, `'failing'` and failing."""
    text = str(getattr(value, "value", value)).strip("`'\" ").rstrip(":.")
    try:
        number = float(text.replace("_", "").replace(",", ""))
    except ValueError:
        return text.lower()
    return f"{number:g}"


def paragraphs(text: str) -> Iterator[tuple[int, str]]:
    """(first line, text) of each paragraph outside code blocks, its lines joined."""
    inside = False
    start, lines = 0, list[str]()
    for number, line in enumerate(text.splitlines(), 1):
        if line.startswith("```"):
            inside = not inside
            continue
        if inside or not line.strip():
            if lines:
                yield start, " ".join(lines)
            lines = []
            continue
        if not lines:
            start = number
        lines.append(line.strip())
    if lines:
        yield start, " ".join(lines)


def restated(text: str) -> Iterator[tuple[int, str, str]]:
    """(line, name, value) of each default the text states for a backticked name: the name
    must be the last one before the statement, within a few words of it."""
    for line, paragraph in paragraphs(text):
        for statement in STATED.finditer(paragraph):
            value = statement.group("value") or statement.group("before") or statement.group("to")
            if not value or value.lower() in PROSE:
                continue
            inside = statement.group("inside") or ""
            head = inside[: inside.find("default")] if statement.group("value") else ""
            in_head = list(NAMED.finditer(head))
            before = paragraph[max(0, statement.start() - 60) : statement.start()]
            named = list(NAMED.finditer(before))
            if in_head:
                yield line, in_head[-1].group("name"), value
            elif named and "`" not in before[named[-1].end() :]:  # nothing else named between
                yield line, named[-1].group("name"), value


def wrong_defaults(text: str, defaults: dict[str, set[str]]) -> list[str]:
    """What `text` states as a default and the code does not use, one line each."""
    wrong = []
    for line, name, value in restated(text):
        known = defaults.get(name)
        if known and all(len(default) > 30 for default in known):
            continue  # a sentence (a criterion's wording) is described, not restated
        if known and normal(value) not in known:
            wrong.append(f"line {line}: `{name}` is said to default to {value}; the code's default: {' or '.join(sorted(known))}")
    return wrong


def test_no_page_restates_a_default_that_differs_from_the_code() -> None:
    defaults = code_defaults()
    wrong = [f"{page.relative_to(ROOT)}: {message}" for page in PAGES for message in wrong_defaults(page.read_text(encoding="utf-8"), defaults)]
    assert wrong == []


def test_the_check_finds_restated_defaults_in_the_docs() -> None:
    """It reads the docs' own spellings: otherwise the test above would pass by finding nothing."""
    stated = {(name, normal(value)) for page in PAGES for _, name, value in restated(page.read_text(encoding="utf-8"))}
    assert {("--concurrency", "8"), ("--max-errors", "0"), ("--escalate-margin", "0.1"), ("--timeout", "60"), ("--retries", "2"), ("timeout", "60")} <= stated


def test_a_wrong_restated_default_is_caught() -> None:
    defaults = code_defaults()
    assert wrong_defaults("Calls in flight: `--concurrency` (default 8).", defaults) == []
    [wrong] = wrong_defaults("Calls in flight: `--concurrency` (default 16).", defaults)
    assert wrong.startswith("line 1: `--concurrency` is said to default to 16; the code's default: ") and " 8" in wrong
    assert wrong_defaults("`--max-errors N` (or `N%`,\ndefault 3) is how many", defaults) == [
        "line 1: `--max-errors` is said to default to 3; the code's default: 0"
    ]
    assert wrong_defaults("within `--escalate-margin` (0.25 by default) of it", defaults) != []
    assert wrong_defaults("Scorer-level only: `timeout` (seconds of silence, default 30)", defaults) != []
    assert wrong_defaults("`--reasons` defaults to sometimes", defaults) != []
    assert wrong_defaults("`--reasons` defaults to `failing`", defaults) == []


def test_the_help_states_the_judge_defaults_the_code_uses() -> None:
    """`--timeout` and `--retries` leave their default to the judge's settings; their help,
    which the docs are checked against, says what those settings hold."""
    defaults = cli_defaults()
    assert defaults["--timeout"] == {normal(JudgeConfig.model_fields["timeout"].default)}
    assert defaults["--retries"] == {normal(JudgeConfig.model_fields["http_retries"].default)}


def test_every_command_keeps_runs_in_the_store_the_docs_name() -> None:
    """concepts.md states the store's default path once, and names every command that uses it."""
    stores = {normal(param.default) for command in cli_commands() for param in command.params if "--store" in getattr(param, "opts", [])}
    assert stores == {normal(DEFAULT_STORE)}
    concepts = " ".join(line for _, line in paragraphs((ROOT / "docs" / "concepts.md").read_text(encoding="utf-8")))
    assert f"The store's default path is `{DEFAULT_STORE}`" in concepts
    group: Any = typer.main.get_command(app)
    users = {name for name in group.list_commands(None) if any("--store" in getattr(param, "opts", []) for param in commands_of(name))}
    named = set(re.findall(r"`(\w+)`", concepts[concepts.index("every command that reads or writes runs") :].split(")", 1)[0]))
    assert named == users


def commands_of(name: str) -> list[Any]:
    """The options of `scorers NAME`, or of every command of its group (`scorers queue ...`)."""
    group: Any = typer.main.get_command(app)
    command = group.get_command(None, name)
    if hasattr(command, "list_commands"):
        return [param for sub in command.list_commands(None) for param in command.get_command(None, sub).params]
    return list(command.params)


PYTHON_STORE = re.compile(r"""store=["']([^"']+\.sqlite)["']""")


def test_python_examples_save_where_the_pages_commands_read() -> None:
    """A page whose Python saves a run to another file than the commands' default says
    `--store` with that file to the commands that read it; otherwise `scorers results --run`
    after the page's Python looks in the wrong file."""
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        python = "".join(re.findall(r"```python\n(.*?)```", text, re.DOTALL))
        shell = "".join(re.findall(r"```bash\n(.*?)```", text, re.DOTALL))
        for store in set(PYTHON_STORE.findall(python)):
            assert store == DEFAULT_STORE or f"--store {store}" in shell, f"{page.relative_to(ROOT)}: store={store!r}"


SIDE = re.compile(r"\bat\s+or\s+(?:past|above|below|beyond|over|under)\s+the\s+(?:threshold|line|pass\s+line)", re.IGNORECASE)


def test_no_page_puts_a_score_on_the_line_on_the_flagged_side() -> None:
    """A score on the pass line passes (docs/guarantees.md#the-pass-line)."""
    for page in PAGES:
        assert SIDE.search(page.read_text(encoding="utf-8")) is None, page.relative_to(ROOT)
