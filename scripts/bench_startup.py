"""First-start benchmark: `gpu-advisor serve` on an empty data dir, then a warm restart on the same one.

Prints seconds from process start to /healthz, to /readyz 200 (BM25 search ready), to dense ready (the vector
index built and the embedding model loaded), the first chat's latency after dense ready, and the server's RSS at
ready. Targets (issue 15): /healthz < 5 s; /readyz (cold) < 4x warm; first chat after ready < 5 s.

Run: .venv/bin/python scripts/bench_startup.py [--port 8765] [--embedding-model e5|minilm|DIR]
The cold start embeds the whole knowledge corpus (minutes on a busy 2-core machine): run it once, not in a loop.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CLI = Path(sys.executable).parent / "gpu-advisor"
QUESTION = "A10 支持 FP8 训练吗？"


def _get(url: str) -> tuple[int, dict[str, Any]]:
    try:
        with urllib.request.urlopen(url, timeout=5) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"{}")
    except (OSError, ValueError):
        return 0, {}


def _wait(url: str, done: Any, started: float, timeout_s: float) -> float:
    while time.perf_counter() - started < timeout_s:
        status, body = _get(url)
        if done(status, body):
            return time.perf_counter() - started
        time.sleep(0.1 if time.perf_counter() - started < 10 else 1.0)
    raise TimeoutError(f"{url} not as expected after {timeout_s:.0f} s: {_get(url)}")


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _chat_s(base: str) -> float:
    body = json.dumps({"message": QUESTION}).encode()
    req = urllib.request.Request(f"{base}/v1/chat", body, {"Content-Type": "application/json"})
    t = time.perf_counter()
    with urllib.request.urlopen(req, timeout=120) as resp:
        resp.read()
    return time.perf_counter() - t


def start(data_dir: Path, port: int, model: str, timeout_s: float) -> dict[str, float]:
    env = {**os.environ, "GPU_ADVISOR_DATA_DIR": str(data_dir), "GPU_ADVISOR_API_KEY": "", "GPU_ADVISOR_LLM": "offline",
           "GPU_ADVISOR_EMBEDDING_MODEL": model, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
           "ANONYMIZED_TELEMETRY": "False"}
    base = f"http://127.0.0.1:{port}"
    started = time.perf_counter()
    log = (data_dir / f"server-{int(time.time())}.log").open("w")
    proc = subprocess.Popen([str(CLI), "serve", "--port", str(port)], cwd=ROOT, env=env, stdout=log,
                            stderr=subprocess.STDOUT)
    out: dict[str, float] = {}

    def note(name: str, value: float) -> None:
        out[name] = value
        print(f"  {name} {value:.2f}", flush=True)  # as it comes: a run cut short still reports what it measured

    try:
        note("healthz_s", _wait(f"{base}/healthz", lambda s, b: s == 200, started, 60))
        note("readyz_bm25_s", _wait(f"{base}/readyz", lambda s, b: s == 200, started, timeout_s))
        note("rss_at_bm25_ready_mb", _rss_mb(proc.pid))
        note("dense_ready_s", _wait(f"{base}/readyz", lambda s, b: b.get("status") == "ready", started, timeout_s))
        note("rss_at_ready_mb", _rss_mb(proc.pid))
        note("first_chat_after_ready_s", _chat_s(base))
        note("second_chat_s", _chat_s(base))
        return out
    finally:
        proc.terminate()
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--embedding-model", default="e5")
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds to wait for dense ready")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-startup-") as tmp:
        data_dir = Path(tmp)
        print(f"cold start, load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores", flush=True)
        cold = start(data_dir, args.port, args.embedding_model, args.timeout)
        print("warm start (same data dir)", flush=True)
        warm = start(data_dir, args.port, args.embedding_model, args.timeout)
    for name, run in (("cold (empty data dir)", cold), ("warm (index on disk)", warm)):
        print(f"{name}: " + ", ".join(f"{k} {v:.2f}" for k, v in run.items()))
    print(f"/healthz cold {cold['healthz_s']:.2f} s (target < 5 s); /readyz cold {cold['readyz_bm25_s']:.2f} s vs "
          f"warm {warm['readyz_bm25_s']:.2f} s (target < 4x); first chat after ready "
          f"{cold['first_chat_after_ready_s']:.2f} s (target < 5 s)")


if __name__ == "__main__":
    main()
