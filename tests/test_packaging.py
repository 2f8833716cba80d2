"""An installed wheel carries the catalog, its prompts and its schemas, and the proof of it."""

from __future__ import annotations

import importlib.metadata
import json
from pathlib import Path

import pytest

import engine
from engine.catalog import builtin_catalog_path, verified

CHECKOUT = Path(__file__).resolve().parent.parent


def test_the_built_in_catalog_is_found_and_loads() -> None:
    assert builtin_catalog_path().is_file()
    assert "hallucination" in engine.builtin_catalog()


INSTALLED_ONLY = pytest.mark.skipif(Path(engine.__file__).resolve().parent.parent == CHECKOUT, reason="running from the checkout (editable install)")


@INSTALLED_ONLY
def test_an_installed_package_ships_every_prompt_and_schema() -> None:
    packaged = Path(engine.__file__).resolve().parent / "_catalog"
    assert builtin_catalog_path() == packaged / "scorers.yaml"
    for folder in ("prompts", "schemas"):
        expected = {path.relative_to(CHECKOUT / folder) for path in (CHECKOUT / folder).rglob("*") if path.is_file()}
        shipped = {path.relative_to(packaged / folder) for path in (packaged / folder).rglob("*") if path.is_file()}
        assert expected <= shipped, f"missing from the wheel: {sorted(map(str, expected - shipped))}"
    assert (packaged / "optimizer" / "scorers.yaml").is_file()  # align's optimizer, a catalog of its own


@INSTALLED_ONLY
def test_an_installed_package_brings_no_test_helpers() -> None:
    """The tests' shared helpers (tests/helpers/, imported as `helpers`) stay out of the wheel:
    installing the package puts `engine` on a user's path and nothing else."""
    installed = {path.parts[0] for path in importlib.metadata.files("llm-scorers") or [] if path.parts[0] != ".."}
    assert {top for top in installed if not top.endswith(".dist-info")} == {"engine"}


@INSTALLED_ONLY
def test_an_installed_package_ships_the_proof_of_its_catalog() -> None:
    """The proof names the files as the installed package lays them out, so an unmodified
    install reads it (where its libraries are the versions it was proved with)."""
    proof = json.loads(Path(verified.__file__).with_name("builtin_proof.json").read_text(encoding="utf-8"))
    assert proof["state"] == verified.portable_state(builtin_catalog_path(), proof["folders"])
