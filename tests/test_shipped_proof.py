"""The package ships the proof of its built-in catalog (engine/catalog/builtin_proof.json), so a
first `scorers check` of an unmodified install need not compile and prove 42 scorers. The proof
is read only when every byte it depended on is the same (the catalog, every prompt and schema,
the engine's source) and so are the versions it was proved with: one byte different and the
catalog is compiled and proved again, its mistakes named at their line."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import engine.catalog as catalog_module
import engine.catalog.compile as compile_module
import engine.catalog.source as source_module
from engine.catalog import builtin_catalog_path, check_catalog, listed_summary, proved_builtin_catalog, verified

CHECKOUT = Path(__file__).resolve().parent.parent
SHIPPED = Path(verified.__file__).with_name("builtin_proof.json")
BUILT_IN = len(json.loads(SHIPPED.read_text(encoding="utf-8"))["scorers"])


def test_the_shipped_proof_is_current() -> None:
    """It says what compiling and proving the built-in catalog says now, of the same bytes
    (the versions it records are those of the machine it was made on)."""
    shipped = json.loads(SHIPPED.read_text(encoding="utf-8"))
    made_now = proved_builtin_catalog()
    stale = "engine/catalog/builtin_proof.json is stale: run `python tools/prove_builtin_catalog.py` and commit it"
    assert {**shipped, "environment": None} == {**made_now, "environment": None}, stale


@pytest.fixture
def compilations(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The catalogs compiled from now on (a host catalog compiled without the built-in
    scorers it offers is listed with `(own scorers)` after its name)."""
    compiled: list[Any] = []
    real = compile_module.compile_catalog

    def counting(source: Any, read: Any = None, with_inherited: bool = True, warnings: Any = None) -> Any:
        compiled.append(source.path if with_inherited else (source.path, "(own scorers)"))
        return real(source, read, with_inherited, warnings)

    monkeypatch.setattr(compile_module, "compile_catalog", counting)
    return compiled


@pytest.fixture(scope="module")
def proved_copy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path]]:
    """A copy of the built-in catalog laid out as an installed package has it, and its proof."""
    folder = tmp_path_factory.mktemp("proved") / "_catalog"
    for name in ("prompts", "schemas"):
        shutil.copytree(CHECKOUT / name, folder / name)
    shutil.copy(CHECKOUT / "scorers.yaml", folder / "scorers.yaml")
    proof = folder.parent / "builtin_proof.json"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(source_module, "_PACKAGED_CATALOG", folder)
        proof.write_text(json.dumps(proved_builtin_catalog()), encoding="utf-8")
    yield folder, proof


@pytest.fixture
def installed(proved_copy: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The proved copy, as the built-in catalog of an install whose package ships its proof."""
    folder, proof = proved_copy
    shutil.copytree(folder, tmp_path / "_catalog")
    monkeypatch.setattr(source_module, "_PACKAGED_CATALOG", tmp_path / "_catalog")
    monkeypatch.setattr(verified, "SHIPPED_PROOF", proof)
    assert builtin_catalog_path() == tmp_path / "_catalog" / "scorers.yaml"
    catalog_module._builtin_source.cache_clear()  # host catalogs fall back on this one
    yield tmp_path / "_catalog"
    monkeypatch.undo()
    catalog_module._builtin_source.cache_clear()


def test_a_first_check_of_an_unmodified_install_reads_the_proof(installed: Path, compilations: list[Path]) -> None:
    assert check_catalog(None) == ([], BUILT_IN)
    assert [row["id"] for row in listed_summary(None)] == [row["id"] for row in json.loads(SHIPPED.read_text(encoding="utf-8"))["scorers"]]
    assert compilations == []


def _append(path: str, text: str) -> Any:
    return lambda root: (root / path).write_text((root / path).read_text(encoding="utf-8") + text, encoding="utf-8")


def _first(root: Path, pattern: str) -> Path:
    return sorted(root.glob(pattern))[0]


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (lambda root: _first(root, "prompts/*/*.j2").write_text(_first(root, "prompts/*/*.j2").read_text(encoding="utf-8") + "{{ outptu }}\n", encoding="utf-8"), "unknown name 'outptu'"),
        (lambda root: _first(root, "schemas/*.yaml").write_text(_first(root, "schemas/*.yaml").read_text(encoding="utf-8").replace("type: object", "type: objcet", 1), encoding="utf-8"), "must have `type: object`"),
        (lambda root: (root / "scorers.yaml").write_text((root / "scorers.yaml").read_text(encoding="utf-8").replace("direction: lower_is_better", "direction: lower_is_btter", 1), encoding="utf-8"), "scorers.hallucination.direction"),
    ],
    ids=["a template", "a schema", "the catalog"],
)
def test_a_changed_byte_in_the_catalog_is_compiled_and_proved_again(installed: Path, compilations: list[Path], change: Any, expected: str) -> None:
    change(installed)
    problems, _ = check_catalog(None)
    assert any(expected in str(problem) for problem in problems), [str(problem) for problem in problems]


@pytest.mark.parametrize(
    "change",
    [_append("scorers.yaml", "# a comment\n"), lambda root: (root / "prompts" / "new.j2").write_text("a template nothing reads\n", encoding="utf-8")],
    ids=["a comment", "a file added"],
)
def test_any_byte_changed_compiles_even_when_it_changes_nothing(installed: Path, compilations: list[Path], change: Any) -> None:
    change(installed)
    assert check_catalog(None) == ([], BUILT_IN)
    assert compilations == [installed / "scorers.yaml"]


def test_a_changed_byte_in_the_proving_engine_is_proved_again(
    installed: Path, compilations: list[Path], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The engine's source decides what is proved: the proof holds for the engine it was made by."""
    engine = tmp_path / "engine"
    shutil.copytree(Path(verified.__file__).resolve().parent.parent, engine, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    monkeypatch.setattr(verified, "_ENGINE", engine)
    _forget_engine()
    try:
        monkeypatch.setattr(verified, "SHIPPED_PROOF", tmp_path / "proof.json")
        (tmp_path / "proof.json").write_text(json.dumps(proved_builtin_catalog()), encoding="utf-8")
        compilations.clear()
        (Path(tmp_path / "cache")).mkdir()
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # nothing remembered from the proving above
        assert check_catalog(None) == ([], BUILT_IN)
        assert compilations == []
        properties = engine / "catalog" / "proving" / "properties.py"
        properties.write_bytes(properties.read_bytes() + b"\n")
        _forget_engine()
        assert check_catalog(None) == ([], BUILT_IN)
        assert compilations == [installed / "scorers.yaml"]
    finally:
        monkeypatch.undo()
        _forget_engine()


def _forget_engine() -> None:
    verified._engine_source.cache_clear()
    verified._engine_state.cache_clear()


def test_other_library_versions_compile(installed: Path, compilations: list[Path], monkeypatch: pytest.MonkeyPatch) -> None:
    proved_with = verified.environment()
    monkeypatch.setattr(verified, "environment", lambda: proved_with | {"pydantic": "0.1"})
    assert check_catalog(None) == ([], BUILT_IN)
    assert compilations == [installed / "scorers.yaml"]


def test_a_copy_of_the_builtin_catalog_checked_by_its_path_compiles(installed: Path, compilations: list[Path], tmp_path: Path) -> None:
    """The proof is of the built-in catalog: the same files elsewhere are an author's catalog,
    beside the built-in one, and compiled as such (its scorers take the built-in ids)."""
    shutil.copytree(installed, tmp_path / "copy")
    problems, _ = check_catalog(tmp_path / "copy" / "scorers.yaml")
    assert problems and "write `replaces: true` in this scorer" in str(problems[0])
    assert compilations == [tmp_path / "copy" / "scorers.yaml"]


def test_a_host_catalog_beside_the_proved_builtin_one_compiles_only_its_own_scorers(installed: Path, compilations: list[Path], tmp_path: Path) -> None:
    host = CHECKOUT / "docs" / "examples" / "tone"
    shutil.copytree(host, tmp_path / "tone")
    problems, _ = check_catalog(tmp_path / "tone")
    assert problems == []
    assert compilations == [(tmp_path / "tone" / "catalog.yaml", "(own scorers)")]
