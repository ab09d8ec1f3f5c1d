"""A full disk, said as such: the error a write raises when there is no space, and the data directory's free space.

    full = storage_full(exc, settings.data_dir)     # StorageFullError (HTTP 507, storage_full) or None
    disk = disk_space(settings.data_dir, min_free_bytes)   # DiskSpace: free bytes, low?, public and detailed text

SQLite says "database or disk is full", the OS ENOSPC or EDQUOT, Postgres SQLSTATE 53100 (disk_full); each was an
internal_error 500 that did not say why. The error names the disk and the fix; the write that failed was one
transaction, so nothing already stored is lost, and the same message can be sent again once there is space.
"""

from __future__ import annotations

import errno
import shutil
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from service.errors import AdvisorError

FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})
MIB = 1024 * 1024


class StorageFullError(AdvisorError):
    """A write failed for lack of space (HTTP 507 Insufficient Storage)."""

    code = "storage_full"


def _is_full(exc: BaseException) -> str:
    """The database's or the OS's own words when `exc` (or its cause) is a disk-full error, else ''."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, OSError) and current.errno in FULL_ERRNOS:
            return current.strerror or "No space left on device"
        if isinstance(current, sqlite3.OperationalError) and "disk is full" in str(current):
            return "database or disk is full"
        if getattr(current, "sqlstate", None) == "53100":  # psycopg's DiskFull: the Postgres server's disk
            return "the Postgres server's disk is full"
        current = current.__cause__ or current.__context__
    return ""


def storage_full(exc: BaseException, data_dir: Path, database: str = "") -> StorageFullError | None:
    """The StorageFullError for `exc` when it says the disk is full, naming where; None for any other error."""
    if isinstance(exc, StorageFullError):
        return exc
    said = _is_full(exc)
    if not said:
        return None
    if "Postgres" in said:
        where = f"the session database's disk ({database or 'DATABASE_URL'})"
        fix = "Free space on the Postgres server's disk (or grow it), then send the message again."
    else:
        where = f"the data directory's disk (GPU_ADVISOR_DATA_DIR={data_dir})"
        fix = (f"Free space on the disk that holds {data_dir} (old logs, `docker system prune`, a larger volume), "
               "then send the message again; /readyz shows the free space.")
    return StorageFullError(f"Storage full: {where} has no space left ({said}). The turn was not stored; "
                            "nothing stored before was lost.", fix)


@dataclass(frozen=True)
class DiskSpace:
    free_bytes: int
    min_free_bytes: int
    path: Path

    @property
    def low(self) -> bool:
        return self.free_bytes < self.min_free_bytes

    def public(self) -> str:
        """For /readyz without authentication: no path."""
        free = f"{self.free_bytes / MIB:,.0f} MiB free on the data directory's disk"
        if not self.low:
            return "ready"
        return f"full: {free} (under {self.min_free_bytes / MIB:,.0f} MiB); free space on it"

    def detail(self) -> str:
        if not self.low:
            return "ready"
        return f"{self.public()} ({self.path})"


def disk_space(data_dir: Path, min_free_bytes: int) -> DiskSpace:
    """Free space on the disk of `data_dir` (or of its nearest existing parent, before it is created)."""
    path = data_dir.resolve()
    while not path.exists() and path != path.parent:
        path = path.parent
    return DiskSpace(shutil.disk_usage(path).free, min_free_bytes, data_dir.resolve())
