"""The layout is the architecture: dependencies point one way, only the judge's client
talks to a provider, the command line starts without the SDKs, and the types check."""

from __future__ import annotations

import ast
import io
import subprocess
import sys
import tokenize
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


def test_layers_and_the_provider_boundary_hold() -> None:
    checked = subprocess.run([str(BIN / "lint-imports")], cwd=ROOT, capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout[-3000:]
    assert "0 broken" in checked.stdout


def test_no_module_imports_itself_back() -> None:
    """No import cycle anywhere in the engine, function-local imports included, between a
    package and its own modules too (which the contract between siblings does not see):
    every direct import whose target leads back to the importer is one."""
    graph = grimp.build_graph("engine", exclude_type_checking_imports=True)
    cycles = sorted(
        {
            tuple(sorted((module, imported)))
            for module in graph.modules
            for imported in graph.find_modules_directly_imported_by(module)
            if graph.chain_exists(importer=imported, imported=module)
        }
    )
    assert cycles == [], f"import cycles through: {cycles}"


def test_the_command_line_starts_without_importing_the_provider_sdk() -> None:
    probe = "import sys, engine.cli, engine.pytest_plugin; print(sorted({'openai', 'instructor', 'anthropic', 'opentelemetry'} & set(sys.modules)))"
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert loaded.stdout.strip() == "[]"


def test_the_engine_type_checks_strictly() -> None:
    checked = subprocess.run([sys.executable, "-m", "mypy"], cwd=ROOT, capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout[-3000:]


def test_mypy_leaves_out_only_modules_the_engine_does_not_import() -> None:
    """The SDK parts that pyproject.toml tells mypy not to analyse are typed as Any: an
    engine module importing one would be checked against nothing, so none may."""
    tomllib = pytest.importorskip("tomllib")
    overrides = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]["overrides"]
    skipped = {pattern.removesuffix(".*") for override in overrides if override.get("follow_imports") == "skip" for pattern in override["module"]}
    assert "anthropic.types.beta" in skipped
    skipped.discard("ray")  # the extra typed as absent, reached by engine/ray.py alone

    def names(node: ast.AST) -> list[str]:
        if isinstance(node, ast.Import):
            return [alias.name for alias in node.names]
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            return [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
        return []

    found = [
        f"{path.relative_to(ROOT)}:{node.lineno}: {name}"
        for path in sorted((ROOT / "engine").rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        for name in names(node)
        if any(name == part or name.startswith(f"{part}.") for part in skipped)
    ]
    assert found == [], f"imports of modules mypy does not analyse (pyproject.toml): {found}"


def _imports_from(path: Path) -> list[tuple[int, ast.ImportFrom]]:
    return [(node.lineno, node) for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))) if isinstance(node, ast.ImportFrom)]


def test_no_module_takes_another_modules_private_name() -> None:
    """A name with a leading underscore is its module's own: a second module that needs it
    makes it public (and so part of what a change must keep) rather than reaching in."""
    taken = [
        f"{path.relative_to(ROOT)}:{line}: {alias.name} from {'.' * node.level}{node.module or ''}"
        for path in sorted((ROOT / "engine").rglob("*.py"))
        for line, node in _imports_from(path)
        for alias in node.names
        if alias.name.startswith("_") and not alias.name.startswith("__")
    ]
    assert taken == []


def test_every_command_lives_in_a_module_named_for_its_group_of_commands() -> None:
    """`<group>_commands.py` holds commands, nothing else does: a reader finds `scorers X`
    in `COMMAND_MODULES`, and a module's name says whether it registers commands."""
    from engine.cli.app import COMMAND_MODULES

    assert all(module.endswith("_commands") for module in COMMAND_MODULES.values()), COMMAND_MODULES
    registering = {path.stem for path in (ROOT / "engine" / "cli").glob("*.py") if "@app.command" in path.read_text(encoding="utf-8") or "app.add_typer" in path.read_text(encoding="utf-8")}
    assert registering == {path.stem for path in (ROOT / "engine" / "cli").glob("*_commands.py")} == set(COMMAND_MODULES.values())


def test_no_formatter_markers_are_left_in_the_code() -> None:
    """No formatter is configured, so a marker telling one to leave a line alone is noise a
    reader must stop and wonder about; the check reads comments, not strings that mention one."""
    markers = ("fmt: skip", "fmt: off", "fmt: on")
    found = [
        f"{path.relative_to(ROOT)}:{token.start[0]}"
        for folder in ("engine", "tests", "bench", "docs", "examples")
        for path in sorted((ROOT / folder).rglob("*.py"))
        for token in tokenize.generate_tokens(io.StringIO(path.read_text(encoding="utf-8")).readline)
        if token.type == tokenize.COMMENT and any(marker in token.string for marker in markers)
    ]
    assert found == [], f"formatter markers at: {found}"


def test_test_modules_take_what_they_share_from_the_helpers_package() -> None:
    """A test module imported by another ties the two together (renaming a test breaks the
    other file) and hides its helpers among tests: what tests share lives in tests/helpers/.
    Imports inside functions count too."""
    found: list[str] = []
    for path in sorted((ROOT / "tests").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [f"{node.module or ''}.{alias.name}" for alias in node.names]
            else:
                continue
            if any(part.startswith("test_") for name in names for part in name.split(".")):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert found == [], f"test modules imported by other modules at: {found}"


def test_no_module_of_the_engine_is_over_500_lines() -> None:
    """A module past 500 lines holds more than one job: split it by job before it grows."""
    long = {str(path.relative_to(ROOT)): lines for path in (ROOT / "engine").rglob("*.py") if (lines := len(path.read_text(encoding="utf-8").splitlines())) > 500}
    assert long == {}
