"""The JSON Schema of the catalog format that editors use to complete and check YAML."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import yaml
from typer.testing import CliRunner

from engine.catalog.spec import catalog_json_schema
from engine.cli import app

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = ROOT / "engine" / "catalog" / "catalog.schema.json"


def problems(document: object) -> list[str]:
    validator = jsonschema.Draft202012Validator(catalog_json_schema())
    return [error.message for error in validator.iter_errors(document)]


def test_the_shipped_schema_is_the_one_the_spec_emits() -> None:
    # Regenerate with: scorers schema > engine/catalog/catalog.schema.json
    assert json.loads(SHIPPED.read_text(encoding="utf-8")) == catalog_json_schema()
    printed = CliRunner().invoke(app, ["schema"])
    assert printed.exit_code == 0 and json.loads(printed.stdout) == catalog_json_schema()


def test_the_built_in_catalog_passes_and_names_the_schema_for_editors() -> None:
    text = (ROOT / "scorers.yaml").read_text(encoding="utf-8")
    assert text.startswith("# yaml-language-server: $schema=engine/catalog/catalog.schema.json")
    assert problems(yaml.safe_load(text)) == []


def test_a_scorer_that_extends_another_writes_only_what_it_changes() -> None:
    catalog = {"scorers": {"polite": {"extends": "criteria", "options": {"criteria": "Polite."}, "steps": [{"id": "judge", "prompt": "mine.j2"}]}}}
    assert problems(catalog) == []


def test_misspelt_keys_and_wrong_values_are_flagged() -> None:
    catalog = {"defaults": {"judge": {"temprature": 0}}, "scorers": {"x": {"direction": "up", "steps": []}}}
    found = " | ".join(problems(catalog))
    assert "{'temprature': 0} is not valid" in found
    assert "'up' is not one of" in found
