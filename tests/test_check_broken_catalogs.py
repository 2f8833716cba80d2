"""`scorers check` on one broken catalog per mistake an author makes: each is reported at
the place of the mistake itself, as FILE:LINE:COLUMN: message, with the name meant when one
is close, before any judge is called; every problem of every file in one pass; exit 1."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from engine import builtin_catalog, load_scorers
from engine.catalog import builtin_catalog_path
from engine.cli import app

HERE = Path(__file__).resolve().parent / "broken_catalogs"
ROOT = Path(__file__).resolve().parent.parent
#: The built-in prompts and schemas: the checkout, or the installed package's copy.
BUILTIN = builtin_catalog_path().parent

runner = CliRunner()

#: Where the built-in faithfulness scorer is defined, which a broken catalog reuses the id of.
FAITHFULNESS_LINE = (BUILTIN / "scorers.yaml").read_text(encoding="utf-8").splitlines().index("  faithfulness:") + 1

# (catalog folder, the exact lines `scorers check` prints for it), paths relative to HERE.
BROKEN: list[tuple[str, list[str]]] = [
    ('boolean_score', [
        "boolean_score/catalog.yaml:28:16: claims-check.score.score: 'hallucinated > 0.5' gives true or false, not a number (write `1 if ... else 0` to turn a condition into a number)",
    ]),
    ('compute_name_misspelt', [
        "compute_name_misspelt/catalog.yaml:11:19: word-count.count.values.total: unknown name 'word'; did you mean 'words'?",
    ]),
    ('builtin_id_reused', [
        f"builtin_id_reused/catalog.yaml:3:3: scorers.faithfulness: a built-in scorer has this id ({{builtin}}/scorers.yaml:{FAITHFULNESS_LINE}); write `replaces: true` in this scorer to replace it, `extends: faithfulness` to change it, or choose another id",
    ]),
    ('duplicate_step_id', [
        "duplicate_step_id/catalog.yaml:21:13: scorers.claims-check.steps.2.id: step id 'analyze' is used twice (first by step 2); step ids must be unique",
    ]),
    ('empty_not_a_number', [
        "empty_not_a_number/catalog.yaml:12:20: scorers.strict-hallucination.steps.2.values.hallucinated.empty: expected a number, got 'none'",
    ]),
    ('enum_value_never_produced', [
        "enum_value_never_produced/catalog.yaml:27:37: claims-check.score.values.hallucinated.where: item.verdict is one of 'yes', 'no': comparing it with 'Yes' is never true; did you mean 'yes'?",
    ]),
    ('expression_unclosed_bracket', [
        'expression_unclosed_bracket/catalog.yaml:28:20: claims-check.score.score: invalid expression: bracket ( is never closed',
    ]),
    ('extends_cycle', [
        'extends_cycle/catalog.yaml:4:14: scorers.first.extends: cycle second -> first -> second',
        'extends_cycle/catalog.yaml:6:14: scorers.second.extends: cycle first -> second -> first',
    ]),
    ('extends_unknown_scorer', [
        "extends_unknown_scorer/catalog.yaml:4:14: scorers.strict-hallucination.extends: unknown scorer 'halucination'; did you mean 'hallucination'?",
    ]),
    ('items_not_a_list', [
        "items_not_a_list/catalog.yaml:26:20: claims-check.score.values.hallucinated.items: 'analyze' is not a list (it has the fields verdicts); did you mean 'analyze.verdicts'?",
    ]),
    ('items_unknown_step', [
        "items_unknown_step/catalog.yaml:26:20: claims-check.score.values.hallucinated.items: unknown name 'analyse'; did you mean 'analyze'?",
    ]),
    ('jury_threshold_off_scale', [
        "jury_threshold_off_scale/catalog.yaml:8:18: scorers.strict-hallucination.judges.threshold: 70 is outside the range of strict-hallucination's scores, 0 to 1 (the `scale` option)",
    ]),
    ('key_indented_wrongly', [
        'key_indented_wrongly/catalog.yaml:14:8: invalid YAML: wrong indentation: this line lines up with no key or item of the list that starts at line 8',
    ]),
    ('missing_schema', [
        "missing_schema/catalog.yaml:16:17: claims-check.analyze: schema 'hallucination_verdict.yaml' not found in {here}/missing_schema/schemas, {builtin}/schemas; did you mean 'hallucination_verdicts.yaml'?",
    ]),
    ('missing_template', [
        "missing_template/catalog.yaml:11:17: claims-check.preprocess: template 'claims/extact.j2' not found in {builtin}/prompts; did you mean 'claims/extract.j2'?",
    ]),
    ('misspelt_score_name', [
        "misspelt_score_name/catalog.yaml:28:17: claims-check.score.score: unknown name 'hallucinatd'; did you mean 'hallucinated'?",
    ]),
    ('misspelt_step_key', [
        "misspelt_step_key/catalog.yaml:7:9: scorers.strict-hallucination.steps.1.promt: unknown key 'promt'; did you mean 'prompt'? (known: id, skip_if, kind, prompt, schema, uses_context, judge, rules, bounds, on_skip, examples)",
    ]),
    ('option_default_out_of_bounds', [
        'option_default_out_of_bounds/catalog.yaml:10:18: scorers.strict-hallucination.options.threshold.default: Input should be less than or equal to 1',
    ]),
    ('option_default_wrong_type', [
        'option_default_wrong_type/catalog.yaml:8:18: scorers.strict-hallucination.options.threshold.default: Input should be a valid number, unable to parse string as a number',
    ]),
    ('option_rule_unknown_option', [
        "option_rule_unknown_option/catalog.yaml:6:47: scorers.strict-hallucination.option_rules 1 check: options has no field 'scael'; did you mean 'scale'? (fields of options: scale, language)",
    ]),
    ('option_two_types', [
        'option_two_types/catalog.yaml:9:15: `type: [integer, string]`: a value has one type; a value that may be null is written `type: [integer, "null"]` or `anyOf: [{type: integer}, {type: "null"}]`',
    ]),
    ('ref_to_definitions', [
        "ref_to_definitions/schemas/verdicts.yaml:15:13: `$ref` '#/definitions/Verdict': the definitions of this file are under `$defs`; write '#/$defs/Verdict'",
    ]),
    ('rule_check_single_equals', [
        "rule_check_single_equals/catalog.yaml:8:39: strict-hallucination.analyze rule 1: invalid expression 'verdicts | length = preprocess.claims | length': chunk after expression; `=` sets a value: to compare, write `==`",
    ]),
    ('rule_check_syntax', [
        "rule_check_syntax/catalog.yaml:19:42: claims-check.analyze rule 1: invalid expression 'verdicts | length == (preprocess.claims | length': unexpected end of template, expected ')'.",
    ]),
    ('rule_message_unknown_field', [
        "rule_message_unknown_field/catalog.yaml:20:47: claims-check.analyze rule 1 message: preprocess has no field 'claimz'; did you mean 'claims'? (fields of preprocess: claims)",
    ]),
    ('schema_item_bound_wrong', [
        "schema_item_bound_wrong/schemas/tags.yaml:9:7: `maxLength` has a wrong value 'many'",
    ]),
    ('schema_pattern_unusable', [
        "schema_pattern_unusable/schemas/code.yaml:6:14: `pattern` '^(?=[A-Z])[A-Z0-9]{4}$' is not a regular expression answers can be checked with: look-around, including look-ahead and look-behind, is not supported",
    ]),
    ('schema_unknown_ref', [
        "schema_unknown_ref/schemas/verdicts.yaml:14:19: `$ref` '#/$defs/Verdit': no definition 'Verdit' under `$defs`; did you mean 'Verdict'? (defined: Verdict)",
    ]),
    ('several_problems', [
        "several_problems/catalog.yaml:11:37: strict-hallucination.score.values.hallucinated.where: item.verdict is one of 'yes', 'no': comparing it with 'Yes' is never true; did you mean 'yes'?",
        "several_problems/catalog.yaml:12:17: strict-hallucination.score.score: unknown name 'halucinated'; did you mean 'hallucinated'?",
        'several_problems/catalog.yaml:16:38: scorers.lenient-faithfulness.options.scale.default: Input should be greater than 0',
    ]),
    ('skip_if_later_step', [
        "skip_if_later_step/catalog.yaml:7:46: strict-hallucination.preprocess.skip_if: 'analyze' is the result of step 'analyze', which runs after this one",
    ]),
    ('step_out_of_steps', [
        'step_out_of_steps/catalog.yaml:12:5: invalid YAML: wrong indentation: a list item at the indentation of the keys of the mapping that starts at line 4; indent it under the key whose list it is in',
    ]),
    ('template_block_defined_twice', [
        "template_block_defined_twice/prompts/tone.j2:3: tone.j2: template error: block 'reply' defined twice",
    ]),
    ('template_later_step', [
        "template_later_step/prompts/tone.j2:1:41: tone.judge: 'score' is the result of step 'score', which runs after this one",
    ]),
    ('template_missing_import', [
        "template_missing_import/prompts/tone.j2:1:11: tone.j2: {% import %}: template 'partials/macros.j2' not found in {here}/template_missing_import/prompts, {builtin}/prompts; did you mean 'partials/blocks.j2'?",
    ]),
    ('template_missing_include', [
        "template_missing_include/prompts/tone.j2:2:12: tone.j2: {% include %}: template 'partials/blockz.j2' not found in {here}/template_missing_include/prompts, {builtin}/prompts; did you mean 'partials/blocks.j2'?",
    ]),
    ('template_misspelt_variable', [
        "template_misspelt_variable/prompts/tone.j2:2:4: tone.judge: unknown name 'ouptut'; did you mean 'output'?",
    ]),
    ('template_unclosed_if', [
        'template_unclosed_if/prompts/tone.j2:2:4: tone.j2: template syntax error: `{% if %}` is never closed (no `{% endif %}` after it)',
    ]),
    ('template_unsafe_attribute', [
        "template_unsafe_attribute/prompts/tone.j2:2:11: tone.judge: attribute '__class__' is not allowed: templates and expressions cannot reach Python internals",
        "template_unsafe_attribute/prompts/tone.j2:2:21: tone.judge: attribute '__mro__' is not allowed: templates and expressions cannot reach Python internals",
    ]),
    ('unclosed_bracket_in_yaml', [
        "unclosed_bracket_in_yaml/catalog.yaml:5:15: invalid YAML: a flow sequence opened here is not closed (expected ',' or ']', but got ':' at line 6)",
    ]),
    ('unclosed_quote_in_yaml', [
        'unclosed_quote_in_yaml/catalog.yaml:27:20: invalid YAML: the quote " opened here is not closed on its line (expected <block end>, but found \'<scalar>\' at line 28)',
    ]),
    ('unknown_field_in_where', [
        "unknown_field_in_where/catalog.yaml:27:26: claims-check.score.values.hallucinated.where: item has no field 'verdcit'; did you mean 'verdict'? (fields of an item of analyze.verdicts: statement, verdict, reason)",
    ]),
    ('unknown_option', [
        "unknown_option/catalog.yaml:28:40: claims-check.score.score: options has no field 'scal'; did you mean 'scale'? (fields of options: scale, language)",
    ]),
    ('unknown_step_kind', [
        "unknown_step_kind/catalog.yaml:22:15: scorers.claims-check.steps.2.kind: unknown step kind 'scroe'; did you mean 'score'? (kinds: llm, reason, score, compute)",
    ]),
    ('value_defined_below', [
        "value_defined_below/catalog.yaml:11:19: long-words.count.values.share: 'long' is defined below, line 13: a value sees only the values above it",
        "value_defined_below/catalog.yaml:11:26: long-words.count.values.share: 'total' is defined below, line 12: a value sees only the values above it",
    ]),
]


def check(monkeypatch: pytest.MonkeyPatch, *paths: str) -> tuple[int, list[str], str]:
    monkeypatch.chdir(HERE)
    result = runner.invoke(app, ["check", *paths])
    assert "Traceback" not in result.output
    lines = [line.replace(str(HERE), "{here}").replace(str(BUILTIN), "{builtin}").replace(str(ROOT), "{root}") for line in result.stdout.splitlines()]
    return result.exit_code, lines, result.stderr


@pytest.mark.parametrize(("folder", "expected"), BROKEN, ids=[folder for folder, _ in BROKEN])
def test_each_mistake_is_reported_at_its_own_place(monkeypatch: pytest.MonkeyPatch, folder: str, expected: list[str]) -> None:
    code, lines, summary = check(monkeypatch, folder)
    assert lines == expected
    assert code == 1
    assert f"{len(expected)} problem" in summary


def test_every_broken_catalog_has_a_case() -> None:
    assert sorted(folder for folder, _ in BROKEN) == sorted(path.name for path in HERE.iterdir() if path.is_dir())


def test_every_problem_of_every_file_in_one_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    folders = ["several_problems", "extends_cycle", "template_unsafe_attribute"]
    code, lines, summary = check(monkeypatch, *folders)
    expected = [line for folder in folders for line in dict(BROKEN)[folder]]
    assert lines == expected and len(expected) == 7
    assert code == 1
    assert "7 problems in 3 catalogs" in summary


def test_a_valid_catalog_passes(monkeypatch: pytest.MonkeyPatch) -> None:
    catalog = ROOT / "docs" / "examples" / "tone" / "catalog.yaml"
    code, lines, summary = check(monkeypatch, str(catalog))
    assert code == 0 and lines and all(": note: " in line for line in lines)  # nothing but notes of its default bounds
    assert f"ok: {len(load_scorers(catalog).ids())} scorers in 1 catalog" in summary


TONE_NOTES = [
    "docs/examples/tone/schemas/tone_judgements.yaml:5:3: note: judgements: at most 100 items in the judge's answer (the default bound; write maxItems to change it)",
    "docs/examples/tone/schemas/tone_judgements.yaml:11:9: note: judgements[].sentence: at most 1000 characters in the judge's answer (the default bound; write maxLength to change it)",
    "docs/examples/tone/schemas/tone_judgements.yaml:16:9: note: judgements[].reason: at most 1000 characters in the judge's answer (the default bound; write maxLength to change it)",
    "docs/examples/tone/schemas/tone_sentences.yaml:5:3: note: sentences: at most 100 items in the judge's answer (the default bound; write maxItems to change it)",
    "docs/examples/tone/schemas/tone_sentences.yaml:7:5: note: sentences[]: at most 1000 characters in the judge's answer (the default bound; write maxLength to change it)",
]


def test_check_notes_each_field_of_a_catalogs_own_schemas_left_to_a_default_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    for attempt in ("compiled", "remembered"):
        result = runner.invoke(app, ["check", "docs/examples/tone"])
        assert (result.exit_code, result.stdout.splitlines()) == (0, TONE_NOTES), attempt
        assert "warning" not in result.stderr and "note" not in result.stderr
    assert TONE_NOTES[2] in (ROOT / "docs" / "authoring.md").read_text(encoding="utf-8")  # the line the docs quote
    shown = json.loads(runner.invoke(app, ["check", "docs/examples/tone", "--json"]).stdout)
    assert [(entry["line"], entry["severity"]) for entry in shown] == [(5, "note"), (11, "note"), (16, "note"), (5, "note"), (7, "note")]


def test_bounds_an_author_wrote_and_the_built_in_schemas_get_no_note(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "schemas").mkdir()
    (tmp_path / "schemas" / "labels.yaml").write_text(
        "type: object\nrequired: [labels, why]\nproperties:\n"
        "  labels: {type: array, maxItems: 5, items: {type: string, maxLength: 40}}\n"
        "  why: {type: string, maxLength: 300}\n  mood: {type: string, enum: [calm, tense]}\n",
        encoding="utf-8",
    )
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "labels.j2").write_text("Label the mood of {{ output | untrusted('output') }}: calm or tense.", encoding="utf-8")
    (tmp_path / "catalog.yaml").write_text(
        "scorers:\n"
        "  labelled:\n    name: Labelled\n    description: labels the mood\n    direction: higher_is_better\n    requires: [output]\n"
        "    steps:\n      - {id: label, kind: llm, prompt: labels.j2, schema: labels.yaml}\n"
        "      - {id: score, kind: score, score: \"1 if label.mood == 'calm' else 0\"}\n"
        "  strict-hallucination:\n    extends: hallucination\n",  # the built-in verdicts schema, unbounded fields and all
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["check", "catalog.yaml"])
    assert (result.exit_code, result.stdout) == (0, ""), result.output


def test_without_a_path_the_built_in_catalog_is_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    code, lines, summary = check(monkeypatch)
    assert (code, lines) == (0, [])
    assert f"ok: {len(builtin_catalog().ids())} scorers in 1 catalog" in summary


def test_json_lists_each_problem_with_its_place(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(HERE)
    result = runner.invoke(app, ["check", "unknown_field_in_where", "--json"])
    [problem] = json.loads(result.stdout)
    assert problem["file"] == str(HERE / "unknown_field_in_where" / "catalog.yaml")
    assert (problem["line"], problem["column"]) == (27, 26)
    assert problem["message"].startswith("claims-check.score.values.hallucinated.where: item has no field 'verdcit'")
    assert result.exit_code == 1


def test_a_missing_catalog_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    code, lines, _ = check(monkeypatch, "no_such_catalog.yaml")
    assert code == 1
    assert lines == ["no_such_catalog.yaml: file not found"]
