"""Two mistakes of meaning that load fine, found by an author's blind set of mistakes: a pass
line written as a fraction of a wide scale, and a pattern whose `\\b` Jinja's quotes turned into
a backspace. Each is named at its line by `scorers check`."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from engine.cli import app

runner = CliRunner()


def _checked(tmp_path: Path, catalog: str) -> str:
    path = tmp_path / "catalog.yaml"
    path.write_text(catalog, encoding="utf-8")
    shown = runner.invoke(app, ["check", str(path)])
    return " ".join(shown.output.split())


def test_a_pass_line_written_as_a_fraction_of_a_0_to_100_scale_is_named_at_its_line(tmp_path: Path) -> None:
    shown = _checked(tmp_path, "scorers:\n  faithfulness-100:\n    extends: faithfulness\n    options:\n      scale: 100\n    threshold: 0.8\n")
    assert "catalog.yaml:6:16: warning: scorers.faithfulness-100.threshold: 0.8 is on the score's scale, 0 to 100" in shown, shown
    assert "if 0.8 of the way up was meant, write 80 [fraction-on-scale]" in shown
    # The line meant, and a fraction on the scale of 0 to 1, say nothing.
    assert "fraction-on-scale" not in _checked(tmp_path, "scorers:\n  faithfulness-100:\n    extends: faithfulness\n    options:\n      scale: 100\n    threshold: 80\n")
    assert "fraction-on-scale" not in _checked(tmp_path, "scorers:\n  strict:\n    extends: faithfulness\n    threshold: 0.8\n")


def test_a_pattern_whose_escape_jinja_read_as_a_backspace_is_named_at_its_line(tmp_path: Path) -> None:
    catalog = (
        "scorers:\n  no-todo:\n    name: No TODO\n    description: 1 when the output has no TODO, else 0.\n    direction: higher_is_better\n"
        "    steps:\n      - id: check\n        kind: compute\n        values:\n"
        "          todo: \"matches(output, '{pattern}')\"\n"
        "      - id: score\n        kind: score\n        score: \"0 if check.todo else 1\"\n"
    )
    shown = _checked(tmp_path, catalog.format(pattern="\\\\bTODO\\\\b"))
    assert "catalog.yaml:10:17: warning: scorers.no-todo.steps.0.values.todo: the text '\\x08TODO\\x08' holds a backspace, not `\\b`" in shown, shown
    assert "[control-character]" in shown
    assert "control-character" not in _checked(tmp_path, catalog.format(pattern="\\\\\\\\bTODO\\\\\\\\b"))
