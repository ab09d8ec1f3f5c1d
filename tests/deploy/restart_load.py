"""Postgres restarted under load: chats (each client its own session, a marker in each message), session lists and
/readyz are sent steadily to a server with 2 uvicorn workers while the test's Postgres stops for `outage_s` and
starts again. Each request's send time and status are kept; afterwards every session's stored messages are read
(all pages) to count acknowledged turns lost and turns stored twice.

    python -m tests.deploy.restart_load --outage 3        # prints the figures (starts Postgres and the server)

tests/deploy/test_postgres_restart.py asserts on the same run.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from service.settings import REPO_ROOT
from tests.deploy.postgres import PgServer, find_pg_bin, free_port, start_postgres

MESSAGES = ("用Qwen2-7B做LoRA，预算3000", "预算改成8000呢", "换成A100呢", "3 epochs instead")
TURNS_PER_SESSION = 100


@dataclass
class Sent:
    kind: str  # chat | sessions | readyz
    at_s: float  # when it was sent, seconds since the load started
    status: int  # 0: no answer (timeout, connection refused)
    marker: str = ""


@dataclass
class Run:
    outage_s: float
    down_at_s: float = 0.0  # Postgres stopped (seconds since the load started)
    up_at_s: float = 0.0  # pg_ctl start returned: accepting connections again
    sent: list[Sent] = field(default_factory=list)
    lost: int = 0  # acknowledged (200) chats missing from their session
    duplicated: int = 0  # markers stored more than once
    stored: int = 0

    def failures(self, kind: str, start_s: float, end_s: float = float("inf")) -> tuple[int, int]:
        """(non-200 answers, requests) of `kind` sent in [start_s, end_s)."""
        picked = [s for s in self.sent if s.kind == kind and start_s <= s.at_s < end_s]
        return sum(s.status != 200 for s in picked), len(picked)

    def summary(self, grace_s: float = 5.0) -> dict[str, object]:
        out: dict[str, object] = {"outage_s": self.outage_s, "lost": self.lost, "duplicated": self.duplicated,
                                  "stored_turns": self.stored}
        for kind in ("chat", "sessions", "readyz"):
            down_bad, down_n = self.failures(kind, self.down_at_s, self.up_at_s)
            bad, n = self.failures(kind, self.up_at_s)
            late_bad, late_n = self.failures(kind, self.up_at_s + grace_s)
            out[kind] = {"while_down": f"{down_bad}/{down_n} not 200", "after_recovery": f"{bad}/{n} not 200",
                         f"from_{grace_s:g}s_after_recovery": f"{late_bad}/{late_n} not 200",
                         "statuses": dict(Counter(str(s.status) for s in self.sent if s.kind == kind))}
        return out


@contextmanager
def serve(pg: PgServer, data_dir: Path, workers: int = 2) -> Iterator[str]:
    """`uvicorn --workers N` on a free loopback port against `pg`, until /readyz is 200."""
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "DATABASE_URL": pg.url, "CHROMA_HOST": "",
           "GPU_ADVISOR_LLM": "offline", "GPU_ADVISOR_API_KEY": "", "GPU_ADVISOR_DATA_DIR": str(data_dir),
           "HF_HUB_OFFLINE": "1", "ANONYMIZED_TELEMETRY": "False"}
    proc = subprocess.Popen([sys.executable, "-m", "uvicorn", "--factory", "tests.deploy.worker_app:app", "--host",
                             "127.0.0.1", "--port", str(port), "--workers", str(workers), "--log-level", "warning"],
                            env=env, cwd=REPO_ROOT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline, in_a_row = time.monotonic() + 240, 0
        while in_a_row < 2 * workers:
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the server did not become ready (exit {proc.poll()})")
            try:
                in_a_row = in_a_row + 1 if httpx.get(f"{url}/readyz", timeout=5).status_code == 200 else 0
            except httpx.HTTPError:
                in_a_row = 0
            time.sleep(0.2)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=60)


def _chatter(url: str, index: int, t0: float, stop: threading.Event, run: Run, lock: threading.Lock,
             sessions: list[tuple[str, str]], until_s: float = float("inf")) -> None:
    """One client chatting, a new session every TURNS_PER_SESSION turns (so no session reaches the turn cap)."""
    headers = {"X-Client-Id": f"restart-{index}"}
    sid: str | None = None
    n = 0
    with httpx.Client(base_url=url, timeout=60, headers=headers) as http:
        while not stop.is_set() and time.monotonic() - t0 < until_s:
            n += 1
            if n % TURNS_PER_SESSION == 0:
                sid = None
            marker = f"[r c{index} t{n}]"
            body: dict[str, object] = {"message": f"{MESSAGES[n % len(MESSAGES)] if sid else MESSAGES[0]} {marker}"}
            if sid:
                body["session_id"] = sid
            at = time.monotonic() - t0
            try:
                r = http.post("/v1/chat", json=body)
                status = r.status_code
            except httpx.HTTPError:
                status = 0
            if status == 200 and sid is None:
                sid = r.json()["session_id"]
                with lock:
                    sessions.append((f"restart-{index}", sid))
            with lock:
                run.sent.append(Sent("chat", at, status, marker))
            stop.wait(0.05)


def _poller(url: str, kind: str, path: str, t0: float, stop: threading.Event, run: Run, lock: threading.Lock,
            every_s: float) -> None:
    with httpx.Client(base_url=url, timeout=30, headers={"X-Client-Id": "restart-0"}) as http:
        while not stop.is_set():
            at = time.monotonic() - t0
            try:
                status = http.get(path).status_code
            except httpx.HTTPError:
                status = 0
            with lock:
                run.sent.append(Sent(kind, at, status))
            stop.wait(every_s)


def stored_markers(url: str, client_id: str, sid: str) -> list[str]:
    """Every user message's marker in the session, all pages (newest page first, each oldest first)."""
    out: list[str] = []
    path: str | None = f"/v1/sessions/{sid}/messages?limit=200"
    with httpx.Client(base_url=url, timeout=60, headers={"X-Client-Id": client_id}) as http:
        while path:
            r = http.get(path)
            r.raise_for_status()
            out = [m["content"][m["content"].rindex("[r "):] for m in r.json()
                   if m["role"] == "user" and "[r " in m["content"]] + out
            path = r.links.get("next", {}).get("url")
    return out


def restart_under_load(pg: PgServer, url: str, outage_s: float, before_s: float = 6.0, after_s: float = 15.0,
                       chatters: int = 3, pollers: int = 2, burst: int = 12) -> Run:
    """`burst` more clients chat for the first half of `before_s` (each worker's pool grows to hold them, so idle
    connections are there to die with the server), then `chatters` and the pollers carry on through the restart."""
    run, lock, stop = Run(outage_s), threading.Lock(), threading.Event()
    sessions: list[tuple[str, str]] = []
    t0 = time.monotonic()
    threads = [threading.Thread(target=_chatter, args=(url, i, t0, stop, run, lock, sessions,
                                                       float("inf") if i < chatters else before_s / 2))
               for i in range(chatters + burst)]
    for kind, path in (("sessions", "/v1/sessions"), ("readyz", "/readyz")):
        threads += [threading.Thread(target=_poller, args=(url, kind, path, t0, stop, run, lock, 0.1))
                    for _ in range(pollers)]
    for t in threads:
        t.start()
    try:
        time.sleep(before_s)
        run.down_at_s = time.monotonic() - t0
        pg.pause()
        time.sleep(outage_s)
        pg.resume()
        run.up_at_s = time.monotonic() - t0
        time.sleep(after_s)
    finally:
        stop.set()
        for t in threads:
            t.join(timeout=120)
    acked = {s.marker for s in run.sent if s.kind == "chat" and s.status == 200}
    stored: list[str] = []
    for client_id, sid in sessions:
        stored += stored_markers(url, client_id, sid)
    counts = Counter(stored)
    run.stored = len(stored)
    run.lost = sum(1 for m in acked if m not in counts)
    run.duplicated = sum(n - 1 for n in counts.values() if n > 1)
    return run


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--outage", type=float, action="append", help="seconds Postgres stays down (repeatable)")
    ap.add_argument("--after", type=float, default=15.0, help="seconds of load after Postgres is back")
    ap.add_argument("--chatters", type=int, default=3, help="clients chatting, each in its own session")
    ap.add_argument("--pollers", type=int, default=2, help="clients listing sessions, and as many asking /readyz")
    ap.add_argument("--burst", type=int, default=12, help="more clients chatting before the restart only")
    args = ap.parse_args()
    bin_dir, why = find_pg_bin()
    if bin_dir is None:
        raise SystemExit(f"needs Postgres: {why}")
    pg = start_postgres(bin_dir)
    try:
        import tempfile

        with serve(pg, Path(tempfile.mkdtemp(prefix="restart-load-"))) as url:
            for outage in args.outage or [3.0]:
                print(json.dumps(restart_under_load(pg, url, outage, after_s=args.after, chatters=args.chatters,
                                                    pollers=args.pollers, burst=args.burst).summary(), indent=1))
    finally:
        pg.stop()


if __name__ == "__main__":
    main()
