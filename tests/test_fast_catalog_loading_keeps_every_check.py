"""Loading a catalog is fast (`scorers list` and `scorers check` start in well under half a
second) without losing a check: YAML read by libyaml gives the very places the pure parser
gives, an expression is checked exactly as Jinja's compiler would check it (its code is only
generated when it first runs), and a template or expression parsed once for many scorers is
still checked for each of them."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest
from jinja2 import meta

import engine.catalog.expressions as expressions
from engine import CatalogErrors, ConfigError, load_scorers
from engine.catalog import builtin_catalog, builtin_catalog_path
from engine.catalog.expressions import Expression
from engine.catalog.source import LocatedDict, LocatedList, _FastLocatingLoader, _load_located, _LocatingLoader, load_yaml

ROOT = Path(__file__).resolve().parent.parent


def _located(value: Any) -> Any:
    """Everything a loaded YAML value knows, places and source text included, as plain data."""
    if isinstance(value, LocatedDict):
        return (
            "map", value.place,
            [(key, _located(item), value.key_places[key], value.value_spans[key]) for key, item in value.items()],
        )
    if isinstance(value, LocatedList):
        return ("list", value.place, [(_located(item), place, span) for item, place, span in zip(value, value.item_places, value.item_spans)])
    return value


def _yaml_files() -> list[Path]:
    found = [ROOT / "scorers.yaml", *sorted((ROOT / "schemas").glob("*.yaml"))]
    for folder in ("tests", "examples", "docs"):
        found += sorted((ROOT / folder).rglob("*.yaml")) + sorted((ROOT / folder).rglob("*.yml"))
    return found


def test_libyaml_gives_every_key_value_and_item_the_place_the_pure_parser_gives() -> None:
    checked = 0
    for path in _yaml_files():
        text = path.read_text(encoding="utf-8")
        try:
            expected = _located(_load_located(_LocatingLoader, text, path))
        except Exception:
            continue  # a broken file is read by the pure parser only (see the next test)
        assert _located(_load_located(_FastLocatingLoader, text, path)) == expected, path
        checked += 1
    assert checked > 30


def test_places_count_characters_not_bytes_in_both_parsers(tmp_path: Path) -> None:
    path = tmp_path / "catalog.yaml"
    path.write_text("\ufeffa: \"é€😀 x\"\r\nb:\r\n  - 'ü😀'\r\n  - c: plain 😀 text\r\n    d: {e: [1, \"ß\u2028x\"]}\r\n    f: \"x\u0085y\"\r\n", encoding="utf-8")
    text = path.read_text(encoding="utf-8")
    fast = load_yaml(path)
    assert _located(fast) == _located(_load_located(_LocatingLoader, text, path))
    assert fast.value_spans["a"].raw == '"é€😀 x"'
    assert fast["b"][1].key_places["d"].line == 5 and fast["b"][1].value_spans["c"].raw == "plain 😀 text"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a: 'never closed\nb: 2\n", "the quote ' opened here is not closed on its line"),
        ("a: 1\na: 2\n", "duplicate key 'a'"),
        ("a: [1, 2\nb: 3\n", "invalid YAML"),
    ],
)
def test_a_yaml_mistake_is_reported_as_the_pure_parser_reports_it(tmp_path: Path, text: str, expected: str) -> None:
    path = tmp_path / "catalog.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as raised:
        load_yaml(path)
    assert expected in str(raised.value)
    assert raised.value.line is not None and str(path) in str(raised.value)


def _catalog_expressions() -> list[str]:
    seen: list[str] = []
    original = expressions._checked.__wrapped__

    def spy(source: str) -> tuple[frozenset[str], frozenset[str]]:
        seen.append(source)
        return original(source)

    expressions._checked.cache_clear()
    try:
        expressions._checked = spy  # type: ignore[assignment]
        builtin_catalog.cache_clear()
        builtin_catalog()
    finally:
        expressions._checked = expressions.functools.lru_cache(maxsize=4096)(original)
    return sorted(set(seen))


EDGE_CASES = [
    "min(a, b) + max(c, 1)", "x.y | default(3)", "items | map(attribute='v') | sum", "self", "loop.index",
    "a if b else c | nosuch", "x is nosuch", "x | nosuch", "x is defined and y is not none", "1 + 2 * 3",
    "dict(a=b)", "x[0].y['z']", "namespace(a=1)", "range(3) | list", "[v for v in x]", "x }} {{ y", "",
    "(x", "x ~ 'y' | upper", "a if b", "x | nosuch if y else z", "[x | nosuch2] | first", "x is nosuch if y else z",
]


def test_an_expression_is_refused_exactly_when_jinja_cannot_compile_it_and_with_its_message() -> None:
    environment = expressions._environment
    sources = _catalog_expressions()
    assert len(sources) > 100
    for source in [*sources, *EDGE_CASES]:
        try:
            environment.compile_expression(source, undefined_to_none=False)
            compiled_error = None
        except Exception as exc:
            compiled_error = getattr(exc, "message", str(exc))
        try:
            expression = Expression(source, "here")
            checked_error = None
        except ConfigError as exc:
            checked_error = exc.message
        if compiled_error is None:
            assert checked_error is None, source
            needs = meta.find_undeclared_variables(environment.parse(f"{{{{ {source} }}}}"))
            assert expression.names == needs, source  # what a step waits for is what Jinja says it needs
        else:
            assert checked_error == f"here: invalid expression {source!r}: {compiled_error}", source


def test_an_expression_still_runs_once_its_code_is_generated_on_first_use() -> None:
    expression = Expression("[alignment, coverage] | min * options.scale", "score")
    assert expression({"alignment": 0.5, "coverage": 0.8, "options": {"scale": 2}}) == 1.0


def _write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(textwrap.dedent(text), encoding="utf-8")
    return root / "catalog.yaml"


SCORER = """\
  {id}:
    name: {id}
    description: Whether the output is polite.
    direction: higher_is_better
    steps:
      - id: judge
        kind: llm
        prompt: polite.j2
        schema: verdict.yaml
      - id: score
        kind: score
        score: "1 if judge.verdict == 'yes' else 0"
"""


def test_a_mistake_in_a_template_many_scorers_share_is_found_for_each_and_reported_once(tmp_path: Path) -> None:
    path = _write(tmp_path, {
        "catalog.yaml": "scorers:\n" + SCORER.format(id="first") + SCORER.format(id="second"),
        "prompts/polite.j2": "Is this polite?\n{% include 'partials/rules.j2' %}\n",
        "prompts/partials/rules.j2": "Rules.\n{{ output | untrustd('output') }}\n",
        "schemas/verdict.yaml": "type: object\nproperties:\n  verdict: {type: string, enum: ['yes', 'no']}\nrequired: [verdict]\n",
    })
    with pytest.raises(CatalogErrors) as raised:
        load_scorers(path)
    problems = [str(problem) for problem in raised.value.problems]
    assert len(problems) == 1, problems
    assert "rules.j2:2" in problems[0] and "untrustd" in problems[0] and "untrusted" in problems[0]


@pytest.mark.parametrize(
    ("score", "column"),
    [("judge.verdict is yess", 34), ("1 if judge.verdict is yess else 0", 39), ("1 if judge.verdict is not yess else 0", 43)],
)
def test_an_unknown_test_in_an_expression_is_reported_at_load_at_its_place(tmp_path: Path, score: str, column: int) -> None:
    """Also inside a conditional, where Jinja would only fail once the branch runs."""
    path = _write(tmp_path, {
        "catalog.yaml": "scorers:\n" + SCORER.format(id="only").replace("1 if judge.verdict == 'yes' else 0", score),
        "prompts/polite.j2": "Is this polite?\n{{ output | untrusted('output') }}\n",
        "schemas/verdict.yaml": "type: object\nproperties:\n  verdict: {type: string, enum: ['yes', 'no']}\nrequired: [verdict]\n",
    })
    with pytest.raises(CatalogErrors) as raised:
        load_scorers(path)
    problem = raised.value.problems[0]
    assert "unknown test 'yess'" in str(problem) or "No test named 'yess'" in str(problem)
    assert (problem.path, problem.line, problem.column) == (str(path), 13, column), str(problem)


VERDICT = "type: object\nproperties:\n  verdict: {type: string, enum: ['yes', 'no']}\nrequired: [verdict]\n"


@pytest.mark.parametrize(
    ("prompt", "line", "message"),
    [
        ("{% block a %}{% endblock %}\n{% block a %}{% endblock %}\n", 2, "block 'a' defined twice"),
        ("{% for loop in [1] %}{{ output }}{% endfor %}\n", 1, "Can't assign to special loop variable"),
        ("{% macro m(caller) %}{{ caller() }}{% endmacro %}\n", 1, 'special "caller" argument must be omitted'),
        ("{% for x in [1] %}{% extends 'polite.j2' %}{% endfor %}\n", 1, "cannot use extend from a non top-level scope"),
    ],
    ids=["block-twice", "loop-variable", "caller-without-default", "extends-in-a-loop"],
)
def test_a_template_jinja_cannot_compile_is_reported_at_load_at_its_line(tmp_path: Path, prompt: str, line: int, message: str) -> None:
    """What Jinja's code generator refuses in a template that parses: reported at load, not
    dropped with its step, although a template's code is otherwise generated on first render."""
    path = _write(tmp_path, {"catalog.yaml": "scorers:\n" + SCORER.format(id="only"), "prompts/polite.j2": "Is this polite?\n" + prompt, "schemas/verdict.yaml": VERDICT})
    with pytest.raises(CatalogErrors) as raised:
        load_scorers(path)
    problems = [str(problem) for problem in raised.value.problems]
    assert any(f"polite.j2:{line + 1}:" in problem and message in problem for problem in problems), problems


def test_every_template_whose_code_waits_for_its_first_render_is_one_jinja_compiles() -> None:
    """A template's code is generated at load only when Jinja could refuse it: every built-in
    template (partials too) left for its first render is one Jinja's code generator accepts."""
    environment = expressions.sandbox()
    deferred = []
    for path in sorted((builtin_catalog_path().parent / "prompts").rglob("*.j2")):
        tree = environment.parse(path.read_text(encoding="utf-8"))
        if not environment._may_be_refused(tree):
            environment.compile(tree, raw=True)  # would raise TemplateAssertionError were the rule wrong
            deferred.append(path.name)
    assert len(deferred) > 20


def test_a_prompt_whose_code_is_generated_on_first_render_renders_as_written() -> None:
    prompt = builtin_catalog().plan("answer-relevancy").steps[0].prompt  # type: ignore[attr-defined]
    text = prompt.render({"output": "Paris is the capital.", "input": "What is the capital of France?", "options": {}})
    assert "<output>\nParis is the capital.\n</output>" in text
