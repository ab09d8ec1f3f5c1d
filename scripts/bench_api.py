"""Chat API figures with the real offline assistant, all on 127.0.0.1:

1. in-process POST /v1/chat latency (warm: after the warm-up and one call), p50 / p95;
2. time from starting `serve` (a child process) to /healthz 200 and to /readyz 200;
3. requests/s and latency with N concurrent clients against that live uvicorn (bounded: --requests in total).

The retrieval index lives in --data-dir (default .data/bench): the first run builds it (it embeds the whole corpus,
about a minute on a laptop CPU), later runs reuse it, as a restarted server does. Wall times on a shared, loaded
machine mostly measure waiting for a core, so the load average is printed with the figures.

    .venv/bin/python scripts/bench_api.py [--requests 200] [--clients 10] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

QUESTIONS = [
    "用Qwen2-7B做问答微调，数据集10万条JSONL，预算月均¥3000",
    "A10 支持 FP8 吗？",
    "Full fine-tune Llama-3-8B on 50k samples, seq 4096, fastest option on JD Cloud",
    "QLoRA Qwen2-72B with 20k samples, budget 5000 yuan total",
]


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(q * (len(xs) - 1)))]


def ms(xs: list[float]) -> dict[str, float]:
    return {"p50_ms": round(1000 * statistics.median(xs), 1), "p95_ms": round(1000 * pct(xs, 0.95), 1),
            "n": len(xs)}


def in_process(data_dir: Path, n: int) -> dict[str, Any]:
    from fastapi.testclient import TestClient

    from service.app import create_app
    from service.settings import Settings

    settings = Settings(data_dir=data_dir, llm="offline", api_key="")
    start = time.perf_counter()
    app = create_app(settings)
    app.state.resources.warm_up()  # what the lifespan's thread does, here in the foreground
    warm_s = time.perf_counter() - start
    client = TestClient(app)
    for q in QUESTIONS:  # first call of each path (imports, caches) is not counted
        client.post("/v1/chat", json={"message": q}).raise_for_status()
    times: list[float] = []
    for i in range(n):
        t = time.perf_counter()
        client.post("/v1/chat", json={"message": QUESTIONS[i % len(QUESTIONS)]}).raise_for_status()
        times.append(time.perf_counter() - t)
    plan_times: list[float] = []
    for _ in range(n):
        t = time.perf_counter()
        client.post("/v1/plan", json={"model": "Qwen2-7B", "samples": 100000}).raise_for_status()
        plan_times.append(time.perf_counter() - t)
    return {"warm_up_s": round(warm_s, 2), "chat": ms(times), "plan": ms(plan_times)}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def wait_status(url: str, status: int, timeout_s: float) -> float:
    import httpx

    start = time.perf_counter()
    while time.perf_counter() - start < timeout_s:
        try:
            if httpx.get(url, timeout=2).status_code == status:
                return time.perf_counter()
        except httpx.HTTPError:
            pass
        time.sleep(0.05)
    raise TimeoutError(f"{url} not {status} after {timeout_s} s")


def live(data_dir: Path, total: int, clients: int, timeout_s: float) -> dict[str, Any]:
    import httpx

    port = free_port()
    env = {**os.environ, "GPU_ADVISOR_DATA_DIR": str(data_dir), "GPU_ADVISOR_LLM": "offline",
           "GPU_ADVISOR_API_KEY": "", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
           "ANONYMIZED_TELEMETRY": "False"}
    code = f"from service.server import serve; serve('127.0.0.1', {port}, log_level='warning')"
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", code], cwd=REPO, env=env)
    base = f"http://127.0.0.1:{port}"
    try:
        healthy = wait_status(f"{base}/healthz", 200, timeout_s) - start
        ready = wait_status(f"{base}/readyz", 200, timeout_s) - start
        with httpx.Client(base_url=base, timeout=120) as warm:
            for q in QUESTIONS:
                warm.post("/v1/chat", json={"message": q}).raise_for_status()

        def one(i: int) -> tuple[float, int]:
            with httpx.Client(base_url=base, timeout=120) as c:
                t = time.perf_counter()
                r = c.post("/v1/chat", json={"message": QUESTIONS[i % len(QUESTIONS)]})
                return time.perf_counter() - t, r.status_code

        t0 = time.perf_counter()
        with ThreadPoolExecutor(clients) as pool:
            results = list(pool.map(one, range(total)))
        elapsed = time.perf_counter() - t0
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    errors = [s for _, s in results if s != 200]
    return {"serve_to_healthz_s": round(healthy, 2), "serve_to_readyz_s": round(ready, 2),
            "clients": clients, "requests": total, "errors": len(errors), "error_statuses": sorted(set(errors)),
            "requests_per_s": round(total / elapsed, 2), "latency": ms([t for t, _ in results])}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data-dir", type=Path, default=REPO / ".data" / "bench")
    ap.add_argument("--requests", type=int, default=200)
    ap.add_argument("--clients", type=int, default=10)
    ap.add_argument("--in-process", type=int, default=40, help="warm in-process chat calls to time")
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds to wait for /readyz")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
    out: dict[str, Any] = {"load_average": [round(x, 2) for x in os.getloadavg()], "cpus": os.cpu_count()}
    out["in_process"] = in_process(args.data_dir, args.in_process)
    out["live"] = live(args.data_dir, args.requests, args.clients, args.timeout)
    out["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    if args.json:
        sys.stdout.write(json.dumps(out, indent=2) + "\n")
        return
    ip, lv = out["in_process"], out["live"]
    sys.stdout.write(
        f"load average {out['load_average']} on {out['cpus']} CPUs\n"
        f"in-process warm-up (catalog + index + assistant): {ip['warm_up_s']} s\n"
        f"in-process POST /v1/chat (warm): p50 {ip['chat']['p50_ms']} ms, p95 {ip['chat']['p95_ms']} ms "
        f"(n={ip['chat']['n']})\n"
        f"in-process POST /v1/plan: p50 {ip['plan']['p50_ms']} ms, p95 {ip['plan']['p95_ms']} ms\n"
        f"serve → /healthz 200: {lv['serve_to_healthz_s']} s; → /readyz 200: {lv['serve_to_readyz_s']} s\n"
        f"live POST /v1/chat, {lv['clients']} clients, {lv['requests']} requests: {lv['requests_per_s']} req/s, "
        f"p50 {lv['latency']['p50_ms']} ms, p95 {lv['latency']['p95_ms']} ms, errors {lv['errors']} "
        f"{lv['error_statuses'] or ''}\n"
    )


if __name__ == "__main__":
    main()
