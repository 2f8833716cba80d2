"""Mistakes a new scorer author makes, each reported where it was made (issue 19): YAML
indentation, optional options, divisions by a count that can be zero, a scorer replacing
another, thresholds off the score's scale, enum values the prompt never explains, and the
wording of the messages that name them."""

from __future__ import annotations

from engine.judge import JudgeSettings
import json
import re
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from engine import ConfigError, EvalItem, builtin_catalog, load_scorers, run_evals
from engine.cli import app
from engine.errors import DivisionByZero

ROOT = Path(__file__).resolve().parent.parent
BUILTINS = len(builtin_catalog().ids())


def write(folder: Path, text: str, name: str = "catalog.yaml") -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def problem(path: Path) -> str:
    with pytest.raises(ConfigError) as caught:
        load_scorers(path)
    return str(caught.value).replace(str(path.parent) + "/", "")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "scorers:\n  a:\n    name: A\n     description: one space too far\n",
            "catalog.yaml:4:6: invalid YAML: wrong indentation: this key is indented further than the keys above it, inside a value",
        ),
        (
            "scorers:\n  a:\n    name: A\n    description: Ratio: high\n",
            "catalog.yaml:4:23: invalid YAML: mapping values are not allowed here: a value holding ': ' must be quoted",
        ),
        (
            "scorers:\n  a:\n    name: A\n   description: one space too few\n",
            "catalog.yaml:4:4: invalid YAML: wrong indentation: this line lines up with no key or item of the mapping that starts at line 2",
        ),
    ],
)
def test_yaml_indentation_is_reported_at_the_line_indented_wrongly(tmp_path: Path, text: str, expected: str) -> None:
    assert problem(write(tmp_path, text)).startswith(expected)


OPTIONAL = """\
scorers:
  word-limit:
    name: Word limit
    description: 1 when the output has at most `limit` words, or when there is no limit.
    direction: higher_is_better
    options:
      limit:
        {limit}
    steps:
      - id: count
        kind: compute
        values:
          words: "words(output) | length"
      - id: score
        kind: score
        score: "(1 if options.limit is none or count.words <= options.limit else 0) * options.scale"
"""


@pytest.mark.parametrize(
    "limit",
    [
        '{type: [integer, "null"], minimum: 1}',
        '{anyOf: [{type: integer, minimum: 1}, {type: "null"}], default: null}',
        "{type: integer, minimum: 1}",  # absent: null until given
    ],
)
def test_an_option_may_be_null(tmp_path: Path, limit: str) -> None:
    catalog = load_scorers(write(tmp_path, OPTIONAL.replace("{limit}", limit)))
    assert catalog.create("word-limit").run(output="one two three").score == 1
    assert catalog.create("word-limit", options={"limit": None}).run(output="one two three").score == 1
    assert catalog.create("word-limit", options={"limit": 2}).run(output="one two three").score == 0
    with pytest.raises(Exception, match="greater than or equal to 1"):
        catalog.create("word-limit", options={"limit": 0})


@pytest.mark.parametrize(
    ("limit", "expected"),
    [
        ("{oneOf: [{type: integer}, {type: \"null\"}]}", "catalog.yaml:8:10: `oneOf` is not supported; a value that may be null is written"),
        ("{anyOf: [{type: integer}, {type: string}]}", "catalog.yaml:8:10: `anyOf` is supported only for a value that may be null"),
        ("{type: integer, default: null}", 'catalog.yaml:8:34: scorers.word-limit.options.limit.default: Input should be a valid integer; an option that may be null is written `type: [TYPE, "null"]`'),
    ],
)
def test_an_unsupported_union_is_refused_at_its_place(tmp_path: Path, limit: str, expected: str) -> None:
    assert problem(write(tmp_path, OPTIONAL.replace("{limit}", limit))).startswith(expected)


RATIO = """\
scorers:
  long-words:
    name: Long words
    description: Share of the output's words longer than six letters.
    direction: higher_is_better
    steps:
      - id: count
        kind: compute
        values:
          total: "words(output) | length"
          long: "words(output) | map('length') | select('gt', 6) | list | length"
      - id: score
        kind: score
        score: "{score}"
"""


def check_lines(monkeypatch: pytest.MonkeyPatch, folder: Path, *paths: str) -> tuple[int, list[str], str]:
    monkeypatch.chdir(folder)
    result = CliRunner().invoke(app, ["check", *paths])
    assert "Traceback" not in result.output
    return result.exit_code, result.stdout.splitlines(), result.stderr


def test_a_division_by_a_count_that_can_be_zero_is_a_warning_with_the_guard_to_write(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path, RATIO.replace("{score}", "count.long / count.total * options.scale"))
    code, lines, summary = check_lines(monkeypatch, tmp_path, "catalog.yaml")
    assert lines == [
        "catalog.yaml:14:30: warning: long-words.score.score: division by count.total, which is 0 for an empty list or text; "
        "guard it: `count.long / count.total if count.total else 0` [division-by-zero]"
    ]
    assert code == 0
    assert f"ok: {BUILTINS + 1} scorers in 1 catalog: 1 defined in catalog.yaml, {BUILTINS} built-in; 1 warning" in summary
    [shown] = json.loads(CliRunner().invoke(app, ["check", "catalog.yaml", "--json"]).stdout)
    assert (shown["line"], shown["column"], shown["severity"]) == (14, 30, "warning")


@pytest.mark.parametrize(
    "score",
    ["(count.long / count.total if count.total else 0) * options.scale", "(count.total and count.long / count.total) * options.scale"],
)
def test_a_guarded_division_is_not_a_warning(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, score: str) -> None:
    write(tmp_path, RATIO.replace("{score}", score))
    assert check_lines(monkeypatch, tmp_path, "catalog.yaml")[:2] == (0, [])


def test_at_run_time_a_zero_count_is_that_items_error_at_the_expressions_place(tmp_path: Path) -> None:
    path = write(tmp_path, RATIO.replace("{score}", "count.long / count.total * options.scale"))
    scorer = load_scorers(path).create("long-words")
    assert scorer.run(output="extraordinary tale").score == 0.5
    with pytest.raises(DivisionByZero) as caught:
        scorer.run(output="?!")  # not empty, but without a word
    assert str(caught.value) == (
        f"{path}:14:16: long-words.score.score: 'count.long / count.total * options.scale' failed: division by zero; "
        "when count.total can be 0, guard the division: `count.long / count.total if count.total else 0`"
    )
    items = [EvalItem(id="empty", output="?!"), EvalItem(id="two", output="extraordinary tale")]
    result = run_evals(items, [scorer], store=None)
    [empty, two] = result.items
    assert two.results["long-words"].score == 0.5
    assert empty.results["long-words"].error is not None and f"{path}:14:16" in empty.results["long-words"].error


def test_an_enum_value_the_prompt_never_explains_is_a_warning(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path, "scorers:\n  strict-hallucination:\n    extends: hallucination\n    steps:\n      - id: analyze\n        schema: verdicts.yaml\n")
    builtin = (ROOT / "schemas" / "hallucination_verdicts.yaml").read_text(encoding="utf-8")
    added = builtin.replace('enum: ["yes", "no"]', 'enum: ["yes", "no", "partly"]').replace('meaning: {"yes": bad, "no": good}', 'meaning: {"yes": bad, "no": good, "partly": neutral}')
    write(tmp_path, added, "schemas/verdicts.yaml")
    code, lines, _ = check_lines(monkeypatch, tmp_path, "catalog.yaml")
    lines = [line for line in lines if ": note: " not in line]  # its unbounded strings and list, noted
    assert lines == [
        "schemas/verdicts.yaml:16:31: warning: strict-hallucination.analyze: the enum value 'partly' of verdicts.verdict is never mentioned "
        "in the prompt hallucination/analyze.j2 and no expression compares with it: say in the prompt when the judge should answer it [unexplained-enum]"
    ]
    assert code == 0
    # A value the score compares with is read by the scorer: no warning.
    write(tmp_path, "scorers:\n  strict-hallucination:\n    extends: hallucination\n    steps:\n      - id: analyze\n        schema: verdicts.yaml\n"
          "      - id: score\n        values:\n          hallucinated:\n            reduce: ratio\n            items: analyze.verdicts\n"
          "            where: \"item.verdict in ['yes', 'partly']\"\n")
    code, lines, _ = check_lines(monkeypatch, tmp_path, "catalog.yaml")
    assert (code, [line for line in lines if ": note: " not in line]) == (0, [])


def test_check_says_how_many_scorers_the_file_defines(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path, OPTIONAL.replace("{limit}", '{type: [integer, "null"]}'))
    code, lines, summary = check_lines(monkeypatch, tmp_path, "catalog.yaml")
    assert (code, lines) == (0, [])
    assert f"ok: {BUILTINS + 1} scorers in 1 catalog: 1 defined in catalog.yaml, {BUILTINS} built-in" in summary
    # and again from the remembered check
    assert f"ok: {BUILTINS + 1} scorers in 1 catalog: 1 defined in catalog.yaml, {BUILTINS} built-in" in check_lines(monkeypatch, tmp_path, "catalog.yaml")[2]


def test_a_comparison_written_with_one_equals_sign_says_to_write_two(tmp_path: Path) -> None:
    path = write(tmp_path, RATIO.replace("{score}", "1 if count.total = 0 else 0"))
    assert problem(path).startswith("catalog.yaml:14:34: long-words.score.score: invalid expression: `=` sets a value; to compare, write `==`")


REPLACEMENT = """\
scorers:
  faithfulness:
    {replaces}name: Quoted
    description: 1 when the output is a passage of its input, word for word.
    direction: higher_is_better
    requires: [output, input]
    steps:
      - id: score
        kind: score
        score: "(1 if output in input else 0) * options.scale"
"""


def test_a_scorer_that_says_it_replaces_a_built_in_one_does(tmp_path: Path) -> None:
    catalog = load_scorers(write(tmp_path, REPLACEMENT.replace("{replaces}", "replaces: true\n    ")))
    assert catalog.definition("faithfulness").name == "Quoted"
    assert catalog.create("faithfulness").run(output="a b", input="a b c").score == 1
    assert len(catalog.ids()) == BUILTINS


def test_replaces_with_nothing_to_replace_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, REPLACEMENT.replace("faithfulness:", "quoted:").replace("{replaces}", "replaces: true\n    "))
    assert problem(path) == "catalog.yaml:3:5: scorers.quoted.replaces: no built-in scorer has the id 'quoted', so there is nothing to replace"


def test_the_shipped_variant_extends_the_built_in_of_its_own_id_without_replaces() -> None:
    variant = load_scorers(ROOT / "examples" / "variants" / "strict")
    assert "strict/analyze.j2" in str(variant.files("hallucination"))


def test_a_threshold_off_the_scores_scale_is_refused_naming_the_range(tmp_path: Path) -> None:
    catalog = load_scorers(write(tmp_path, RATIO.replace("{score}", "(count.long / count.total if count.total else 0) * options.scale")))
    scorer = catalog.create("long-words")
    with pytest.raises(ConfigError, match=r"threshold for long-words: 70 is outside the range of long-words's scores, 0 to 1 \(the `scale` option\)"):
        run_evals([EvalItem(output="a")], [scorer], store=None, thresholds={"long-words": 70})
    # on a scale of 100, 70 is a pass line
    assert run_evals([EvalItem(output="extraordinary")], [catalog.create("long-words", options={"scale": 100})], store=None, thresholds={"long-words": 70}).passed
    with pytest.raises(ConfigError, match="hallucination: threshold 70 is outside the range of hallucination's scores, 0 to 1"):
        builtin_catalog().create("hallucination", judge=JudgeSettings(models=["openai/a", "openai/b"], aggregate="majority", threshold=70, api_key="sk-test"))


def test_a_score_not_on_the_scale_takes_any_threshold(tmp_path: Path) -> None:
    catalog = load_scorers(write(tmp_path, RATIO.replace("{score}", "count.total")))
    result = run_evals([EvalItem(output="one two three")], [catalog.create("long-words")], store=None, thresholds={"long-words": 2})
    assert result.passed


DOCS = ROOT / "docs"
LONG_WORDS = DOCS / "examples" / "long-words" / "catalog.yaml"


def test_the_authoring_page_shows_the_long_words_catalog_as_it_is() -> None:
    page = (DOCS / "authoring.md").read_text(encoding="utf-8")
    [block] = re.findall(r"<!-- catalog: examples/long-words/catalog.yaml -->\n```yaml\n(.*?)```", page, flags=re.DOTALL)
    assert block == LONG_WORDS.read_text(encoding="utf-8")


def test_the_long_words_example_runs_as_the_page_says(monkeypatch: pytest.MonkeyPatch) -> None:
    assert check_lines(monkeypatch, DOCS, "examples/long-words")[:2] == (0, [])  # its division is guarded: no warning
    catalog = load_scorers(LONG_WORDS)
    assert catalog.create("long-words").run(output="Extraordinary tale").score == 0.5
    assert catalog.create("long-words", options={"min_letters": None}).run(output="a b").score == 1
    result = run_evals([EvalItem(id="no words", output="?!"), EvalItem(id="words", output="Extraordinary tale")], [catalog.create("long-words")], store=None)
    [empty, words] = result.items
    assert empty.results["long-words"].not_scorable == "the output has no words"
    assert words.results["long-words"].score == 0.5
    assert result.scores == {"long-words": 0.5}
    assert result.summary["long-words"].not_scorable == 1


def test_the_bounds_written_on_a_lists_items_are_sent_to_the_judge_and_enforced(tmp_path: Path) -> None:
    """`items: {type: string, maxLength: 20}` bounds each item; it used to be dropped unread."""
    folder = ROOT / "tests" / "broken_catalogs" / "schema_item_bound_wrong"
    shutil.copytree(folder, tmp_path / "tagged")
    schema = tmp_path / "tagged" / "schemas" / "tags.yaml"
    schema.write_text(schema.read_text(encoding="utf-8").replace("maxLength: many", "maxLength: 20\n      pattern: '^[a-z]+$'"), encoding="utf-8")

    model = load_scorers(tmp_path / "tagged" / "catalog.yaml").plan("tagged").steps[0].answer_model

    assert model is not None
    items = model.model_json_schema()["properties"]["tags"]["items"]
    assert items["maxLength"] == 20 and items["pattern"] == "^[a-z]+$"  # what the judge is sent
    assert model.model_validate({"tags": ["polite", "short"]})
    for wrong in (["x" * 21], ["Polite"]):
        with pytest.raises(ValueError):
            model.model_validate({"tags": wrong})
