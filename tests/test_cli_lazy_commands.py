"""`scorers` imports a command's module when the command is used: the table naming each
command's module must match what the modules register, and `scorers list` must not load
the run, store, align or workbench code it does not need (that is its start-up time)."""

from __future__ import annotations

import ast
import importlib
import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

from engine.cli import app


def fresh_python(code: str, cache: Path) -> str:
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True, text=True, check=True, env={"XDG_CACHE_HOME": str(cache), "PATH": ""},
    )
    return result.stdout


def test_the_command_table_names_every_registered_command_and_its_module(tmp_path: Path) -> None:
    found = json.loads(
        fresh_python(
            """
            import importlib, json, sys
            import engine.cli
            from typer.main import get_command_name
            application = sys.modules["engine.cli.app"]
            for module in set(application.COMMAND_MODULES.values()):
                importlib.import_module("engine.cli." + module)
            registered = {info.name or get_command_name(info.callback.__name__): info.callback.__module__ for info in application.app.registered_commands}
            registered |= {group.name: group.typer_instance.registered_commands[0].callback.__module__ for group in application.app.registered_groups}
            print(json.dumps({"table": {name: "engine.cli." + module for name, module in application.COMMAND_MODULES.items()}, "registered": registered}))
            """,
            tmp_path,
        )
    )
    assert found["table"] == found["registered"]


def test_scorers_list_loads_neither_runs_nor_store_nor_workbench(tmp_path: Path) -> None:
    loaded = json.loads(
        fresh_python(
            """
            import json, sys
            from typer.testing import CliRunner
            from engine.cli import app
            result = CliRunner().invoke(app, ["list"])
            assert result.exit_code == 0, result.output
            print(json.dumps(sorted(sys.modules)))
            """,
            tmp_path,
        )
    )
    heavy = [name for name in loaded if name.startswith(("engine.runs.batch", "engine.runs.align", "engine.store", "engine.workbench", "engine.report"))]
    assert heavy == []


def test_a_first_scorers_check_loads_only_what_checking_the_catalog_needs(tmp_path: Path) -> None:
    """The check of a catalog never seen before (an empty user cache, and the proof the
    package ships of its catalog out of reach: it is compiled) loads the compiler, but no
    run, store, judge client or web code, and neither the monitors' nor the queues' checks of
    a catalog that has no such section."""
    loaded = json.loads(
        fresh_python(
            """
            import json, sys
            from pathlib import Path
            from typer.testing import CliRunner
            from engine.catalog import verified
            verified.SHIPPED_PROOF = Path("/nonexistent/builtin_proof.json")
            from engine.cli import app
            result = CliRunner().invoke(app, ["check"])
            assert result.exit_code == 0 and result.output.startswith("ok: "), result.output
            print(json.dumps(sorted(sys.modules)))
            """,
            tmp_path,
        )
    )
    assert "engine.catalog.compile" in loaded
    unneeded = ("engine.runs", "engine.store", "engine.db", "engine.workbench", "engine.report", "engine.judge.client", "engine.catalog.monitors", "engine.catalog.queues")
    assert [name for name in loaded if name.startswith(unneeded) or name.split(".")[0] in ("openai", "instructor", "anthropic", "httpx")] == []


def test_a_first_check_reading_the_shipped_proof_loads_no_compiler(tmp_path: Path) -> None:
    """The built-in catalog unchanged since the package's proof of it was made: a first
    check reads the proof, and neither compiles nor runs a scorer."""
    proof = tmp_path / "builtin_proof.json"
    fresh_python(f"import json; from engine.catalog import proved_builtin_catalog; open({str(proof)!r}, 'w').write(json.dumps(proved_builtin_catalog()))", tmp_path / "proving")
    loaded = json.loads(
        fresh_python(
            f"""
            import json, sys
            from pathlib import Path
            from typer.testing import CliRunner
            from engine.catalog import verified
            verified.SHIPPED_PROOF = Path({str(proof)!r})
            from engine.cli import app
            result = CliRunner().invoke(app, ["check"])
            assert result.exit_code == 0 and result.output.startswith("ok: "), result.output
            print(json.dumps(sorted(sys.modules)))
            """,
            tmp_path / "first",
        )
    )
    assert [name for name in loaded if name.startswith(("engine.catalog.compile", "engine.catalog.proving", "engine.scoring.scorer"))] == []


def test_a_check_process_ends_with_everything_it_printed_and_remembered(tmp_path: Path) -> None:
    """`scorers check` and `list` end without Python's last collection of every object; what
    they print and the record of a clean catalog are all there when the process has ended."""
    scorers = Path(sys.executable).parent / "scorers"
    environment = {"XDG_CACHE_HOME": str(tmp_path / "cache"), "PATH": ""}
    shutil.copytree(Path(__file__).resolve().parent.parent / "docs" / "examples" / "tone", tmp_path / "tone")
    checked = subprocess.run([str(scorers), "check", str(tmp_path / "tone"), "--json"], capture_output=True, text=True, env=environment, timeout=120)
    assert checked.returncode == 0, checked.stderr
    assert {found["severity"] for found in json.loads(checked.stdout)} == {"note"} and checked.stderr.startswith("ok: ")  # its schemas' default bounds
    records = [json.loads(record.read_text(encoding="utf-8")) for record in (tmp_path / "cache" / "llm-scorers" / "catalogs").glob("*.json")]
    assert str((tmp_path / "tone" / "catalog.yaml").resolve()) in [record["catalog"] for record in records]
    listed = subprocess.run([str(scorers), "list", "--json"], capture_output=True, text=True, env=environment, timeout=120)
    assert listed.returncode == 0 and "hallucination" in {row["id"] for row in json.loads(listed.stdout)}


def test_every_command_is_listed_in_help_and_runs_from_a_fresh_group() -> None:
    result = CliRunner().invoke(app, ["--help"])
    assert result.exit_code == 0
    for command in ("list", "check", "eval", "results", "align", "workbench", "pairwise", "cache"):
        assert command in result.output
    assert CliRunner().invoke(app, ["cache", "--help"]).exit_code == 0
    misspelled = CliRunner().invoke(app, ["pairwyse"])
    assert misspelled.exit_code == 2 and "did you mean 'pairwise'" in misspelled.output


def test_every_public_name_is_what_it_names_whatever_was_imported_before() -> None:
    """A lazily exported name is never shadowed by a submodule of the same name, which the
    import system binds on its parent package (`from engine import rescore` once gave the
    module, not the function, after the CLI had imported it)."""
    probe = (
        "import importlib, pkgutil, types, engine, engine.runs\n"
        "for found in pkgutil.walk_packages(engine.__path__, 'engine.'):\n"
        "    if not found.name.startswith(('engine.workbench', 'engine.ray', 'engine.pytest_plugin')):\n"
        "        importlib.import_module(found.name)\n"
        "for package in (engine, engine.runs):\n"
        "    for name in package.__all__:\n"
        "        assert not isinstance(getattr(package, name), types.ModuleType), f'{package.__name__}.{name} is a module'\n"
        "print('ok')\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "ok", done.stderr[-2000:]


@pytest.mark.parametrize("package", ["engine", "engine.runs", "engine.judge", "engine.scoring"])
def test_every_name_imported_for_type_checkers_is_in_the_lazy_table_from_the_same_module(package: str) -> None:
    """The TYPE_CHECKING imports (what mypy and editors see) and `_LAZY_EXPORTS` (what runs)
    must name the same modules: a name in one list only type-checks but fails when read."""
    module = importlib.import_module(package)
    tree = ast.parse(Path(module.__file__ or "").read_text(encoding="utf-8"))
    guarded = next(node for node in tree.body if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING")
    seen = {alias.asname or alias.name: "." * node.level + (node.module or "") for node in guarded.body if isinstance(node, ast.ImportFrom) for alias in node.names}
    table = module._LAZY_EXPORTS  # type: ignore[attr-defined]
    assert seen == table
    assert set(table) <= set(module.__all__)
