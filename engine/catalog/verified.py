"""Catalogs already found clean, remembered on disk, so that `scorers list` and `scorers check`
need not compile an unchanged catalog again.

A record is written only after a catalog compiled without a single problem, and it is used
only when everything that compilation depended on is byte for byte the same: the catalog
files (the host's and the built-in one), every file under their prompt and schema folders,
any other file the compiler read, the engine's own source, the step kinds registered (and
the source of those from outside the engine), and the versions of Python and of
the libraries that check a catalog. Any difference and the catalog is compiled again, so a
mistake is always found by compiling, never hidden by a record. A record that cannot be read
or written is simply not used.

The package also ships the proof of its own built-in catalog (`builtin_proof.json`, written by
`tools/prove_builtin_catalog.py`): what compiling and proving that catalog found, beside a
digest of every byte it depended on, named relative to the catalog (its file, every file of
its prompt and schema folders, the engine's source), and the versions it was proved with
(Python's minor version and the libraries' exact ones). A first `scorers check` on an
unmodified install reads it instead of compiling, when every one of those matches, as a user
record is read; one byte different anywhere and the catalog is compiled and proved again.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from functools import cache
from importlib import import_module
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

#: Bumped when what a record holds changes.
_FORMAT = 4
_ENGINE = Path(__file__).resolve().parent.parent
#: The module of the step kind registry (see `_kinds_from_outside`).
_REGISTRY = "engine.scoring.steps"
#: The libraries that check a catalog: (distribution, module).
_CHECKED_WITH = (("jinja2", "jinja2"), ("pydantic", "pydantic"), ("pydantic_core", "pydantic_core"), ("pyyaml", "yaml"))


def _version(distribution: str, module: str) -> str:
    """A library's version, from its installed metadata: importing the library to ask would
    cost a remembered catalog more than the rest of its check."""
    try:
        return version(distribution)
    except PackageNotFoundError:  # installed without metadata (vendored, frozen): the module says
        return str(getattr(import_module(module), "__version__", "unknown"))


@cache
def _engine_source() -> bytes:
    """A digest of the engine's source, every file named relative to the engine's folder (so
    the same in a checkout and in an installed package)."""
    digest = hashlib.sha256()
    for path in sorted(_ENGINE.rglob("*.py")):
        digest.update(str(path.relative_to(_ENGINE)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.digest()


@cache
def _engine_state() -> bytes:
    """What decides the outcome of a compilation besides the catalog: the engine's source and
    the versions of what it checks with."""
    versions = "|".join(_version(distribution, module) for distribution, module in _CHECKED_WITH)
    return hashlib.sha256(f"{_FORMAT}|{sys.version}|{versions}".encode() + _engine_source()).digest()


def state(catalogs: Sequence[Path], folders: Sequence[Path]) -> str:
    """A digest of everything a compilation of these catalog files depends on: their bytes,
    every file under the prompt and schema `folders` (so a file added in front of another
    counts too), the engine's source and the libraries' versions."""
    digest = hashlib.sha256(_engine_state())
    _add_kinds_from_outside(digest)
    for path in catalogs:
        _add_catalog(digest, path, str(path.resolve()))
    for folder in folders:
        _add_folder(digest, folder, str(folder.resolve()))
    return digest.hexdigest()


def _add_kinds_from_outside(digest: Any) -> None:
    for name, kind in sorted(_kinds_from_outside().items()):
        # A step kind registered from outside the engine checks steps too: which one, and its source.
        module = sys.modules.get(type(kind).__module__)
        source = Path(module.__file__) if module is not None and module.__file__ else None
        digest.update(f"kind\0{name}\0{type(kind).__module__}.{type(kind).__qualname__}\0".encode())
        if source is not None and not source.resolve().is_relative_to(_ENGINE) and source.is_file():
            digest.update(source.read_bytes() + b"\0")


def _add_catalog(digest: Any, path: Path, named: str) -> None:
    digest.update(f"catalog\0{named}\0".encode() + (path.read_bytes() if path.is_file() else b"\1missing") + b"\0")


def _add_folder(digest: Any, folder: Path, named: str) -> None:
    """Every file under `folder`, by its path inside it, in a fixed order."""
    digest.update(f"folder\0{named}\0{folder.is_dir()}\0".encode())
    for root, directories, files in os.walk(folder):
        directories.sort()
        for file in sorted(files):
            path = Path(root) / file
            digest.update(str(path.relative_to(folder)).encode() + b"\0" + path.read_bytes() + b"\0")


def _kinds_from_outside() -> Mapping[str, Any]:
    """The step kinds registered beside the built-in ones (whose source is the engine's, in
    `_engine_state`). A kind is registered only through the registry's module: when nothing
    has imported it yet, there is none, and a remembered catalog need not import it to know."""
    registry = sys.modules.get(_REGISTRY)
    return registry.kinds_from_outside() if registry is not None else {}


def inside(paths: Iterable[Path], folders: Sequence[Path]) -> bool:
    """Whether every one of `paths` lies under one of `folders` (and so counts in `state`)."""
    roots = [folder.resolve() for folder in folders]
    return all(any(path.resolve().is_relative_to(root) for root in roots) for path in paths)

def _record_path(catalog: Path) -> Path:
    import platformdirs

    key = hashlib.sha256(str(catalog.resolve()).encode()).hexdigest()[:32]
    return Path(platformdirs.user_cache_dir("llm-scorers")) / "catalogs" / f"{key}.json"


def recall(catalog: Path, builtin: bool = False) -> list[dict[str, Any]] | None:
    """The scorers of `catalog` (id, name, direction, requires, judge, description), when it
    was found clean and nothing it depends on has changed since; else None. `builtin`: the
    catalog is the package's own, which the shipped proof may vouch for."""
    found = recall_with_notes(catalog, builtin)
    return found[0] if found is not None else None


def recall_with_notes(catalog: Path, builtin: bool = False) -> tuple[list[dict[str, Any]], dict[str, Any]] | None:
    """`recall`'s scorers, and the notes remembered with them (what `scorers check` says of a
    clean catalog: its warnings, how many scorers it defines): from the user's record, else,
    for the built-in catalog, from the proof shipped with the package."""
    found = _recorded(catalog)
    return found if found is not None or not builtin else shipped(catalog)


def _recorded(catalog: Path) -> tuple[list[dict[str, Any]], dict[str, Any]] | None:
    try:
        record = json.loads(_record_path(catalog).read_text(encoding="utf-8"))
        if record.get("catalog") != str(catalog.resolve()):
            return None
        if record.get("state") != state([Path(name) for name in record["catalogs"]], [Path(name) for name in record["folders"]]):
            return None
        scorers, notes = record["scorers"], record.get("notes", {})
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return (scorers, notes) if isinstance(scorers, list) and isinstance(notes, dict) else None


def remember(
    catalog: Path, catalogs: Sequence[Path], folders: Sequence[Path], compiled_state: str, scorers: list[dict[str, Any]], notes: dict[str, Any] | None = None
) -> None:
    """Records that `catalog` compiled clean in `compiled_state` (see `state`)."""
    record = {
        "catalog": str(catalog.resolve()),
        "catalogs": [str(path.resolve()) for path in catalogs],
        "folders": [str(path.resolve()) for path in folders],
        "state": compiled_state,
        "scorers": scorers,
        "notes": notes or {},
    }
    try:
        target = _record_path(catalog)
        target.parent.mkdir(parents=True, exist_ok=True)
        # Written whole, then renamed: a process reading at the same time sees the old record or the new one.
        with tempfile.NamedTemporaryFile("w", encoding="utf-8", dir=target.parent, suffix=".tmp", delete=False) as handle:
            json.dump(record, handle)
        os.replace(handle.name, target)
    except OSError:
        pass  # a read-only or full disk costs the next run a compilation, nothing else


#: The proof of the built-in catalog shipped with the package (see the module's docstring).
SHIPPED_PROOF = Path(__file__).with_name("builtin_proof.json")
#: Bumped when what the shipped proof holds changes.
_SHIPPED_FORMAT = 1


def environment() -> dict[str, str]:
    """What a proof holds only with: the proof's format, Python's implementation and minor
    version, the exact versions of the libraries that check a catalog."""
    found = {"format": str(_SHIPPED_FORMAT), "python": f"{sys.implementation.name} {sys.version_info[0]}.{sys.version_info[1]}"}
    return found | {distribution: _version(distribution, module) for distribution, module in _CHECKED_WITH}


def portable_state(catalog: Path, folders: Sequence[str]) -> str:
    """`state` of a catalog file alone, its `folders` given relative to the catalog's own
    folder, every file named relative to it and the engine's source relative to the engine:
    the same wherever the package is installed. The versions are `environment`'s to say."""
    digest = hashlib.sha256(b"portable\0" + _engine_source())
    _add_kinds_from_outside(digest)
    _add_catalog(digest, catalog, catalog.name)
    for folder in folders:
        _add_folder(digest, catalog.parent / folder, folder)
    return digest.hexdigest()


def proof(catalog: Path, folders: Sequence[Path], scorers: list[dict[str, Any]], notes: dict[str, Any]) -> dict[str, Any]:
    """What `shipped` reads: `catalog` compiled clean, with `scorers` and `notes`, from its
    file and the files under `folders` as they are now. Raises ValueError when the catalog
    read or warned about a file outside its own folder (a proof names files relative to it)."""
    root = catalog.parent.resolve()
    relative = [os.path.relpath(folder.resolve(), root) for folder in folders]
    warnings = [[os.path.relpath(Path(found[0]).resolve(), root), *found[1:]] for found in notes.get("warnings", [])]
    if any(name.startswith("..") for name in [*relative, *(warning[0] for warning in warnings)]):
        raise ValueError(f"{catalog}: a proof holds only files inside the catalog's folder")
    return {
        "catalog": catalog.name,
        "folders": relative,
        "environment": environment(),
        "state": portable_state(catalog, relative),
        "scorers": scorers,
        "notes": notes | {"warnings": warnings},
    }


def shipped(catalog: Path) -> tuple[list[dict[str, Any]], dict[str, Any]] | None:
    """The scorers and notes of the shipped proof, when it is the proof of `catalog` and the
    catalog, its folders, the engine and the environment are exactly those it was made from;
    else None (the catalog is compiled)."""
    try:
        record = json.loads(SHIPPED_PROOF.read_text(encoding="utf-8"))
        if record["catalog"] != catalog.name or record["environment"] != environment():
            return None
        if record["state"] != portable_state(catalog, record["folders"]):
            return None
        scorers, notes = record["scorers"], record["notes"]
        notes["warnings"] = [[str(catalog.parent / found[0]), *found[1:]] for found in notes["warnings"]]
    except (OSError, ValueError, KeyError, TypeError, IndexError):
        return None
    return (scorers, notes) if isinstance(scorers, list) and isinstance(notes, dict) else None
