"""Which store a location names: one registry from a URL's scheme to the store's class, asked
by `open_store`, every command's `--store` and whatever needs to know what a store can do."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.stored_records import sample_records
from typer.testing import CliRunner

from engine import RunInfo, Store
from engine.cli import app
from engine.errors import ConfigError
from engine.store import FILE_PATH, SQLiteStore, open_store, register_store_backend, store_backend
from engine.store.registry import _BACKENDS

from .conftest import Backend

runner = CliRunner()


def test_a_location_opens_the_store_its_scheme_names(backend: Backend, store: Store) -> None:
    assert type(store) is store_backend(backend.location) and isinstance(store, Store)
    assert store_backend(backend.location).exists(backend.location)  # made when opened


@pytest.mark.parametrize("location", ["mysql://scorer:hunter2hunter2@db/scores", "sqlite:///tmp/results.sqlite"])
def test_a_scheme_no_store_is_kept_at_is_one_line_and_makes_nothing(location: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError, match=r"no store is kept at \w+:// URLs; give a file path \(SQLite\) or a postgres:// URL or a postgresql:// URL") as raised:
        open_store(location)
    assert "hunter2" not in str(raised.value) and raised.value.parameter == "store"
    assert list(tmp_path.iterdir()) == []  # not taken for a file path

    shown = runner.invoke(app, ["results", "--store", location])
    assert shown.exit_code == 2 and "no store is kept at" in shown.output and "hunter2" not in shown.output


class NamedFileStore(SQLiteStore):
    """A third backend for the registry's sake: SQLite files named `file-store://PATH`."""

    @classmethod
    def open_location(cls, location: str | Path, *, reading: bool = False) -> SQLiteStore:
        return cls(str(location).removeprefix("file-store://"), reading=reading)

    @classmethod
    def exists(cls, location: str | Path) -> bool:
        return Path(str(location).removeprefix("file-store://")).exists()


@pytest.fixture
def third_backend() -> Iterator[None]:
    register_store_backend("file-store", NamedFileStore)
    yield
    del _BACKENDS["file-store"]


@pytest.mark.usefixtures("third_backend")
def test_a_backend_registered_once_is_what_every_command_opens(tmp_path: Path) -> None:
    location = f"file-store://{tmp_path / 'kept.sqlite'}"
    missing = runner.invoke(app, ["results", "--store", location])
    assert missing.exit_code == 2 and f"no results store at {location}" in " ".join(missing.output.split())  # asked of the backend, not the URL's spelling

    with open_store(location) as store:  # type: ignore[union-attr]
        assert isinstance(store, NamedFileStore)
        store.begin_run(RunInfo(name="nightly"))
        store.save_many(sample_records())
    shown = runner.invoke(app, ["results", "--store", location, "--run", "nightly", "--json"])

    assert shown.exit_code == 0, shown.output
    assert {row["scorer_id"]: row["count"] for row in json.loads(shown.stdout)["scorers"]} == {"hallucination": 2, "faithfulness": 2}
    assert store_backend(tmp_path / "kept.sqlite") is _BACKENDS[FILE_PATH] is SQLiteStore
