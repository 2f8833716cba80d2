"""`scorers check` and `scorers list` remember a catalog that compiled clean, so an unchanged
catalog is not compiled again; any change to what the compilation read (the catalog, a
template, a schema, a file added in front of another, the engine itself) and it is compiled
again, so a mistake is always reported, never hidden by what was remembered."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers.catalogs import POLITE_CATALOG, write_catalog
from typer.testing import CliRunner

import engine.catalog as catalog_module
import engine.catalog.compile as compile_module
from engine.catalog import check_catalog, verified
from engine.cli import app

runner = CliRunner()

PROMPT = "Is this polite?\n{{ output | untrusted('output') }}\n"
SCHEMA = "type: object\nproperties:\n  verdict: {type: string, enum: ['yes', 'no']}\nrequired: [verdict]\n"

#: The built-in scorers (a host catalog of one scorer offers one more).
BUILT_IN = len(yaml.safe_load(catalog_module.builtin_catalog_path().read_text(encoding="utf-8"))["scorers"])


def write(root: Path, schema: str = "verdict.yaml") -> Path:
    return write_catalog(root, {"catalog.yaml": POLITE_CATALOG.format(schema=schema), "prompts/polite.j2": PROMPT, "schemas/verdict.yaml": SCHEMA})


@pytest.fixture
def compilations(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The catalogs compiled from now on (a host catalog compiled without the built-in
    scorers it offers is listed with `(own scorers)` after its name)."""
    compiled: list[Any] = []
    real = compile_module.compile_catalog  # read when a catalog is compiled, not when engine.catalog is imported

    def counting(source: Any, read: Any = None, with_inherited: bool = True, warnings: Any = None) -> Any:
        compiled.append(source.path if with_inherited else (source.path, "(own scorers)"))
        return real(source, read, with_inherited, warnings)

    monkeypatch.setattr(compile_module, "compile_catalog", counting)
    return compiled


def test_an_unchanged_clean_catalog_is_checked_once(tmp_path: Path, compilations: list[Path]) -> None:
    path = write(tmp_path)
    assert check_catalog(path) == ([], BUILT_IN + 1)
    assert check_catalog(path) == ([], BUILT_IN + 1)
    assert check_catalog(None) == ([], BUILT_IN)
    assert check_catalog(None) == ([], BUILT_IN)
    assert compilations == [path.resolve(), catalog_module.builtin_catalog_path().resolve()]


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (lambda root: (root / "prompts/polite.j2").write_text("Is this polite?\n{{ outptu }}\n", encoding="utf-8"), "polite.j2:2"),
        (lambda root: (root / "schemas/verdict.yaml").write_text(SCHEMA.replace("string", "strnig"), encoding="utf-8"), "verdict.yaml:3"),
        (lambda root: (root / "catalog.yaml").write_text(POLITE_CATALOG.format(schema="verdict.yaml").replace("== 'yes'", "== 'yse'"), encoding="utf-8"), "catalog.yaml:13"),
        # A template of the host's folder, added in front of the built-in one of the same name.
        (lambda root: _shadow(root / "prompts", _builtin_templates()[0], "{{ outptu }}\n"), ".j2:1"),
    ],
)
@pytest.mark.parametrize("builtin_remembered", [False, True], ids=["alone", "beside-the-remembered-builtin-catalog"])
def test_any_change_to_what_was_checked_is_checked_again(tmp_path: Path, change: Any, expected: str, builtin_remembered: bool) -> None:
    if builtin_remembered:
        assert check_catalog(None) == ([], BUILT_IN)
    path = write(tmp_path)
    assert check_catalog(path) == ([], BUILT_IN + 1)
    change(tmp_path)
    problems, _ = check_catalog(path)
    assert problems and any(expected in str(problem) for problem in problems), [str(problem) for problem in problems]


def _shadow(folder: Path, name: str, text: str) -> None:
    (folder / name).parent.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(text, encoding="utf-8")


def _builtin_templates() -> list[str]:
    folder = catalog_module.builtin_catalog_path().parent / "prompts"
    return sorted(str(path.relative_to(folder)) for path in folder.rglob("*.j2") if "partials" not in path.parts)


def test_a_broken_catalog_is_never_remembered(tmp_path: Path, compilations: list[Path]) -> None:
    path = write(tmp_path)
    (tmp_path / "prompts/polite.j2").write_text("{{ outptu }}\n", encoding="utf-8")
    for _ in range(2):
        problems, count = check_catalog(path)
        assert count == 0 and "outptu" in str(problems[0])
    (tmp_path / "prompts/polite.j2").write_text(PROMPT, encoding="utf-8")
    assert check_catalog(path) == ([], BUILT_IN + 1)
    assert len(compilations) == 3


def test_another_engine_checks_again(tmp_path: Path, compilations: list[Path], monkeypatch: pytest.MonkeyPatch) -> None:
    path = write(tmp_path)
    check_catalog(path)
    monkeypatch.setattr(verified, "_engine_state", lambda: b"an engine with other checks")
    check_catalog(path)
    assert len(compilations) == 2


def test_a_catalog_reading_a_file_outside_its_folders_is_not_remembered(tmp_path: Path, compilations: list[Path]) -> None:
    path = write(tmp_path / "catalog", schema="../../shared/verdict.yaml")
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared/verdict.yaml").write_text(SCHEMA, encoding="utf-8")
    assert check_catalog(path) == ([], BUILT_IN + 1)
    (tmp_path / "shared/verdict.yaml").write_text(SCHEMA.replace("string", "strnig"), encoding="utf-8")
    problems, _ = check_catalog(path)
    assert problems and "strnig" in str(problems[0])
    assert len(compilations) == 2


def test_list_shows_the_same_scorers_read_remembered_or_compiled(tmp_path: Path, compilations: list[Path]) -> None:
    path = write(tmp_path)
    listed = runner.invoke(app, ["list", "--config", str(path), "--json"])  # nothing remembered: read from the definitions
    assert check_catalog(path) == ([], BUILT_IN + 1)  # compiled, and remembered
    remembered = runner.invoke(app, ["list", "--config", str(path), "--json"])
    assert listed.exit_code == remembered.exit_code == 0
    assert json.loads(listed.stdout) == json.loads(remembered.stdout) == catalog_module.summary(catalog_module.load_scorers(path))
    assert {"id": "polite", "name": "Polite", "direction": "higher_is_better", "requires": ["output"], "judge": True, "description": "Whether the output is polite."} in json.loads(listed.stdout)
    assert compilations == [path.resolve(), path.resolve()]  # by check_catalog and load_scorers: `list` compiles nothing


def test_list_reads_what_it_shows_and_leaves_templates_to_check(tmp_path: Path, compilations: list[Path]) -> None:
    path = write(tmp_path)
    (tmp_path / "prompts/polite.j2").write_text("{{ outptu }}\n", encoding="utf-8")
    listed = runner.invoke(app, ["list", "--config", str(path), "--json"])
    assert listed.exit_code == 0 and "polite" in [row["id"] for row in json.loads(listed.stdout)]
    checked = runner.invoke(app, ["check", str(path)])
    assert checked.exit_code == 1 and "polite.j2:1" in checked.stdout and "outptu" in checked.stdout
    # What a row is read from is still refused, in one line at its place.
    path.write_text(POLITE_CATALOG.format(schema="verdict.yaml").replace("direction: higher_is_better", "direction: upwards"), encoding="utf-8")
    refused = runner.invoke(app, ["list", "--config", str(path)])
    assert refused.exit_code == 2 and "catalog.yaml:5" in refused.stderr and "direction" in refused.stderr and "Traceback" not in refused.output
    assert compilations == [path.resolve()]  # check's alone
    assert verified.recall(path) is None  # and nothing read by `list` alone is remembered as found clean


def test_a_cache_folder_that_cannot_be_written_only_costs_a_compilation(tmp_path: Path, compilations: list[Path], monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "not-a-folder").write_text("", encoding="utf-8")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "not-a-folder"))
    path = write(tmp_path / "catalog")
    assert check_catalog(path) == ([], BUILT_IN + 1)
    assert check_catalog(path) == ([], BUILT_IN + 1)
    assert len(compilations) == 2


def test_beside_the_remembered_builtin_catalog_a_host_catalog_compiles_only_its_own_scorers(tmp_path: Path, compilations: list[Path]) -> None:
    path = write(tmp_path)
    whole = catalog_module.summary(catalog_module.load_scorers(path))  # every scorer compiled here
    assert check_catalog(None) == ([], BUILT_IN)
    compilations.clear()

    assert catalog_module.checked_summary(path) == whole
    assert compilations == [(path.resolve(), "(own scorers)")]


def test_a_host_template_in_front_of_a_builtin_one_compiles_the_builtin_scorers_again(tmp_path: Path, compilations: list[Path]) -> None:
    assert check_catalog(None) == ([], BUILT_IN)
    path = write(tmp_path)
    _shadow(tmp_path / "prompts", "partials/blocks.j2", "{{ a syntax error\n")
    compilations.clear()

    problems, count = check_catalog(path)

    assert count == 0 and problems and "blocks.j2" in str(problems[0])
    assert compilations == [path.resolve()]  # the whole catalog, built-in scorers and all
