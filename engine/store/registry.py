"""Which store a location names: one table from a URL's scheme to the class of the store kept
there. A location without a scheme is a file path (SQLite); `postgresql://` and `postgres://`
are a PostgreSQL server. What a caller asks before opening a store (is there one here, will
its workers share a run) is asked of that class, never of the URL's spelling.

A new backend is one class behind `Store` with the two class methods of `StoreBackend`, and
one `register_store_backend` call: `open_store`, every command's `--store` and the store
contract suite (tests/store_contract) then take it. Optional capabilities (`SharesWork`,
`KeepsBatchJobs`, `KeepsAlerts`, `ReadsInBulk`) are the methods its class has.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Protocol

from ..db import redact_url, url_scheme
from ..db.postgres import PostgresDatabase
from ..errors import ConfigError
from .base import SharesWork, Store
from .sqlite import SQLiteStore


class StoreBackend(Protocol):
    """A store's class, as the registry asks it about a location before a store is open."""

    @classmethod
    def open_location(cls, location: str | Path, *, reading: bool = False) -> Store:
        """The store at `location`. `reading`: the caller only reads (a file that cannot be
        written may then be opened read-only)."""
        ...

    @classmethod
    def exists(cls, location: str | Path) -> bool:
        """Whether a store may be at `location` before it is opened: a file's backend says
        whether the file is there; a server's says yes (opening asks the server)."""
        ...


#: The key of the backend that keeps a store named by a plain file path.
FILE_PATH = ""
#: Backends by URL scheme: a class, or "module:Class" for one whose module is imported only
#: when a location names it.
_BACKENDS: dict[str, type[StoreBackend] | str] = {
    FILE_PATH: SQLiteStore,
    **{scheme: "engine.store.postgres:PostgresStore" for scheme in PostgresDatabase.schemes},
}


def register_store_backend(scheme: str, backend: type[StoreBackend] | str) -> None:
    """Keep the stores of `scheme://` URLs in `backend` (a class, or "module:Class" imported
    when first needed); `FILE_PATH` for locations without a scheme."""
    _BACKENDS[scheme.lower()] = backend


def store_backend(location: str | Path) -> type[StoreBackend]:
    """The class of the store `location` names; an unknown scheme is one line naming the known ones."""
    scheme = url_scheme(location) or FILE_PATH
    backend = _BACKENDS.get(scheme)
    if backend is None:
        known = " or ".join(f"a {name}:// URL" for name in sorted(_BACKENDS) if name != FILE_PATH)
        raise ConfigError(f"store {redact_url(str(location))!r}: no store is kept at {scheme}:// URLs; give a file path (SQLite) or {known}", parameter="store")
    if isinstance(backend, str):
        module, name = backend.split(":")
        backend = _BACKENDS[scheme] = getattr(importlib.import_module(module), name)
    return backend


def store_shares_work(location: str | Path) -> bool:
    """Whether workers started on the store at `location` split a run between them."""
    return issubclass(store_backend(location), SharesWork)


__all__ = ["FILE_PATH", "StoreBackend", "register_store_backend", "store_backend", "store_shares_work"]
