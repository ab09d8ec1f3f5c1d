"""A throwaway Postgres for tests: initdb in a temp dir, pg_ctl start on a free 127.0.0.1 port, stop and delete
afterwards. Uses the Debian packages `make postgres` installs (or any pg_ctl on PATH); as root it runs the server
as the `postgres` user (initdb refuses root). `find_pg_bin()` says why not when it cannot."""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path


@dataclass
class PgServer:
    url: str
    port: int
    root: Path
    bin_dir: Path
    user: str | None
    options: str = ""

    def _run(self, *args: str) -> subprocess.CompletedProcess[str]:
        cmd = [str(self.bin_dir / args[0]), *args[1:]]
        if self.user:
            cmd = ["runuser", "-u", self.user, "--", *cmd]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)

    def pause(self) -> None:
        """Stop the server and keep its data (resume() starts it again on the same port)."""
        self._run("pg_ctl", "-D", str(self.root / "data"), "-m", "fast", "-w", "stop")

    def resume(self) -> None:
        done = self._run("pg_ctl", "-D", str(self.root / "data"), "-o", self.options, "-l", str(self.root / "log"),
                         "-w", "-t", "60", "start")
        if done.returncode != 0:
            raise RuntimeError(f"pg_ctl start failed: {done.stderr[-400:]}")

    def stop(self) -> None:
        self._run("pg_ctl", "-D", str(self.root / "data"), "-m", "immediate", "-w", "stop")
        shutil.rmtree(self.root, ignore_errors=True)


def find_pg_bin() -> tuple[Path | None, str]:
    """(directory with initdb and pg_ctl, "") or (None, why not)."""
    candidates = [Path(p).parent for p in (shutil.which("pg_ctl"),) if p]
    candidates += sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True)
    for d in candidates:
        if (d / "initdb").exists() and (d / "pg_ctl").exists():
            if os.geteuid() == 0:
                try:
                    pwd.getpwnam("postgres")
                except KeyError:
                    return None, "running as root and there is no 'postgres' user to run the server as"
                if shutil.which("runuser") is None:
                    return None, "running as root and runuser is missing"
            return d, ""
    return None, "Postgres is not installed (no initdb/pg_ctl; `make postgres` installs it from Debian)"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_postgres(bin_dir: Path) -> PgServer:
    root = Path(tempfile.mkdtemp(prefix="gpu-advisor-pg-"))
    user = "postgres" if os.geteuid() == 0 else None
    if user:
        entry = pwd.getpwnam(user)
        os.chown(root, entry.pw_uid, entry.pw_gid)
    port = free_port()
    server = PgServer(f"postgresql://advisor@127.0.0.1:{port}/postgres", port, root, bin_dir, user)
    init = server._run("initdb", "-D", str(root / "data"), "-U", "advisor", "-A", "trust", "-E", "UTF8",
                       "--no-sync")
    if init.returncode != 0:
        shutil.rmtree(root, ignore_errors=True)
        raise RuntimeError(f"initdb failed: {init.stderr[-800:]}")
    opts = (f"-c listen_addresses=127.0.0.1 -p {port} -c unix_socket_directories={root} -c fsync=off "
            "-c max_connections=200 -c shared_buffers=32MB")
    server.options = opts
    start = server._run("pg_ctl", "-D", str(root / "data"), "-o", opts, "-l", str(root / "log"), "-w", "-t", "60",
                        "start")
    if start.returncode != 0:
        log = (root / "log").read_text(errors="replace")[-800:] if (root / "log").exists() else ""
        shutil.rmtree(root, ignore_errors=True)
        raise RuntimeError(f"pg_ctl start failed: {start.stderr[-400:]} {log}")
    return server
