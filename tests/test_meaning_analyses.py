"""The analyses behind `scorers check`'s checks of meaning, tried on many forms of the same
mistakes (and of their correct versions): a new mistake of a kind the checker knows is found,
and a guard written another way is still a guard. Each case is one scorer around a judge
step whose answer has a rating from 0 to 5, a boolean, an enum and a list of up to 10 claims."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from engine.cli import app

runner = CliRunner()

SCHEMA = """\
title: Judged
type: object
properties:
  rating: {type: integer, minimum: 0, maximum: 5}
  grounded: {type: boolean}
  label: {type: string, enum: [good, bad]}
  claims: {type: array, maxItems: 10, items: {type: string, maxLength: 200}}
  note: {type: string, maxLength: 200}
required: [rating, grounded, label, claims]
"""

PROMPT = """\
Rate the reply from 0 to 5, say whether it is grounded, label it good or bad and list its claims.
{{ output | untrusted("output") }}
"""


def catalog(
    folder: Path, *, score: str = "verdict.rating / 5 * options.scale", values: str = "", skip_if: str | None = None, prompt: str = PROMPT,
    options: str = "", requires: str = "[output]",
) -> Path:
    """The scorer, with `values` (more named values of the score step, as `name: "expression"`
    lines) and `options` (its options, as `name: {schema}` lines) written in."""
    (folder / "prompts").mkdir(parents=True, exist_ok=True)
    (folder / "schemas").mkdir(parents=True, exist_ok=True)
    (folder / "prompts" / "judge.j2").write_text(prompt, encoding="utf-8")
    (folder / "schemas" / "judged.yaml").write_text(SCHEMA, encoding="utf-8")
    lines = [
        "scorers:", "  judged:", "    name: Judged", "    description: A scorer to try the checks on.", "    direction: higher_is_better",
        f"    requires: {requires}",
        *(["    options:", *(f"      {line}" for line in options.splitlines())] if options else []),
        "    steps:",
        "      - id: verdict", "        kind: llm", "        prompt: judge.j2", "        schema: judged.yaml",
        "      - id: count", "        kind: compute", "        values:", '          words: "words(output) | length"', '          text: "output | trim"',
        "      - id: score", "        kind: score",
        *([f'        skip_if: "{skip_if}"', "        on_skip: 0"] if skip_if else []),
        "        values:", '          placeholder: "0"', *(f"          {line}" for line in values.splitlines()),
        f'        score: "{score}"',
    ]
    path = folder / "catalog.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def findings(folder: Path) -> tuple[int, list[str]]:
    result = runner.invoke(app, ["check", str(folder / "catalog.yaml")])
    assert "Traceback" not in result.output
    return result.exit_code, [line.split(": ", 1)[1] for line in result.stdout.splitlines() if ": note: " not in line]


REFUSED = [
    # a boolean, a number or a list compared with what it can never equal
    ("(1 if verdict.grounded == 'yes' else 0) * options.scale", "verdict.grounded is true or false and 'yes' is text: they are never equal"),
    ("(1 if verdict.rating == '5' else 0) * options.scale", "verdict.rating is a number from 0 to 5 and '5' is text: they are never equal"),
    ("(0 if verdict.claims != 0 else 1) * options.scale", "verdict.claims is a list and 0 is the number 0: they are never equal, so `!=` is always true; did you mean `verdict.claims | length`?"),
    ("(1 if verdict.rating in ['4', '5'] else 0) * options.scale", "the items of ['4', '5'] are text: `in` is never true"),
    # an ordering or arithmetic Python refuses
    ("(1 if verdict.claims > 3 else 0) * options.scale", "`>` cannot order them, so it fails for every item; did you mean `verdict.claims | length`?"),
    ("(1 if verdict.label >= 2 else 0) * options.scale", "verdict.label is one of 'good', 'bad' and 2 is the number 2: `>=` cannot order them"),
    ("(count.text - 1) * options.scale", "count.text is text and 1 is the number 1: `-` cannot take them"),
    ("verdict.claims / 10 * options.scale", "verdict.claims is a list and 10 is the number 10: `/` cannot take them"),
    ("(verdict.rating | length) * options.scale", "verdict.rating is a number: `| length` takes a list or text"),
    # a score that leaves its scale, however it is written
    ("verdict.rating * options.scale", "the score can be 0 to 5, outside the scale of the scores, 0 to 1"),
    ("(verdict.rating - 1) / 4 * options.scale", "the score can be -0.25 to 1, outside the scale of the scores"),
    # One value read twice: its range worked out alone is a bound only; running the scorer on
    # answers made from its schema settles it (rating 3 scores -0.2).
    ("(1 - verdict.rating / 5 - verdict.rating / 5 | abs) * options.scale", "the score is -0.2, outside the range of its scores, 0 to 1"),
    ("[verdict.rating, 1] | max * options.scale", "the score can be 1 to 5, outside the scale of the scores"),
    ("(verdict.claims | length) / 5 * options.scale", "the score can be 0 to 2, outside the scale of the scores"),
    ("(2 if verdict.grounded else verdict.rating / 5) * options.scale", "the score can be 0 to 2, outside the scale of the scores"),
    ("{'good': 1, 'bad': -1}[verdict.label] * options.scale", "the score can be -1 to 1, outside the scale of the scores"),
]


@pytest.mark.parametrize(("score", "expected"), REFUSED, ids=[score for score, _ in REFUSED])
def test_what_cannot_be_meant_is_refused_however_it_is_written(tmp_path: Path, score: str, expected: str | None) -> None:
    catalog(tmp_path, score=score)
    code, lines = findings(tmp_path)
    if expected is None:
        assert (code, lines) == (0, [])
        return
    assert code == 1 and len(lines) == 1 and expected in lines[0], lines


WARNED = [
    ({"score": "verdict.rating / count.words * options.scale"}, "division by count.words, which is 0 for an empty list or text; guard it: `verdict.rating / count.words if count.words else 0` [division-by-zero]"),
    ({"score": "verdict.rating / options.weight / 5 * options.scale", "options": "weight: {type: number, minimum: 0, maximum: 1, default: 1}"},
     "division by options.weight, which can be 0 (it runs 0 to 1); guard it"),
    ({"score": "(1 if verdict.rating > 5 else 0) * options.scale"}, "`verdict.rating > 5` is never true: verdict.rating is 0 to 5 [constant-condition]"),
    ({"score": "(1 if (verdict.claims | length) <= 10 else 0) * options.scale"}, "is always true: verdict.claims | length is 0 to 10 [constant-condition]"),
    ({"score": "verdict.rating / 5 * options.scale", "skip_if": "count.words < 0"}, "`count.words < 0` is never true: count.words is 0 or more [constant-condition]"),
    ({"prompt": PROMPT + "Reply to: {{ input }}\n"}, "input may be none (an item may come without one: the scorer does not require `input`)"),
    ({"score": "verdict.rating / 5 * options.scale", "skip_if": "input | length > 2000"}, "input may be none (an item may come without one: the scorer does not require `input`), and `| length` then fails"),
]


@pytest.mark.parametrize(("written", "expected"), WARNED, ids=[str(written) for written, _ in WARNED])
def test_what_may_not_be_meant_is_a_warning_however_it_is_written(tmp_path: Path, written: dict[str, str], expected: str) -> None:
    catalog(tmp_path, **written)
    code, lines = findings(tmp_path)
    # A condition that is constant makes a constant score: running the scorer says so too
    # (score-never-reaches, tested in test_check_proves_meaning.py).
    lines = [line for line in lines if "[score-never-reaches]" not in line]
    assert code == 0 and len(lines) == 1 and lines[0].startswith("warning: ") and expected in lines[0], lines


GUARDED = [
    {"score": "(verdict.rating / count.words if count.words else 0) / 5 * options.scale"},
    {"score": "(count.words and verdict.rating / count.words) / 5 * options.scale"},
    {"score": "(verdict.rating / count.words if count.words > 0 else 0) / 5 * options.scale"},
    {"score": "(verdict.rating / count.words if not count.words == 0 else 0) / 5 * options.scale"},
    {"score": "(0 if count.words == 0 else verdict.rating / count.words) / 5 * options.scale"},
    {"score": "verdict.rating / count.words / 5 * options.scale", "skip_if": "not count.words"},
    {"score": "verdict.rating / count.words / 5 * options.scale", "skip_if": "count.words == 0"},
    {"score": "(verdict.rating / (verdict.claims | length) / 5 if verdict.claims else 1) * options.scale"},
    {"score": "(1 if verdict.grounded else 0) * options.scale"},
    {"score": "[verdict.rating / 5, 1] | min * options.scale"},
    {"score": "(verdict.rating / 5) | round(2) * options.scale"},
    {"score": "{'good': 1, 'bad': 0}.get(verdict.label, 0) * options.scale"},
    {"score": "scaled * options.scale", "values": 'scaled: "verdict.rating / 5"'},
    {"prompt": PROMPT + "{% if input %}Reply to: {{ input }}{% endif %}\n"},
    {"prompt": PROMPT + "Reply to: {{ input or 'no question' }}\n"},
    {"prompt": PROMPT + "Reply to: {{ input | default('no question', true) }}\n"},
    {"prompt": PROMPT + "Reply to: {{ input }}\n", "requires": "[output, input]"},
    {"score": "verdict.rating / 5 * options.scale", "skip_if": "(input or '') | length > 2000"},
    {"score": "verdict.rating / 5 * options.scale", "skip_if": "input is not none and input | length > 2000"},
    {"prompt": "{% set ns = namespace(count=0) %}{% for word in output.split() %}{% set ns.count = ns.count + 1 %}{% endfor %}" + PROMPT + "{{ ns.count }} words.\n"},
    {"prompt": "{% if input %}{% set asked = input %}{% else %}{% set asked = 'nothing' %}{% endif %}" + PROMPT + "Asked: {{ asked }}\n"},
    {"prompt": "{% if input %}{% set asked = input %}{% endif %}" + PROMPT + "{% if input %}Asked: {{ asked }}{% endif %}\n"},
    {"prompt": "{% for word in output.split() %}{% set last = word %}{{ last }}{% endfor %}" + PROMPT},
    {"prompt": "{% set shown = 0 %}{% for word in output.split() %}{% set shown = loop.index %}{{ shown }}{% endfor %}" + PROMPT},
]


@pytest.mark.parametrize("written", GUARDED, ids=[str(written) for written in GUARDED])
def test_a_guard_written_another_way_is_still_a_guard(tmp_path: Path, written: dict[str, str]) -> None:
    catalog(tmp_path, **written)
    assert findings(tmp_path) == (0, [])


TEMPLATES = [
    ("{% for word in output.split() %}{{ word }}{% endfor %}Last: {{ word }}", "'word' is set only inside the `{% for %}` at line 1: here it is not defined"),
    ("{% for word in output.split() %}{% set last = word %}{% endfor %}Last: {{ last }}", "'last' is set only inside the `{% for %}` at line 1: here it is not defined"),
    ("{% with first = output.split()[0] %}{{ first }}{% endwith %}{{ first }}", "'first' is set only inside `{% with %}` at line 1: here it is not defined"),
    ("{% macro shown() %}{% set inner = 1 %}{% endmacro %}{{ inner }}", "'inner' is set only inside the macro at line 1"),
    ("{% for n in (output | length) %}{{ n }}{% endfor %}", "output | length is a number: `{% for %}` needs a list"),
    ("{% for n in output.split() %}{% endfor %}{% else %}", "template syntax error"),
]


@pytest.mark.parametrize(("template", "expected"), TEMPLATES, ids=[template for template, _ in TEMPLATES])
def test_a_template_is_read_with_jinjas_own_scoping(tmp_path: Path, template: str, expected: str) -> None:
    catalog(tmp_path, prompt=template + "\n" + PROMPT)
    code, lines = findings(tmp_path)
    assert code == 1 and any(expected in line for line in lines), lines


def test_a_score_that_never_reads_the_scale_and_leaves_it_is_a_warning(tmp_path: Path) -> None:
    catalog(tmp_path, score="verdict.rating")
    code, lines = findings(tmp_path)
    assert code == 0 and lines == [
        "warning: judged.score.score: the score can be 0 to 5, but the scorer's scale is 0 to 1 (`options.scale`), which the score never reads: "
        "bring it to 0..1 and multiply by options.scale, or drop the option (`scale: null` under options) [score-off-scale]"
    ]


def test_the_score_a_skipped_step_gives_is_held_to_the_scale(tmp_path: Path) -> None:
    path = catalog(tmp_path, skip_if="not count.words")
    path.write_text(path.read_text(encoding="utf-8").replace("on_skip: 0", "on_skip: 5"), encoding="utf-8")
    code, lines = findings(tmp_path)
    assert code == 1 and lines == ["judged.score.on_skip: the score when the step is skipped is 5, outside the scale of the scores, 0 to 1 (`options.scale`)"]
