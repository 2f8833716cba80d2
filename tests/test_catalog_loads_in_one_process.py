"""A process that loads catalogs again and again (the workbench, a notebook, a host that
reloads its scorers) gets what the files say at each load: an answer schema is compiled once
for each text it has and shared by the checks that read it, never kept past an edit; and
loading a catalog, or running a command in the process, leaves Python's garbage collector
as the application set it."""

from __future__ import annotations

import gc
import threading
from pathlib import Path

import pytest
from helpers.catalogs import POLITE_CATALOG, write_catalog
from typer.testing import CliRunner

from engine import load_scorers
from engine.cli import app
from engine.collector import collector_held
from engine.errors import CatalogErrors

PROMPT = "Is this polite? Answer yes or no, with the reasons.\n{{ output | untrusted('output') }}\n"
SCHEMA = """\
type: object
properties:
  verdict: {type: string, enum: ['yes', 'no']}
  reasons:
    type: array
    maxItems: 010
    items: {type: string, maxLength: 200}
required: [verdict, reasons]
"""


def catalog(root: Path) -> Path:
    return write_catalog(root, {"catalog.yaml": POLITE_CATALOG.format(schema="verdict.yaml"), "prompts/polite.j2": PROMPT, "schemas/verdict.yaml": SCHEMA})


def octal_warnings(path: Path) -> list[str]:
    return [f"{warning.line}: {warning.message}" for warning in load_scorers(path).warnings if getattr(warning, "code", None) == "yaml-number"]


def test_an_answer_schema_edited_between_two_loads_is_read_as_it_is_now(tmp_path: Path) -> None:
    path = catalog(tmp_path)
    schema = tmp_path / "schemas" / "verdict.yaml"
    first = load_scorers(path).plan("polite").steps[0].answer_model
    assert first is not None and set(first.model_fields) == {"verdict", "reasons"}
    assert octal_warnings(path) == ["6: YAML reads `010` as 8, an octal number (it starts with 0): write 10, or quote it ('010') for the text"]

    schema.write_text(SCHEMA.replace("  verdict:", "  confidence: {type: number, minimum: 0, maximum: 1}\n  verdict:").replace("010", "10"), encoding="utf-8")
    edited = load_scorers(path).plan("polite").steps[0].answer_model
    assert edited is not None and set(edited.model_fields) == {"confidence", "verdict", "reasons"}
    assert octal_warnings(path) == []

    schema.write_text(SCHEMA.replace("maxItems: 010", "maxItems: many"), encoding="utf-8")
    with pytest.raises(CatalogErrors) as broken:
        load_scorers(path)
    assert [(problem.path, problem.line, problem.message) for problem in broken.value.problems] == [(str(schema), 6, "`maxItems` has a wrong value 'many'")]

    schema.write_text(SCHEMA, encoding="utf-8")  # as at first: its YAML surprise is explained again
    again = load_scorers(path).plan("polite").steps[0].answer_model
    assert again is not None and set(again.model_fields) == {"verdict", "reasons"}
    assert octal_warnings(path) == ["6: YAML reads `010` as 8, an octal number (it starts with 0): write 10, or quote it ('010') for the text"]


def test_loading_a_catalog_or_running_a_command_in_process_leaves_the_collector_as_the_application_set_it(tmp_path: Path) -> None:
    path = catalog(tmp_path)

    def load_and_check() -> None:
        load_scorers(path)
        checked = CliRunner().invoke(app, ["check", str(path)])
        assert checked.exit_code == 0, checked.output

    assert gc.isenabled()
    load_and_check()
    assert gc.isenabled()

    gc.disable()  # an application that collects when it chooses
    try:
        load_and_check()
        assert not gc.isenabled()
    finally:
        gc.enable()

    # An application that froze its objects (before forking workers) keeps them frozen.
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        load_and_check()
        assert gc.get_freeze_count() > frozen / 2 and gc.isenabled()  # (a frozen object that dies leaves the count)
    finally:
        gc.unfreeze()


def test_bursts_held_on_several_threads_at_once_leave_the_collector_running(tmp_path: Path) -> None:
    """The command line holds the collector off while it loads its modules; several threads
    doing so at once (each loading a catalog meanwhile) leave it running when the last ends."""
    paths = [catalog(tmp_path / str(number)) for number in range(4)]
    failures: list[BaseException] = []

    def load(path: Path) -> None:
        try:
            for _ in range(3):
                with collector_held(lasting=True):
                    load_scorers(path)
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            failures.append(exc)

    threads = [threading.Thread(target=load, args=(path,)) for path in paths]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    assert gc.isenabled()
