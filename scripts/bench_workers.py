"""Load figure for several workers: a throwaway Postgres (tests/deploy/postgres.py), then for each worker count
`uvicorn --workers N` on one loopback port (the offline assistant, sessions on Postgres, the API tests' stand-in
retriever so no index build runs), and C clients x T turns each in its own session. Prints req/s, p50/p95 and lost
turns (turns acknowledged but missing from the session). Prints figures; asserts nothing.

    python scripts/bench_workers.py --workers 1 4 --clients 50 --turns 5
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.deploy.postgres import find_pg_bin, free_port, start_postgres  # noqa: E402

FIRST = "用Qwen2-7B做问答微调，数据集10万条JSONL，预算月均¥3000"


async def client(http: httpx.AsyncClient, base: str, n: int, turns: int, lat: list[float]) -> tuple[int, int]:
    """(turns acknowledged, turns stored) for one client's session."""
    headers = {"X-Client-Id": f"bench-{n}"}
    sid: str | None = None
    acked = 0
    for t in range(turns):
        body = {"message": FIRST if t == 0 else f"预算改成{3000 + 500 * t}呢", "session_id": sid}
        start = time.perf_counter()
        r = await http.post(f"{base}/v1/chat", json=body, headers=headers)
        lat.append(time.perf_counter() - start)
        if r.status_code == 200:
            acked += 1
            sid = r.json()["session_id"]
    if sid is None:
        return acked, 0
    info = await http.get(f"{base}/v1/sessions/{sid}", headers=headers)
    return acked, int(info.json()["turns"]) if info.status_code == 200 else 0


async def load(base: str, clients: int, turns: int) -> str:
    lat: list[float] = []
    async with httpx.AsyncClient(timeout=600) as http:
        start = time.perf_counter()
        results = await asyncio.gather(*(client(http, base, n, turns, lat) for n in range(clients)))
        wall = time.perf_counter() - start
    acked = sum(a for a, _ in results)
    stored = sum(s for _, s in results)
    q = statistics.quantiles(lat, n=100)
    return (f"{len(lat)} requests in {wall:.1f} s = {len(lat) / wall:.2f} req/s; p50 {q[49] * 1e3:.0f} ms, "
            f"p95 {q[94] * 1e3:.0f} ms; acknowledged {acked}, lost {acked - stored}")


def run(workers: int, url: str, clients: int, turns: int) -> str:
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(REPO), "DATABASE_URL": url, "GPU_ADVISOR_LLM": "offline",
           "GPU_ADVISOR_API_KEY": "", "GPU_ADVISOR_DATA_DIR": tempfile.mkdtemp(prefix="bench-workers-"),
           "HF_HUB_OFFLINE": "1", "ANONYMIZED_TELEMETRY": "False"}
    proc = subprocess.Popen([sys.executable, "-m", "uvicorn", "--factory", "tests.deploy.worker_app:app",
                             "--host", "127.0.0.1", "--port", str(port), "--workers", str(workers),
                             "--log-level", "warning"], env=env, cwd=REPO)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 300
        ready = 0
        while time.monotonic() < deadline and ready < 3 * workers:  # every worker has warmed up, most likely
            with contextlib.suppress(httpx.HTTPError):
                ready += httpx.get(f"{base}/readyz", timeout=5).status_code == 200
            time.sleep(0.5)
        return asyncio.run(load(base, clients, turns))
    finally:
        proc.terminate()
        proc.wait(timeout=60)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 4])
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--turns", type=int, default=5)
    args = ap.parse_args()
    bin_dir, why = find_pg_bin()
    if bin_dir is None:
        raise SystemExit(f"needs Postgres: {why}")
    pg = start_postgres(bin_dir)
    try:
        print(f"{args.clients} clients x {args.turns} turns, {os.cpu_count()} CPUs")
        for n in args.workers:
            print(f"workers={n}: {run(n, pg.url, args.clients, args.turns)}", flush=True)
    finally:
        pg.stop()


if __name__ == "__main__":
    main()
