"""Where conversations persist: SQLite under the data dir by default, Postgres when DATABASE_URL is set.

A Postgres that cannot be reached (or a missing driver) degrades to SQLite with a logged warning: the service
still starts and keeps sessions, on this machine only.
"""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)


def sqlite_checkpointer(path: Path) -> Any:
    from langgraph.checkpoint.sqlite import SqliteSaver

    return SqliteSaver(sqlite3.connect(path, check_same_thread=False))


def open_checkpointer(database_url: str, sqlite_path: Path) -> tuple[Any, str]:
    """(checkpointer, description). Postgres needs `pip install langgraph-checkpoint-postgres psycopg[binary]`."""
    if database_url:
        try:
            from langgraph.checkpoint.postgres import PostgresSaver
            from psycopg import Connection
            from psycopg.rows import dict_row

            conn = Connection.connect(database_url, autocommit=True, prepare_threshold=0, row_factory=dict_row)
            saver = PostgresSaver(conn)
            saver.setup()
            return saver, "postgres"
        except Exception as exc:  # missing driver, bad URL, server down: keep serving on SQLite
            log.warning("DATABASE_URL is set but Postgres is unavailable (%s); sessions use SQLite at %s. "
                        "Install langgraph-checkpoint-postgres and psycopg, and check the URL.", exc, sqlite_path)
    return sqlite_checkpointer(sqlite_path), "sqlite"
