"""One SQLite file shared by the threads of a process: how it is opened (WAL, a busy
timeout, read-only when the file or its disk cannot be written), its versioned schema, short
write transactions, and the driver's failures as `StoreError`."""

from __future__ import annotations

import errno
import json
import os
import shutil
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..errors import ConfigError, StoreError
from ..formatting import to_json
from .migrations import Migration, latest_version, pending

#: A check run before migrating, with the open connection and the file's schema version
#: (the results store refuses an SQLite file of something else this way).
BeforeMigrating = Callable[[sqlite3.Connection, int], None]

_CANNOT_WRITE = ("SQLITE_READONLY", "SQLITE_CANTOPEN", "SQLITE_PERM", "SQLITE_AUTH")


def failure_name(exc: BaseException) -> str:
    """The SQLite result code of a driver error (SQLITE_FULL, SQLITE_READONLY, ...), or ''."""
    name = getattr(exc, "sqlite_errorname", None)  # Python 3.11+
    if isinstance(name, str):
        return name
    text = str(exc).lower()
    for words, code in (("disk is full", "SQLITE_FULL"), ("readonly", "SQLITE_READONLY"), ("unable to open", "SQLITE_CANTOPEN"),
                        ("not a database", "SQLITE_NOTADB"), ("malformed", "SQLITE_CORRUPT"), ("locked", "SQLITE_BUSY")):
        if words in text:
            return code
    return ""


def failure_reason(exc: BaseException, path: Path | None = None) -> str:
    """A driver's error in a user's words: what is wrong with the file, not the call. SQLite
    reports a disk that filled up while it wrote its journal as a plain I/O error: the free
    space of the disk under `path` tells them apart."""
    name = failure_name(exc)
    if name == "SQLITE_FULL" or getattr(exc, "errno", None) == errno.ENOSPC:
        return "the disk (or the database's size limit) is full"
    if name.startswith(("SQLITE_IOERR", "SQLITE_CANTOPEN")) and path is not None and _disk_is_full(path):
        return "the disk is full"
    if name == "SQLITE_READONLY" or (name == "SQLITE_CANTOPEN" and path is not None and _read_only_disk(path)):
        return "the file cannot be written (a read-only file or disk)"
    if isinstance(exc, OSError):
        return exc.strerror or str(exc)
    return str(exc) or type(exc).__name__


def _read_only_disk(path: Path) -> bool:
    try:
        return bool(os.statvfs(path.parent if path.parent.exists() else Path.cwd()).f_flag & os.ST_RDONLY)
    except (OSError, AttributeError):  # AttributeError: no statvfs (Windows)
        return False


def _disk_is_full(path: Path) -> bool:
    try:
        return shutil.disk_usage(path.parent if path.parent.exists() else Path.cwd()).free < _FULL_BELOW
    except OSError:
        return False


#: Less free space than this is a full disk for a database (a few pages of its journal).
_FULL_BELOW = 256 * 1024


class SQLiteDatabase:
    """An SQLite file (or `:memory:`) with its schema at the latest version, or, opened with
    `reading=True` where it cannot be written, read as it is."""

    dialect = "sqlite"
    placeholder = "?"
    #: Calls answer from a local file, faster than a thread could start.
    remote = False
    max_connections = 1

    def __init__(
        self,
        path: str | Path,
        migrations: Sequence[Migration],
        *,
        busy_timeout: float = 30.0,
        reading: bool = False,
        before_migrating: BeforeMigrating | None = None,
    ) -> None:
        self.path = Path(path)
        self.location = str(path)
        self.in_memory = str(path) == ":memory:"
        self.read_only = False
        self._lock = threading.RLock()
        try:
            self.connection = self._connect(busy_timeout, read_only=False)
            self._migrate(migrations, before_migrating)
        except (OSError, sqlite3.Error) as exc:
            if not (reading and (failure_name(exc) in _CANNOT_WRITE or isinstance(exc, PermissionError) or "read-only" in str(exc))):
                self.close()
                raise
            # Only read, and the file or its disk cannot be written: read it as it is.
            self.close()
            self._open_read_only(migrations, busy_timeout)

    def _connect(self, busy_timeout: float, read_only: bool, immutable: bool = False) -> sqlite3.Connection:
        if read_only:
            flags = "mode=ro&immutable=1" if immutable else "mode=ro"
            connection = sqlite3.connect(
                f"{self.path.resolve().as_uri()}?{flags}", uri=True, timeout=busy_timeout, check_same_thread=False, isolation_level=None
            )
        else:
            if not self.in_memory:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            # One connection shared by the threads of this process, serialised by a lock: the
            # writes are short, and it keeps a single writer per process as SQLite prefers.
            connection = sqlite3.connect(str(self.path), timeout=busy_timeout, check_same_thread=False, isolation_level=None)
        connection.row_factory = sqlite3.Row
        self.connection = connection
        if not read_only and not self.in_memory:
            connection.execute("PRAGMA journal_mode=WAL")
            # NORMAL is durable across application crashes in WAL mode (only an OS crash can
            # lose the last transactions), and much faster than FULL.
            connection.execute("PRAGMA synchronous=NORMAL")
        connection.execute(f"PRAGMA busy_timeout={int(busy_timeout * 1000)}")
        return connection

    def _open_read_only(self, migrations: Sequence[Migration], busy_timeout: float) -> None:
        self.read_only = True
        try:
            self.connection = self._connect(busy_timeout, read_only=True)
            version = self.connection.execute("PRAGMA user_version").fetchone()[0]
        except sqlite3.Error as exc:
            if failure_name(exc) != "SQLITE_CANTOPEN":
                self.close()
                raise
            # A WAL file whose shared-memory file is gone cannot be read where nothing may be
            # created: on a read-only disk nobody changes it, so read it as unchanging.
            self.close()
            self.connection = self._connect(busy_timeout, read_only=True, immutable=True)
            version = self.connection.execute("PRAGMA user_version").fetchone()[0]
        pending(migrations, version, self.location)  # a newer release's file is refused
        if version < latest_version(migrations):
            self.close()
            raise ConfigError(
                f"{self.location} was written by an older version of llm-scorers and cannot be upgraded here: it is read-only. "
                "Open it once where it can be written (or copy it) to upgrade it"
            )

    def _migrate(self, migrations: Sequence[Migration], before_migrating: BeforeMigrating | None) -> None:
        # The version is read again inside the write transaction: two processes opening a new
        # file at once must not both apply the same migration.
        with self._lock:
            self.connection.execute("BEGIN IMMEDIATE")
            try:
                version = self.connection.execute("PRAGMA user_version").fetchone()[0]
                if before_migrating is not None:
                    before_migrating(self.connection, version)
                applied = pending(migrations, version, self.location)
                for migration in applied:
                    # Statement by statement: executescript() would commit the transaction.
                    for statement in migration.statements:
                        self.connection.execute(statement)
                    if migration.convert is not None:
                        migration.convert(self.connection)
                    self.connection.execute(f"PRAGMA user_version={migration.version}")
            except BaseException:
                if self.connection.in_transaction:
                    self.connection.execute("ROLLBACK")
                raise
            self.connection.execute("COMMIT")
        if any(migration.shrinks for migration in applied) and not self.in_memory:
            try:
                self.compact()
            except StoreError:
                pass  # another process reading, or no room for the copy: the freed space is reused by later writes

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One write transaction: committed at the end of the block, rolled back on an error.
        BEGIN IMMEDIATE takes the write lock up front, so a concurrent writer waits on the
        busy timeout instead of failing half-way with "database is locked"."""
        with self._lock:
            try:
                self.connection.execute("BEGIN IMMEDIATE")
                try:
                    yield self.connection
                    self.connection.execute("COMMIT")
                except BaseException:
                    # SQLite may have rolled back already (a full disk does).
                    if self.connection.in_transaction:
                        self.connection.execute("ROLLBACK")
                    raise
            except sqlite3.Error as exc:
                raise StoreError(failure_reason(exc, self.path), self.location) from exc

    def read(self, sql: str, parameters: Sequence[Any] = ()) -> list[sqlite3.Row]:
        with self._lock:
            try:
                return self.connection.execute(sql, parameters).fetchall()
            except sqlite3.Error as exc:
                raise StoreError(failure_reason(exc, self.path), self.location) from exc

    # what differs from PostgreSQL

    def now(self) -> tuple[str, list[Any]]:
        """The present moment as the timestamp columns hold it: seconds since the epoch."""
        return self.placeholder, [time.time()]

    def before(self, column: str, seconds_ago: float) -> tuple[str, list[Any]]:
        """A condition: `column` is more than `seconds_ago` in the past."""
        return f"{column} < ?", [time.time() - seconds_ago]

    def json_value(self, value: Any) -> Any:
        # Items may hold anything a host passes (dates, objects): stored as their text then.
        return None if value is None else to_json(value)

    def from_json(self, stored: Any) -> Any:
        return None if stored is None else json.loads(stored)

    def json_number(self, column: str, field: str) -> str:
        """SQL for the number under `field` of the JSON in `column`."""
        return f"json_extract({column}, '$.{field}')"

    def size_bytes(self, tables: Sequence[str]) -> int:
        """What the file takes on disk (with its write-ahead log)."""
        return sum(path.stat().st_size for path in self.path.parent.glob(self.path.name + "*") if path.is_file())

    def compact(self) -> None:
        """Give the space of deleted rows back to the disk."""
        with self._lock:
            try:
                self.connection.execute("VACUUM")
            except sqlite3.Error as exc:
                raise StoreError(failure_reason(exc, self.path), self.location) from exc

    def close(self) -> None:
        with self._lock:
            connection = getattr(self, "connection", None)
            if connection is not None:
                connection.close()
