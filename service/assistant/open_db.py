"""The sessions database the settings name: Postgres when DATABASE_URL is set (its driver checked first), else
SQLite in the data directory. Above both implementations (service/assistant/db.py, postgres.py)."""

from __future__ import annotations

from pathlib import Path

from service.assistant.db import SqliteDatabase
from service.assistant.postgres import PostgresDatabase
from service.errors import DependencyUnavailableError


def open_database(database_url: str, sqlite_path: Path) -> SqliteDatabase | PostgresDatabase:
    """Postgres when a URL is configured (or DependencyUnavailableError), else SQLite at `sqlite_path`."""
    if not database_url:
        return SqliteDatabase(sqlite_path)
    try:
        import psycopg  # noqa: F401
        import psycopg_pool  # noqa: F401
    except ImportError as exc:
        raise DependencyUnavailableError(
            f"DATABASE_URL is set but the Postgres driver is missing ({exc.name}).",
            "Install the service extra: pip install -e '.[service]' (psycopg[binary], psycopg-pool).",
        ) from exc
    return PostgresDatabase(database_url)
