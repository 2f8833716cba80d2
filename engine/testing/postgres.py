"""A throwaway PostgreSQL server for tests and benchmarks of the PostgreSQL store: the
binaries of Debian's `postgresql` package, a data directory under /tmp, 127.0.0.1 and a free
port. PostgreSQL refuses to run as root, so as root the cluster belongs to the `postgres`
system user that the package creates.

    cluster = PostgresCluster(postgres_binaries()).start()
    url = cluster.new_database()        # postgresql://postgres@127.0.0.1:PORT/t_...
    cluster.stop()
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from pathlib import Path
from urllib.parse import quote


def postgres_binaries() -> Path | None:
    """The directory of the newest installed PostgreSQL's initdb and pg_ctl, if any."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    return Path(found[-1]).parent if found else None


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class PostgresCluster:
    def __init__(self, bin_dir: Path) -> None:
        self.bin_dir = bin_dir
        self.directory = Path(tempfile.mkdtemp(prefix="scorers-pg-"))
        self.data = self.directory / "data"
        self.port = _free_port()
        self._as_postgres = os.geteuid() == 0
        if self._as_postgres:
            account = pwd.getpwnam("postgres")
            os.chown(self.directory, account.pw_uid, account.pw_gid)

    def _run(self, *command: str) -> None:
        argv = [str(self.bin_dir / command[0]), *command[1:]]
        if self._as_postgres:
            argv = ["runuser", "-u", "postgres", "--", *argv]
        subprocess.run(argv, check=True, capture_output=True, timeout=120)

    def start(self) -> PostgresCluster:
        self._run("initdb", "-D", str(self.data), "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8")
        # fsync off: a test cluster need not survive an OS crash, and the disk is shared.
        options = f"-c listen_addresses=127.0.0.1 -p {self.port} -k {self.directory} -c fsync=off -c max_connections=200"
        self._run("pg_ctl", "-D", str(self.data), "-o", options, "-l", str(self.directory / "log"), "-w", "start")
        return self

    def stop(self) -> None:
        try:
            self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(self.directory, ignore_errors=True)

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def password_user(self, name: str, password: str, database: str = "postgres") -> str:
        """A role that must give `password` (scram-sha-256; every other role is trusted) and
        the URL that logs it in to `database`."""
        import psycopg
        from psycopg import sql

        with psycopg.connect(self.url(), autocommit=True) as connection:
            connection.execute(sql.SQL("CREATE ROLE {} LOGIN SUPERUSER PASSWORD {}").format(sql.Identifier(name), sql.Literal(password)))
        rules = self.data / "pg_hba.conf"
        # The first matching line decides, so this one goes before initdb's `trust` lines.
        rules.write_text(f"host all {name} 127.0.0.1/32 scram-sha-256\n" + rules.read_text())
        self._run("pg_ctl", "-D", str(self.data), "reload")
        url = f"postgresql://{name}:{quote(password, safe='')}@127.0.0.1:{self.port}/{database}"
        wrong = url.replace(quote(password, safe=""), "not-" + quote(password, safe=""))
        for _ in range(50):  # the server reads the rules again soon after the signal, not at once
            try:
                psycopg.connect(wrong, connect_timeout=2).close()
            except psycopg.OperationalError:
                return url
            time.sleep(0.1)
        raise RuntimeError("the server did not start asking for passwords")

    def new_database(self) -> str:
        import psycopg

        name = f"t_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(self.url(), autocommit=True) as connection:
            connection.execute(f"CREATE DATABASE {name}")
        return self.url(name)
