"""People's 👍/👎 on answers (Slack's feedback buttons), counted per question type from a deployment's session store,
for the eval report: `gpu-advisor eval --feedback-data-dir .data` (or DATABASE_URL's Postgres)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from service.errors import InvalidInputError

SESSIONS_FILE = "sessions.sqlite"


def feedback_counts(data_dir: Path, database_url: str = "") -> dict[str, Any]:
    """{"source": where, "by_intent": {intent: {"up", "down"}}, "total": {"up", "down"}} from the session store of
    `data_dir` (or Postgres at `database_url`). A data dir without a store is an error, not an empty count."""
    from service.assistant.open_db import open_database
    from service.assistant.sessions import SessionStore

    path = data_dir / SESSIONS_FILE
    if not database_url and not path.is_file():
        raise InvalidInputError(f"No session store at {path}.",
                                "Give the data dir of the deployment that collects feedback (GPU_ADVISOR_DATA_DIR).")
    db = open_database(database_url, path)
    try:
        by_intent = SessionStore(db).feedback_counts()
        source = db.describe()
    finally:
        db.close()
    total = {k: sum(v[k] for v in by_intent.values()) for k in ("up", "down")}
    return {"source": source, "by_intent": by_intent, "total": total}


def share_up(counts: dict[str, int]) -> float | None:
    n = counts["up"] + counts["down"]
    return None if n == 0 else counts["up"] / n
