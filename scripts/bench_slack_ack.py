"""Slack acknowledgement latency: how long the HTTP 200 takes, against Slack's 3 s, all on 127.0.0.1.

Slack shows an error when a request is not acknowledged within 3 s. The bot is mounted on the API app with the
tests' loopback Web API stub and a fake assistant whose answer is instant ("fast") or held until the ack is in
("slow": the slash command then waits ACK_WAIT_S for it and says it is coming). Each kind is sent --n times after one
warm-up (the first request starts Bolt and its pools) and printed as p50 / p95 / max in ms with the load average:
on a shared, loaded machine the wall time mostly measures waiting for a core.

    .venv/bin/python scripts/bench_slack_ack.py [--n 20] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

SLACK_LIMIT_MS = 3000.0


def figures(xs: list[float]) -> dict[str, float]:
    ordered = sorted(xs)
    return {"p50_ms": round(1000 * statistics.median(ordered), 1),
            "p95_ms": round(1000 * ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))], 1),
            "max_ms": round(1000 * ordered[-1], 1), "n": len(ordered)}


def timed(send: Callable[[], Any], n: int) -> list[float]:
    send()  # warm-up
    out: list[float] = []
    for _ in range(n):
        start = time.perf_counter()
        r = send()
        out.append(time.perf_counter() - start)
        if r.status_code != 200:
            raise SystemExit(f"ack answered {r.status_code}: {r.text[:200]}")
    return out


def run(n: int) -> dict[str, Any]:
    from tests.slack.conftest import build_harness
    from tests.slack.fakes import FakeAssistant
    from tests.slack.stub import SlackStub

    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        stub = SlackStub().start()
        gate = threading.Event()
        try:
            fast = build_harness(Path(tmp) / "fast", stub, FakeAssistant(), threaded=True)
            slow = build_harness(Path(tmp) / "slow", stub, FakeAssistant(gate=gate), threaded=True)
            count = iter(range(10**6))

            def mention(h: Any) -> Any:
                i = next(count)
                return h.event({"type": "app_mention", "channel": "C1", "user": "U1", "ts": f"{i}.1",
                                "text": "<@UBOT> 用Qwen2-7B做问答微调"})

            results["mention_fast"] = figures(timed(lambda: mention(fast), n))
            results["command_fast"] = figures(timed(lambda: fast.command("用Qwen2-7B做问答微调"), n))
            results["mention_slow"] = figures(timed(lambda: mention(slow), n))
            results["command_slow"] = figures(timed(lambda: slow.command("用Qwen2-7B做问答微调"), max(3, n // 4)))
            gate.set()
            answers = 3 * (n + 1) + max(3, n // 4) + 1  # every answer is streamed before the folders go
            stub.wait_for("chat.stopStream", count=answers, timeout_s=120)
        finally:
            gate.set()
            stub.stop()
    results["load_avg_1m"] = round(os.getloadavg()[0], 2)
    results["slack_limit_ms"] = SLACK_LIMIT_MS
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=20, help="requests per kind after the warm-up")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    results = run(args.n)
    if args.json:
        print(json.dumps(results, indent=2))
        return
    print(f"Slack ack latency (limit {SLACK_LIMIT_MS:.0f} ms), load average {results['load_avg_1m']}")
    for kind, f in results.items():
        if isinstance(f, dict):
            print(f"  {kind:<14} p50 {f['p50_ms']:>7.1f} ms  p95 {f['p95_ms']:>7.1f} ms  max {f['max_ms']:>7.1f} ms"
                  f"  (n={f['n']})")


if __name__ == "__main__":
    main()
