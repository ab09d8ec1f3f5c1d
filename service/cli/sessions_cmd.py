"""`gpu-advisor sessions prune|rekey|stats`: the session store's upkeep, on the store the server uses (DATABASE_URL,
else sessions.sqlite under GPU_ADVISOR_DATA_DIR).

    gpu-advisor sessions prune [--older-than-days N] [--dry-run]    # N: GPU_ADVISOR_SESSION_TTL_DAYS by default
    gpu-advisor sessions rekey --from-key OLD_KEY                  # to the key (or key id) configured now
    gpu-advisor sessions rekey --from-key - < old.key --to-key-id team-ml
    gpu-advisor sessions stats
"""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from service.cli.common import emit_json, fail, guarded


def _store() -> object:
    from service.assistant.open_db import open_database
    from service.assistant.sessions import SessionStore
    from service.settings import get_settings

    s = get_settings()
    s.data_dir.mkdir(parents=True, exist_ok=True)
    return SessionStore(open_database(s.database_url, s.data_dir / "sessions.sqlite"))


def _secret(value: str | None) -> str | None:
    """A key given as `-` is read from stdin (so it stays out of the process list and the shell history)."""
    if value != "-":
        return value
    return sys.stdin.readline().strip()


def build_sessions_app() -> typer.Typer:
    sessions_app = typer.Typer(no_args_is_help=True)

    @sessions_app.command()
    @guarded
    def prune(
        older_than_days: Annotated[int | None, typer.Option(min=1, help="delete sessions untouched this many days "
                                                            "(default: GPU_ADVISOR_SESSION_TTL_DAYS)")] = None,
        dry_run: Annotated[bool, typer.Option("--dry-run", help="count, delete nothing")] = False,
        json_out: Annotated[bool, typer.Option("--json")] = False,
    ) -> None:
        """Delete sessions untouched for the retention period, with their turns and ratings."""
        from service.assistant.retention import cutoff_of
        from service.assistant.retention import prune as run_prune
        from service.assistant.sessions import SessionStore
        from service.settings import get_settings

        days = older_than_days if older_than_days is not None else get_settings().session_ttl_days
        if days <= 0:
            fail("No retention period: pass --older-than-days N or set GPU_ADVISOR_SESSION_TTL_DAYS.")
        store = _store()
        assert isinstance(store, SessionStore)
        if dry_run:
            rows = store.db.execute("SELECT COUNT(*), COALESCE(SUM(turns), 0) FROM advisor_sessions "
                                    "WHERE updated_at < ?", (cutoff_of(days),))
            out = {"sessions": int(rows[0][0]), "turns": int(rows[0][1]), "cutoff": cutoff_of(days),
                   "dry_run": True}
        else:
            done = run_prune(store, days)
            sqlite = store.sqlite()
            if sqlite is not None and done.sessions:  # the freed pages back to the disk
                sqlite.execute("VACUUM")
                sqlite.checkpoint()
            out = {"sessions": done.sessions, "turns": done.turns, "cutoff": done.cutoff, "dry_run": False}
        store.db.close()
        if json_out:
            emit_json(out)
            return
        verb = "would delete" if dry_run else "deleted"
        typer.echo(f"{verb} {out['sessions']} sessions ({out['turns']} turns) untouched since {out['cutoff']}")

    @sessions_app.command()
    @guarded
    def rekey(
        from_key: Annotated[str | None, typer.Option(help="the API key the sessions were created with (- reads "
                                                     "it from stdin)")] = None,
        from_key_id: Annotated[str | None, typer.Option(help="... or the key id they were created under")] = None,
        to_key: Annotated[str | None, typer.Option(help="the new key (- reads it from stdin; default: "
                                                   "GPU_ADVISOR_API_KEY)")] = None,
        to_key_id: Annotated[str | None, typer.Option(help="... or the key id to move them to (default: "
                                                      "GPU_ADVISOR_API_KEY_ID)")] = None,
        dry_run: Annotated[bool, typer.Option("--dry-run", help="count, move nothing")] = False,
        json_out: Annotated[bool, typer.Option("--json")] = False,
    ) -> None:
        """Move sessions created with an old API key (or key id) to the current one, after a key rotation."""
        from service.api.owner import key_scope
        from service.assistant.retention import rekey as run_rekey
        from service.assistant.sessions import SessionStore
        from service.settings import Settings, get_settings

        s = get_settings()
        old_key, new_key = _secret(from_key), _secret(to_key)
        if bool(old_key) == bool(from_key_id):
            fail("Name the old owner: --from-key KEY (or - for stdin), or --from-key-id ID.")
        for key_id in (from_key_id, to_key_id):
            if key_id:
                Settings.model_validate({"api_key_id": key_id})  # a key id's own check (letters, digits, ._-)
        old = f"keyid:{from_key_id}" if from_key_id else key_scope(old_key or "")
        if to_key_id or new_key:
            new = f"keyid:{to_key_id}" if to_key_id else key_scope(new_key or "")
        else:  # where the server, configured as this environment is, looks for them
            new = key_scope(s.api_key, s.api_key_id)
        if not new:
            fail("Name the new owner: --to-key or --to-key-id, or set GPU_ADVISOR_API_KEY (and GPU_ADVISOR_API_KEY_ID) "
                 "as the server has them.")
        if old == new:
            fail("The old and the new owner are the same: nothing to move.")
        store = _store()
        assert isinstance(store, SessionStore)
        done = run_rekey(store, old, new, dry_run=dry_run)
        store.db.close()
        out = {"sessions": done.sessions, "turns": done.turns, "skipped": list(done.skipped), "dry_run": dry_run}
        if json_out:
            emit_json(out)
            return
        verb = "would move" if dry_run else "moved"
        typer.echo(f"{verb} {done.sessions} sessions ({done.turns} turns) to the new key's owner"
                   + (f"; {len(done.skipped)} left where they were (the new owner has sessions with those ids: "
                      f"{', '.join(done.skipped[:5])})" if done.skipped else ""))

    @sessions_app.command()
    @guarded
    def stats(json_out: Annotated[bool, typer.Option("--json")] = False) -> None:
        """Sessions and turns stored, the oldest and the longest session, the retention settings."""
        from service.assistant.sessions import SessionStore
        from service.settings import get_settings

        s = get_settings()
        store = _store()
        assert isinstance(store, SessionStore)
        rows = store.db.execute("SELECT COUNT(*), COALESCE(SUM(turns), 0), MIN(updated_at), COALESCE(MAX(turns), 0) "
                                "FROM advisor_sessions")
        n, turns, oldest, longest = rows[0]
        store.db.close()
        out = {"store": store.db.describe(), "sessions": int(n), "turns": int(turns), "oldest_update": oldest,
               "longest_session_turns": int(longest), "ttl_days": s.session_ttl_days,
               "max_turns": s.session_max_turns}
        if json_out:
            emit_json(out)
            return
        for key, value in out.items():
            typer.echo(f"{key}: {value}")

    return sessions_app
