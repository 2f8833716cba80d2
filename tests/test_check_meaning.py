"""The checks of what a scorer means, on one catalog per mistake an author editing from
docs/authoring.md makes (tests/meaning_catalogs/, each saying which on its first line): types
and ranges through expressions, what a prompt really shows, declarations that can never take
effect or that nothing reads, YAML's own surprises, and the place of each: `scorers check`
names every one at the author's own file and line. Certain mistakes are problems (exit 1);
the rest are warnings (exit 0), each silenced at its line by `# scorers: ignore[code]`."""

from __future__ import annotations

import json
import re
import shutil
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from engine import load_scorers
from engine.catalog import builtin_catalog_path, inspect_catalog
from engine.cli import app
from engine.errors import CatalogErrors, ConfigError
from engine.testing import JudgeServer

HERE = Path(__file__).resolve().parent / "meaning_catalogs"
ROOT = Path(__file__).resolve().parent.parent
runner = CliRunner()

# (catalog folder, exit status, the exact lines `scorers check` prints for it)
MISTAKES: list[tuple[str, int, list[str]]] = [
    ("answer_never_read", 0, [
        "answer_never_read/catalog.yaml:17:13: warning: professional-tone.formality: no later step reads 'formality', so its judge call is paid for nothing: read its answer in the score (or a prompt), or remove the step [unread-answer]",
    ]),
    ("bool_compared_with_text", 1, [
        "bool_compared_with_text/catalog.yaml:24:38: grounded-claims.score.values.grounded.where: item.grounded is true or false and 'true' is text: they are never equal, so `==` is never true (write `item.grounded` for true, `not item.grounded` for false)",
    ]),
    ("builtin_step_broken_by_own_schema", 1, [
        "builtin_step_broken_by_own_schema/catalog.yaml:4:14: strict-hallucination.score.values.hallucinated.where: item has no field 'verdict' (fields of an item of analyze.verdicts: statement, label, reason); it shows in the built-in scorers.yaml:66:26, which `extends: hallucination` brings in",
        "builtin_step_broken_by_own_schema/catalog.yaml:4:14: strict-hallucination.generate_reason: verdict has no field 'verdict' (fields of an item of analyze.verdicts: statement, label, reason); it shows in the built-in prompts/hallucination/reason.j2:11:31, which `extends: hallucination` brings in",
    ]),
    ("comparison_never_true", 0, [
        'comparison_never_true/catalog.yaml:19:33: warning: courteous.score.values.courteous.where: `item.rating > 7` is never true: item.rating is 1 to 5 [constant-condition]',
    ]),
    ("context_never_read", 0, [
        'context_never_read/catalog.yaml:9:13: warning: politeness.verdict: the step declares that it uses the context, but nothing in it reads `context`: the context is fetched for it (get_context called) for nothing; show it in the prompt, or drop the declaration [unread-context]',
    ]),
    ("counter_in_loop", 0, [
        "counter_in_loop/prompts/tone/reason.j2:4:8: warning: professional-tone.explain: 'flagged' is set inside the `{% for %}` at line 2, which changes only the loop's own copy: read after the loop (line 7), it still holds what it held before; keep a count in a namespace (`{% set ns = namespace(flagged=...) %}`, then `ns.flagged`) [set-in-loop]",
    ]),
    ("examples_never_shown", 0, [
        'examples_never_shown/catalog.yaml:17:9: warning: professional-tone.judgements.examples: the step\'s prompt never shows its worked examples: put `{% include "partials/examples.j2" %}` in tone/judge.j2 [examples-not-shown]',
    ]),
    ("filter_binds_tighter", 1, [
        'filter_binds_tighter/catalog.yaml:16:38: consistency.score.score: the score can be -1 to 1, outside the scale of the scores, 0 to 1 (`options.scale`); `| abs` takes only what is directly on its left, `tone.reply`: put brackets around what it should take, e.g. `(tone.question - tone.reply) | abs`',
    ]),
    ("input_not_required", 0, [
        "input_not_required/prompts/tone/judge.j2:4:4: warning: professional-tone.judgements: input may be none (an item may come without one: the scorer does not require `input`), and the judge then reads 'null' in the prompt: test it first (`{% if input %}`), or add `input` to the scorer's `requires:` [may-be-none]",
    ]),
    ("list_compared_with_number", 1, [
        'list_compared_with_number/catalog.yaml:7:37: strict-hallucination.analyze.skip_if: preprocess.claims is a list and 0 is the number 0: they are never equal, so `==` is never true; did you mean `preprocess.claims | length`?',
    ]),
    ("loop_variable_after_loop", 1, [
        "loop_variable_after_loop/prompts/tone/reason.j2:5:36: professional-tone.explain: 'judgement' is set only inside the `{% for %}` at line 2: here it is not defined, and rendering fails",
    ]),
    ("max_tokens_below_least_answer", 0, [
        "max_tokens_below_least_answer/catalog.yaml:9:19: warning: scorers.thorough-review.judge.max_tokens: 60 (a number of tokens) is less than the shortest answer the schema of step 'review' accepts, about 107 tokens (428 characters of JSON; evaluation needs at least 400 characters): every answer would be cut off; raise max_tokens to 107 or more [max-tokens]",
    ]),
    ("monitor_above_nan", 1, [
        'monitor_above_nan/catalog.yaml:10:12: monitors.hallucination_rising.above: no value is above NaN (.nan): the monitor would never alert',
    ]),
    ("monitor_min_samples_over_window", 1, [
        'monitor_min_samples_over_window/catalog.yaml:11:18: monitors.hallucination_rising.min_samples: 50 outcomes are needed before it alerts, but its window holds at most 20: the monitor would never alert; lower min_samples, or widen the window',
    ]),
    ("monitor_rate_above_one", 1, [
        'monitor_rate_above_one/catalog.yaml:10:12: monitors.hallucination_rising.above: error_rate is never above 20 (it runs 0 to 1): the monitor would never alert; a rate is a share: 20% is 0.2',
    ]),
    ("number_compared_with_text", 1, [
        "number_compared_with_text/catalog.yaml:19:36: courteous.score.values.courteous.where: item.rating is a number from 1 to 5 and '4' is text: `>=` cannot order them, so it fails for every item",
    ]),
    ("option_never_used", 0, [
        'option_never_used/catalog.yaml:9:7: warning: scorers.professional-tone.options.audience: no template, expression or rule reads `options.audience`, so passing it changes nothing: show it in a prompt (`{{ options.audience }}`) or use it in an expression, or remove it [unused-option]',
    ]),
    ("schema_default_off_bounds", 1, [
        "schema_default_off_bounds/schemas/helpful.yaml:5:60: rating.default: 0 is below the field's minimum (1): an answer that leaves the field out gets it",
    ]),
    ("score_beyond_scale", 1, [
        'score_beyond_scale/catalog.yaml:15:16: clarity.score.score: the score can be 1 to 10, outside the scale of the scores, 0 to 1 (`options.scale`)',
    ]),
    ("set_inside_if", 0, [
        "set_inside_if/prompts/tone/judge.j2:6:4: warning: professional-tone.judgements: 'asked' is set only when `{% if input %}` at line 2 holds (line 3): where it is not, rendering fails; set it before, or read it under the same test [maybe-undefined]",
    ]),
    ("sum_instead_of_mean", 1, [
        'sum_instead_of_mean/catalog.yaml:17:21: professional-tone.score.values.professional.reduce: `reduce: sum` is where this starts: at line 21, the score can be 0 to 50, outside the scale of the scores, 0 to 1 (`options.scale`); with `reduce: mean` it does not',
    ]),
    ("text_in_arithmetic", 1, [
        "text_in_arithmetic/catalog.yaml:15:34: helpfulness.score.score: evaluate.rating is one of '1', '2', '3', '4', '5' and 1 is the number 1: `-` cannot take them, so the expression fails for every item; evaluate.rating's values are text ('1', '2', '3', '4', '5'): give its schema `type: integer` (or `number`), or write `(evaluate.rating | int)`",
    ]),
    ("threshold_off_scale", 1, [
        "threshold_off_scale/catalog.yaml:8:16: scorers.clarity.threshold: 70 is outside the range of clarity's scores, 0 to 1 (the `scale` option)",
    ]),
    ("unclosed_print", 1, [
        'unclosed_print/prompts/polite.j2:3:1: polite.j2: template syntax error: `{{` opened here is never closed (no `}}` before the next tag or the end; Jinja gave up at line 5)',
    ]),
    ("yaml_norway", 1, [
        "yaml_norway/catalog.yaml:8:18: scorers.norwegian-hallucination.options.language.default: Input should be a valid string; YAML reads `no` as the boolean false: quote it ('no') for the text",
    ]),
    ("yaml_octal", 0, [
        "yaml_octal/catalog.yaml:11:18: warning: YAML reads `010` as 8, an octal number (it starts with 0): write 10, or quote it ('010') for the text [yaml-number]",
    ]),
    ("yaml_tab", 1, [
        'yaml_tab/catalog.yaml:5:1: invalid YAML: YAML does not allow tabs for indentation; use spaces',
    ]),
    # -- settings held to their units and to the settings they depend on (engine/catalog/setting_rules.py)
    ("cascade_margin_in_points", 1, [
        "cascade_margin_in_points/catalog.yaml:7:15: scorers.strict-hallucination.cascade.margin: 1 is on the score's scale (strict-hallucination's scores run 0 to 1): a margin of 0.5 or more sends every item to the strong judge; write a margin below 0.5, e.g. 0.1",
    ]),
    ("jury_margin_wider_than_scores", 1, [
        "jury_margin_wider_than_scores/catalog.yaml:7:15: scorers.jury-hallucination.judges.margin: 30 is on the score's scale (jury-hallucination's scores run 0 to 1): a margin of 1 or more is wider than any two scores can be apart, so the judges never disagree; write a margin below 1, e.g. 0.1",
    ]),
    ("jury_model_repeated", 0, [
        "jury_model_repeated/catalog.yaml:6:71: warning: scorers.jury-hallucination.judges.models: 'openai/gpt-4o-mini' is named more than once: the same model twice is one judge counted twice (at temperature 0 its answers are the same) [repeated-judge]",
    ]),
    ("majority_without_threshold", 1, [
        "majority_without_threshold/catalog.yaml:7:18: scorers.jury-hallucination.judges.aggregate: majority needs `threshold:` beside it (each judge's verdict is its score against the pass line): add `threshold:` beside `aggregate:`, on the score's scale (e.g. the scorer's own pass line), or aggregate by `mean`",
    ]),
    ("monitor_pass_rate_without_threshold", 1, [
        "monitor_pass_rate_without_threshold/catalog.yaml:8:16: monitors.passing_less.statistic: pass_rate needs `threshold:` beside it (a pass rate is the share of scores on the good side of a pass line): add `threshold:` beside `statistic:`, on the score's scale (e.g. the scorer's own pass line)",
    ]),
    ("queue_choices_in_other_case", 1, [
        "queue_choices_in_other_case/catalog.yaml:12:17: queues.claims-review.steps.choices: 'Yes' is not a value of the field it labels ('yes', 'no'): answers are compared as written, so it never agrees with the judge's; write the field's own values; did you mean 'yes'?",
    ]),
    # -- what the prompt asks for against what the schema accepts (engine/catalog/prompt_answers.py)
    ("prompt_key_misspelt", 0, [
        "prompt_key_misspelt/prompts/polite.j2:6:54: warning: politeness.judge: the prompt shows the key 'verdcit' in a JSON example, but the answer schema polite.yaml has no field 'verdcit'; did you mean 'verdict'? (its fields: reason, verdict): the judge is told to write what its answer cannot hold [prompt-key]",
    ]),
    ("prompt_lists_a_word_the_schema_refuses", 0, [
        'prompt_lists_a_word_the_schema_refuses/prompts/context-relevance/analyze.j2:6:3: warning: retrieval-relevance.analyze: the prompt shows "partly" in a list of the values of relevance, but relevance in context_relevance_verdicts.yaml is one of \'high\', \'partial\', \'none\': \'partly\' is none of them; did you mean \'partial\'?; ask for the schema\'s own values [prompt-value]',
    ]),
    ("prompt_value_in_other_case", 0, [
        'prompt_value_in_other_case/prompts/polite.j2:6:65: warning: politeness.judge: the prompt shows "verdict": "Yes" in a JSON example, but verdict in polite.yaml is one of \'yes\', \'no\': the answer must be written \'yes\': the case counts; ask for the schema\'s own values [prompt-value]',
    ]),
    ("prompt_offers_a_word_the_schema_refuses", 0, [
        'prompt_offers_a_word_the_schema_refuses/prompts/polite.j2:5:40: warning: politeness.judge: the prompt shows "unsure" on a line about verdict, but verdict in polite.yaml is one of \'yes\', \'no\': \'unsure\' is none of them; ask for the schema\'s own values [prompt-value]',
    ]),
    # -- literal text (engine/catalog/literal_text.py)
    ("backspace_in_pattern", 0, [
        "backspace_in_pattern/catalog.yaml:7:17: warning: scorers.no-error-word.options.pattern: the pattern holds a backspace, not `\\b`: in double quotes YAML reads `\\b` as a backspace; use single quotes ('...\\b...'), or write `\\\\b` [control-character]",
    ]),
    ("backspace_in_an_expression", 0, [
        "backspace_in_an_expression/catalog.yaml:11:17: warning: scorers.no-todo.steps.0.values.todo: the text '\\x08TODO\\x08' holds a backspace, not `\\b`: inside the expression's quotes Jinja reads `\\b` as a backspace, as Python does; write `\\\\b` there (`\\\\\\\\b` in YAML double quotes) [control-character]",
    ]),
    ("pass_line_as_a_fraction_of_the_scale", 0, [
        "pass_line_as_a_fraction_of_the_scale/catalog.yaml:7:16: warning: scorers.faithfulness-100.threshold: 0.8 is on the score's scale, 0 to 100 (the `scale` option): so near its bottom that it reads as a fraction of the scale; if 0.8 of the way up was meant, write 80 [fraction-on-scale]",
    ]),
    ("timeout_in_milliseconds", 0, [
        'timeout_in_milliseconds/catalog.yaml:7:16: warning: scorers.faithfulness-slow-judge.judge.timeout: 120000 is in seconds, 33.3 hours: were milliseconds meant? write 120 [seconds-as-milliseconds]',
    ]),
    ("language_code_of_another_language", 0, [
        "language_code_of_another_language/catalog.yaml:8:17: warning: scorers.korean-keywords.options.language: 'kr' is Kanuri, but the scorer's text names Korean: Korean is 'ko' [language-code]",
    ]),
    ("model_of_another_provider", 0, [
        "model_of_another_provider/catalog.yaml:6:14: warning: scorers.strict-hallucination.judge.model: gpt-4o is a model of openai, not one anthropic serves: write openai/gpt-4o (or the prefix of the service that hosts it) [model-provider]",
    ]),
    ("queue_field_not_in_entries", 1, [
        "queue_field_not_in_entries/catalog.yaml:11:15: queues.claims-review.steps.judged: 'verdikt' is not one of the fields of each entry of the labelled answer (statement, verdict, reason); did you mean 'verdict'?: name one of them",
    ]),
    ("samples_at_temperature_zero", 0, [
        "samples_at_temperature_zero/catalog.yaml:7:16: warning: scorers.strict-hallucination.cascade.samples: 3 (a count): samples of a judge at temperature 0 give the same answer, so they never disagree and only cost more; give the scorer's judge a temperature above 0 (e.g. `temperature: 0.7` under `judge:`), or take 1 sample [samples-never-differ]",
    ]),
    ("confidence_samples_at_temperature_zero", 0, [
        "confidence_samples_at_temperature_zero/catalog.yaml:6:27: warning: scorers.sampled-hallucination.judge.confidence_samples: 3 (a count): samples of a judge at temperature 0 give the same answer, so every verdict would count as certain at their cost; give the scorer's judge a temperature above 0 (e.g. `temperature: 0.7` under `judge:`), or leave confidence_samples out [samples-never-differ]",
    ]),
]


#: Mistakes whose message was silent, or at another line than the one to fix (the operand a
#: filter takes, the `aggregate:` of a jury, the author's own line of a scorer that `extends:`
#: a built-in): each at the author's line (docs/authoring.md, "Messages at your line").
AT_THE_AUTHORS_LINE: list[tuple[str, int, list[str]]] = [
    ("builtin_step_context_turned_off", 1, [
        'builtin_step_context_turned_off/catalog.yaml:7:23: strict-hallucination.analyze: `context` is not available here: a step that reads the context needs `uses_context: true`; it shows in the built-in prompts/hallucination/analyze.j2:19:26, which `extends: hallucination` brings in',
    ]),
    ("list_option_as_block", 1, [
        'list_option_as_block/catalog.yaml:6:25: scorers.polite-steps.options.evaluation_steps.default: Input should be a valid list; a `>-` block is one text, whatever its lines: write a list, one `- item` a line',
    ]),
    ("option_retyped_over_base", 1, [
        "option_retyped_over_base/catalog.yaml:7:15: type 'string' does not take 'items', which the declaration it overrides has: keep that declaration's type, or give the option another name",
    ]),
    ("max_tokens_below_bounded_answer", 0, [
        "max_tokens_below_bounded_answer/catalog.yaml:6:19: warning: scorers.thorough-hallucination.judge.max_tokens: 100 (a number of tokens) is less than the shortest answer the schema of step 'analyze' accepts, about 334 tokens (1334 characters of JSON; verdicts needs at least 30 items): every answer would be cut off; raise max_tokens to 334 or more [max-tokens]",
        'max_tokens_below_bounded_answer/catalog.yaml:8:13: warning: thorough-hallucination.analyze: most answers made from its schema and bounds for a sample item are refused: There are 3 claims but 30 verdicts. Give exactly one verdict per claim, in the same order as the claims. [answers-refused]',
    ]),
    ("pairwise_first_output_twice", 1, [
        'pairwise_first_output_twice/prompts/compare.j2:5:4: clearer.compare: the scorer is pairwise, but it shows `output`, the first, a second time (first at line 3), and never the second output, `metadata.second_output`: the judge compares the first output with itself; show the second as `{{ metadata.second_output | untrusted("response_2") }}`',
    ]),
    ("text_option_looped", 1, [
        'text_option_looped/catalog.yaml:10:15: scorers.polite.options.points.type: string, but `{% for %}` goes through `options.points` as a list, one character at a time, taking each character for an item; declare it `type: array` with `items: {type: string}` (and a list as its default)',
        'text_option_looped/prompts/polite.j2:2:17: polite.verdict: `options.points` is text: `{% for %}` goes through it one character at a time, taking each character for an item; make it a list (`type: array`, `items: {type: string}`), or show it whole (`{{ options.points }}`)',
    ]),
    ("text_option_joined", 1, [
        'text_option_joined/catalog.yaml:10:15: scorers.polite.options.points.type: string, but `| join` goes through `options.points` as a list, one character at a time, taking each character for an item; declare it `type: array` with `items: {type: string}` (and a list as its default)',
        'text_option_joined/prompts/polite.j2:1:36: polite.verdict: `options.points` is text: `| join` goes through it one character at a time, taking each character for an item; make it a list (`type: array`, `items: {type: string}`), or show it whole (`{{ options.points }}`)',
    ]),
]
CASES = MISTAKES + AT_THE_AUTHORS_LINE


def check(monkeypatch: pytest.MonkeyPatch, folder: Path, *paths: str) -> tuple[int, list[str]]:
    monkeypatch.chdir(folder)
    result = runner.invoke(app, ["check", *paths])
    assert "Traceback" not in result.output
    return result.exit_code, result.stdout.splitlines()


@pytest.mark.parametrize(("folder", "status", "expected"), CASES, ids=[folder for folder, _, _ in CASES])
def test_each_mistake_is_named_at_its_line(monkeypatch: pytest.MonkeyPatch, folder: str, status: int, expected: list[str]) -> None:
    assert check(monkeypatch, HERE, folder) == (status, expected)
    assert status == (1 if any(": warning: " not in line for line in expected) else 0)


def test_every_catalog_has_a_case() -> None:
    assert sorted(folder for folder, _, _ in CASES) == sorted(path.name for path in HERE.iterdir() if path.is_dir())
    for folder, _, _ in CASES:
        assert (HERE / folder / "catalog.yaml").read_text(encoding="utf-8").startswith("# "), folder  # says which mistake


def test_no_message_points_into_the_built_in_catalog() -> None:
    builtin = str(builtin_catalog_path().parent)
    for folder, _, expected in CASES:
        for line in expected:
            assert not line.startswith(builtin) and line.startswith(f"{folder}/"), line


def test_problems_stop_a_load_as_they_stop_check() -> None:
    for folder, status, expected in CASES:
        if status == 1:
            with pytest.raises(ConfigError) as raised:
                load_scorers(HERE / folder / "catalog.yaml")
            problems = raised.value.problems if isinstance(raised.value, CatalogErrors) else [raised.value]
            shown = [str(problem).replace(str(HERE) + "/", "") for problem in problems]
            assert shown == [line for line in expected if ": warning: " not in line], folder


# The catalogs whose mistake is one warning: silencing it at its line leaves nothing.
WARNED = [(folder, expected) for folder, status, expected in CASES if status == 0 and len(expected) == 1]


@pytest.mark.parametrize(("folder", "expected"), WARNED, ids=[folder for folder, _ in WARNED])
def test_a_warning_is_silenced_at_its_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, folder: str, expected: list[str]) -> None:
    shutil.copytree(HERE / folder, tmp_path / folder)
    [line] = expected
    found = re.match(rf"{folder}/(?P<file>[^:]+):(?P<line>\d+):\d+: warning: .* \[(?P<code>[a-z-]+)\]$", line)
    assert found is not None, line
    path = tmp_path / folder / found["file"]
    lines = path.read_text(encoding="utf-8").splitlines()
    number = int(found["line"]) - 1
    comment = f"{{# scorers: ignore[{found['code']}] #}}" if path.suffix == ".j2" else f"# scorers: ignore[{found['code']}]"
    above = path.suffix != ".j2" and lines[number].rstrip().endswith(":")  # a key whose value follows on the next lines
    if above:
        lines.insert(number, " " * (len(lines[number]) - len(lines[number].lstrip())) + comment)
    else:
        lines[number] = f"{lines[number]}  {comment}"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert check(monkeypatch, tmp_path, folder) == (0, [])
    # Another code on the line silences nothing.
    path.write_text(path.read_text(encoding="utf-8").replace(f"ignore[{found['code']}]", "ignore[something-else]"), encoding="utf-8")
    moved = line.replace(f":{found['line']}:", f":{int(found['line']) + 1}:", 1) if above else line
    assert check(monkeypatch, tmp_path, folder) == (0, [moved])


def test_json_gives_each_warning_its_code(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(HERE)
    shown = json.loads(runner.invoke(app, ["check", "set_inside_if", "--json"]).stdout)
    assert [(entry["line"], entry["severity"], entry["code"]) for entry in shown] == [(6, "warning", "maybe-undefined")]
    again = inspect_catalog(HERE / "set_inside_if")  # remembered: the code is kept with the warning
    assert [getattr(warning, "code", None) for warning in again.warnings] == ["maybe-undefined"]


def _workbench_check(folder: Path, store: Path) -> dict[str, Any]:
    from engine.workbench.server import Workbench

    started = Workbench(folder, store).start()
    try:
        request = urllib.request.Request(
            f"http://127.0.0.1:{started.port}/api/check", data=json.dumps({"files": {}}).encode(),
            headers={"Content-Type": "application/json", "Cookie": f"scorers_workbench={started.token}", "X-Workbench-Session": started.session_key},
        )
        with urllib.request.urlopen(request) as response:
            found: dict[str, Any] = json.loads(response.read().decode())
            return found
    finally:
        started.stop()


def test_a_threshold_off_the_scale_is_refused_by_run_eval_and_the_workbench(tmp_path: Path, judge: JudgeServer) -> None:
    [line] = next(expected for folder, _, expected in MISTAKES if folder == "threshold_off_scale")
    message = line.split(": ", 1)[1]
    catalog = HERE / "threshold_off_scale" / "catalog.yaml"
    ran = runner.invoke(app, ["run", "clarity", "--config", str(catalog), "--output", "A clear reply.", "--model", "openai/gpt-4o-mini"])
    assert ran.exit_code == 2 and f"{catalog}:8:16: {message}" in ran.output
    data = tmp_path / "items.jsonl"
    data.write_text('{"id": "a", "output": "A clear reply."}\n', encoding="utf-8")
    evaluated = runner.invoke(app, ["eval", str(data), "--scorer", "clarity", "--config", str(catalog), "--model", "openai/gpt-4o-mini", "--store", str(tmp_path / "r.sqlite")])
    assert evaluated.exit_code == 2 and f"{catalog}:8:16: {message}" in evaluated.output
    assert not judge.requests
    shutil.copytree(HERE / "threshold_off_scale", tmp_path / "mine")
    [problem] = _workbench_check(tmp_path / "mine", tmp_path / "r.sqlite")["problems"]
    assert (problem["path"], problem["line"], problem["column"], problem["message"]) == ("catalog.yaml", 8, 16, message)


def test_the_workbench_shows_warnings_beside_problems_at_their_lines(tmp_path: Path) -> None:
    shutil.copytree(HERE / "set_inside_if", tmp_path / "mine")
    found = _workbench_check(tmp_path / "mine", tmp_path / "r.sqlite")
    [line] = next(expected for folder, _, expected in MISTAKES if folder == "set_inside_if")
    assert found["problems"] == []
    [warning] = found["warnings"]
    assert (warning["path"], warning["line"], warning["column"]) == ("prompts/tone/judge.j2", 6, 4)
    assert warning["shown"].endswith(line.split(": ", 1)[1]) and "warning: " in warning["shown"]


AUTHORING = (ROOT / "docs" / "authoring.md").read_text(encoding="utf-8")


def test_the_docs_quote_each_check_as_it_prints() -> None:
    understands = AUTHORING[AUTHORING.index("### What `check` understands of a scorer") : AUTHORING.index("## Checks across options")]
    proves = AUTHORING[AUTHORING.index("## What check proves") :]
    proves = proves[: proves.find("\n## ", 1) if "\n## " in proves[1:] else len(proves)]
    proves = proves[: proves.index("### Messages at your line")] if "### Messages at your line" in proves else proves  # its own test below
    quoted = [line.strip() for block in re.findall(r"```text\n(.*?)```", understands + proves, re.DOTALL) for line in block.splitlines() if line.strip()]
    assert sorted(quoted) == sorted(line for _, _, expected in MISTAKES for line in expected)  # every case, each as printed


def test_the_docs_quote_each_message_at_its_line() -> None:
    section = AUTHORING[AUTHORING.index("### Messages at your line") :]
    section = section[: section.index("\n## ")] if "\n## " in section else section
    quoted = [line.strip() for block in re.findall(r"```text\n(.*?)```", section, re.DOTALL) for line in block.splitlines() if line.strip()]
    placed = [line for _, _, expected in AT_THE_AUTHORS_LINE for line in expected]
    binds = next(expected for folder, _, expected in MISTAKES if folder == "filter_binds_tighter")
    assert sorted(quoted) == sorted([*placed, *binds])  # every case, each as printed


def test_the_docs_silencing_comments_silence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    section = AUTHORING[AUTHORING.index("**Silencing a warning.**") :]
    yaml_line = re.search(r"```yaml\n(.*?)\n```", section, re.DOTALL)
    jinja_line = re.search(r"```jinja\n(.*?)\n```", section, re.DOTALL)
    assert yaml_line is not None and jinja_line is not None
    shutil.copytree(HERE / "comparison_never_true", tmp_path / "comparison_never_true")
    catalog = tmp_path / "comparison_never_true" / "catalog.yaml"
    text = catalog.read_text(encoding="utf-8")
    written = next(line for line in text.splitlines() if 'where: "item.rating > 7"' in line)
    catalog.write_text(text.replace(written, " " * (len(written) - len(written.lstrip())) + yaml_line.group(1).strip()), encoding="utf-8")
    shutil.copytree(HERE / "counter_in_loop", tmp_path / "counter_in_loop")
    template = tmp_path / "counter_in_loop" / "prompts" / "tone" / "reason.j2"
    lines = template.read_text(encoding="utf-8").splitlines()
    lines.insert(3, jinja_line.group(1))  # alone on the line above the warned one (line 4)
    template.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert check(monkeypatch, tmp_path, "comparison_never_true", "counter_in_loop") == (0, [])


@pytest.mark.parametrize(
    ("window", "expected"),
    [
        ("100000000000w", "catalog.yaml:8:13: monitors.rising.window: window '100000000000w': too long (at most 3650d)"),
        ("99999999999d", "catalog.yaml:8:13: monitors.rising.window: window '99999999999d': too long (at most 3650d)"),
        ("99999999999999999999999", "catalog.yaml:8:13: monitors.rising.window: a window of 99999999999999999999999 outcomes is more than a monitor reads (at most 1000000): write a time span (30m, 6h, 7d) for a longer one"),
    ],
)
def test_a_huge_monitor_window_is_one_line_at_its_place(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, window: str, expected: str) -> None:
    # It was "an internal error: Python int too large to convert to C int", with no place.
    (tmp_path / "catalog.yaml").write_text(
        "scorers:\n  strict:\n    extends: hallucination\nmonitors:\n  rising:\n    scorer: strict\n    statistic: mean\n"
        f"    window: {window}\n    above: 0.3\n",
        encoding="utf-8",
    )
    assert check(monkeypatch, tmp_path, "catalog.yaml") == (1, [expected])
    monitors = runner.invoke(app, ["monitor", "--monitors", "catalog.yaml", "--store", str(tmp_path / "r.sqlite")])
    assert monitors.exit_code == 2 and expected in monitors.output and "internal error" not in monitors.output


def test_a_test_a_select_names_is_one_jinja_has(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Jinja looks up the test of `select('name', ...)` only when it runs: every item then failed.
    (tmp_path / "catalog.yaml").write_text(
        "scorers:\n  short-sentences:\n    name: Short sentences\n    description: Share of short sentences. Higher is better.\n"
        "    direction: higher_is_better\n    requires: [output]\n    steps:\n      - id: count\n        kind: compute\n        values:\n"
        "          lengths: \"sentences(output) | map('length') | list\"\n          short: \"lengths | select('lesser', 120) | list | length\"\n"
        "      - id: score\n        kind: score\n        score: \"1 if count.short else 0\"\n", encoding="utf-8")
    status, lines = check(monkeypatch, tmp_path, "catalog.yaml")
    assert status == 1 and [line.split(": ", 2)[2] for line in lines if "catalog.yaml:12:" in line] == ["unknown test 'lesser'"], lines
