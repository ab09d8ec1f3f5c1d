"""Load test of the chat API on 127.0.0.1: N concurrent clients, each holding one session for T turns.

Reports requests/s, latency p50/p95, error statuses, and lost turns: after the load, each session's stored
conversation (GET /v1/sessions/{id}/messages) is compared with the turns the server acknowledged (200), by a
marker in each message. A lost turn is an acknowledged message missing from its session's history; a turn out of
order (sequential turns only), or stored twice, is counted too.

Without --url it starts the service itself (uvicorn, --workers N, the offline assistant, --data-dir) and stops it
after; with --url it loads a server already running (pass --api-key if it has one). Bounded: clients x turns
requests, each with a timeout.

    .venv/bin/python scripts/bench_load.py                          # 50 clients x 5 turns, 1 worker
    .venv/bin/python scripts/bench_load.py --workers 4              # the same against 4 uvicorn workers
    .venv/bin/python scripts/bench_load.py --url http://127.0.0.1:8000 --api-key KEY
    .venv/bin/python scripts/bench_load.py --burst                  # turns 2..T of a session sent at once

The retrieval index lives in --data-dir (default .data/bench, shared with bench_api.py): the first run builds it.
Build it with one worker first (several workers would each start building it).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

REPO = Path(__file__).resolve().parent.parent
QUESTIONS = [
    "用Qwen2-7B做问答微调，数据集10万条JSONL，预算月均¥3000",
    "换成 A100 呢？",
    "Full fine-tune Llama-3-8B on 50k samples, seq 4096, fastest option on JD Cloud",
    "QLoRA Qwen2-72B with 20k samples, budget 5000 yuan total",
    "3 epochs instead, and only Tencent Cloud",
]


@dataclass
class Client:
    index: int
    session_id: str | None = None
    acked: list[str] = field(default_factory=list)  # markers of the turns answered 200, in order sent
    latencies: list[float] = field(default_factory=list)
    statuses: list[int] = field(default_factory=list)


def marker(client: int, turn: int) -> str:
    return f"[bench c{client} t{turn}]"


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(q * (len(xs) - 1)))] if xs else float("nan")


async def turn(http: httpx.AsyncClient, c: Client, t: int, headers: dict[str, str]) -> None:
    body: dict[str, Any] = {"message": f"{QUESTIONS[(c.index + t) % len(QUESTIONS)]} {marker(c.index, t)}"}
    if c.session_id:
        body["session_id"] = c.session_id
    start = time.perf_counter()
    try:
        r = await http.post("/v1/chat", json=body, headers=headers)
        status = r.status_code
    except httpx.HTTPError:
        status = 0  # no answer (timeout, connection dropped)
    c.latencies.append(time.perf_counter() - start)
    c.statuses.append(status)
    if status == 200:
        c.session_id = c.session_id or r.json()["session_id"]
        c.acked.append(marker(c.index, t))


async def run_client(http: httpx.AsyncClient, c: Client, turns: int, burst: bool, key: str) -> None:
    headers = {"X-Client-Id": f"bench-{c.index}", **({"Authorization": f"Bearer {key}"} if key else {})}
    await turn(http, c, 1, headers)
    if c.session_id is None:
        return
    if burst:
        await asyncio.gather(*(turn(http, c, t, headers) for t in range(2, turns + 1)))
    else:
        for t in range(2, turns + 1):
            await turn(http, c, t, headers)


async def stored_markers(http: httpx.AsyncClient, c: Client, key: str) -> list[str] | None:
    headers = {"X-Client-Id": f"bench-{c.index}", **({"Authorization": f"Bearer {key}"} if key else {})}
    prefix = f"[bench c{c.index} t"
    out: list[str] = []
    path: str | None = f"/v1/sessions/{c.session_id}/messages?limit=200"
    while path:  # every page, newest first (each page oldest first)
        r = await http.get(path, headers=headers)
        if r.status_code != 200:
            return None
        out = [m["content"][m["content"].rindex(prefix):] for m in r.json()
               if m["role"] == "user" and prefix in m["content"]] + out
        path = r.links.get("next", {}).get("url")
    return out


def lost_turns(c: Client, stored: list[str] | None, burst: bool) -> dict[str, int]:
    if not c.acked:
        return {"lost": 0, "duplicated": 0, "out_of_order": 0}
    if stored is None:  # the session itself is gone
        return {"lost": len(c.acked), "duplicated": 0, "out_of_order": 0}
    lost = sum(1 for m in c.acked if m not in stored)
    duplicated = len(stored) - len(set(stored))
    kept = [m for m in stored if m in c.acked]
    in_send_order = sorted(kept, key=lambda m: int(m.split(" t")[1].rstrip("]")))
    return {"lost": lost, "duplicated": duplicated, "out_of_order": int(kept != in_send_order and not burst)}


async def load(url: str, clients: int, turns: int, burst: bool, key: str, timeout_s: float) -> dict[str, Any]:
    limits = httpx.Limits(max_connections=clients * (turns if burst else 1))
    async with httpx.AsyncClient(base_url=url, timeout=timeout_s, limits=limits) as http:
        population = [Client(i) for i in range(clients)]
        start = time.perf_counter()
        await asyncio.gather(*(run_client(http, c, turns, burst, key) for c in population))
        elapsed = time.perf_counter() - start
        stored = await asyncio.gather(*(stored_markers(http, c, key) for c in population if c.session_id))
    by_client = dict(zip([c.index for c in population if c.session_id], stored, strict=True))
    counts = [lost_turns(c, by_client.get(c.index), burst) for c in population]
    latencies = [x for c in population for x in c.latencies]
    statuses = [s for c in population for s in c.statuses]
    acked = sum(len(c.acked) for c in population)
    errors: dict[str, int] = {}
    for s in statuses:
        if s != 200:
            errors[str(s)] = errors.get(str(s), 0) + 1
    return {
        "clients": clients, "turns_per_client": turns, "burst": burst, "requests": len(statuses),
        "acknowledged": acked, "errors": errors, "elapsed_s": round(elapsed, 2),
        "requests_per_s": round(len(statuses) / elapsed, 2),
        "p50_ms": round(1000 * statistics.median(latencies), 1), "p95_ms": round(1000 * pct(latencies, 0.95), 1),
        "lost_turns": sum(x["lost"] for x in counts), "duplicated_turns": sum(x["duplicated"] for x in counts),
        "sessions_out_of_order": sum(x["out_of_order"] for x in counts),
    }


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def wait_ready(url: str, timeout_s: float, in_a_row: int) -> None:
    """/readyz 200 `in_a_row` times running (with several workers, each answers some of them)."""
    deadline, seen = time.monotonic() + timeout_s, 0
    while time.monotonic() < deadline:
        try:
            seen = seen + 1 if httpx.get(f"{url}/readyz", timeout=5).status_code == 200 else 0
        except httpx.HTTPError:
            seen = 0
        if seen >= in_a_row:
            return
        time.sleep(0.2)
    raise TimeoutError(f"{url}/readyz not 200 within {timeout_s:.0f} s")


def start_server(data_dir: Path, workers: int, key: str) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    env = {**os.environ, "GPU_ADVISOR_DATA_DIR": str(data_dir), "GPU_ADVISOR_LLM": "offline",
           "GPU_ADVISOR_API_KEY": key, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
           "ANONYMIZED_TELEMETRY": "False", "PYTHONPATH": str(REPO)}
    command = [sys.executable, "-m", "uvicorn", "service.app:create_app", "--factory", "--host", "127.0.0.1",
               "--port", str(port), "--workers", str(workers), "--log-level", "warning"]
    return subprocess.Popen(command, cwd=REPO, env=env), f"http://127.0.0.1:{port}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--url", default="", help="a running server; default: start one")
    ap.add_argument("--api-key", default="", help="the server's key (--url); a started server gets its own")
    ap.add_argument("--workers", type=int, default=1, help="uvicorn workers of the started server")
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--turns", type=int, default=5)
    ap.add_argument("--burst", action="store_true", help="send a session's turns 2..T concurrently")
    ap.add_argument("--data-dir", type=Path, default=REPO / ".data" / "bench")
    ap.add_argument("--ready-timeout", type=float, default=900.0, help="seconds to wait for /readyz")
    ap.add_argument("--request-timeout", type=float, default=300.0)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    proc, url, key = None, args.url.rstrip("/"), args.api_key
    if not url:
        key = "bench-load-key"
        proc, url = start_server(args.data_dir, args.workers, key)
    try:
        wait_ready(url, args.ready_timeout, in_a_row=2 * args.workers)
        out = asyncio.run(load(url, args.clients, args.turns, args.burst, key, args.request_timeout))
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(timeout=60)
    out = {"url": args.url or "started", "workers": args.workers if not args.url else None,
           "load_average": [round(x, 2) for x in os.getloadavg()], "cpus": os.cpu_count(), **out}
    if args.json:
        sys.stdout.write(json.dumps(out, indent=2) + "\n")
        return
    sys.stdout.write(
        f"{out['clients']} clients x {out['turns_per_client']} turns{' (burst)' if out['burst'] else ''}"
        f"{f', {args.workers} worker(s)' if not args.url else ''}, load average {out['load_average']} "
        f"on {out['cpus']} CPUs\n"
        f"  {out['requests']} requests in {out['elapsed_s']} s: {out['requests_per_s']} req/s, "
        f"p50 {out['p50_ms']} ms, p95 {out['p95_ms']} ms, errors {out['errors'] or 0}\n"
        f"  acknowledged turns {out['acknowledged']}: lost {out['lost_turns']}, "
        f"duplicated {out['duplicated_turns']}, sessions out of order {out['sessions_out_of_order']}\n"
    )


if __name__ == "__main__":
    main()
