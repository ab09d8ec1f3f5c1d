"""Serving-plan latency: in-process `plan_serving()` over the whole catalog (`python scripts/bench_serving.py`).

Target (issue 21): p50 under 20 ms per serving plan, warm (a long-running API process: the sizing cache holds
each GPU type's sizing for the workload). Cold figures (every cache emptied before each run, as in a fresh CLI
process) are printed beside. Wall and CPU time are both given; on a shared, loaded machine the target is judged on
CPU time, as scripts/bench_plan.py does. `--strict` exits 1 on a miss.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from datetime import date
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from service.catalog import queries  # noqa: E402
from service.catalog.loader import load_catalog  # noqa: E402
from service.planner import serving_size  # noqa: E402
from service.planner.serving_plan import plan_serving  # noqa: E402
from service.serving_workload import ServingWorkload  # noqa: E402
from service.sizing import params  # noqa: E402

WORKLOADS: dict[str, dict[str, object]] = {
    "14B customer service, 32k, 40 users, L20": {"model": "Qwen2.5-14B", "gpu": "L20", "max_model_len": 32768,
                                                  "concurrency": 40},
    "70B at 15 QPS, 2k/400": {"model": "Llama-3.1-70B", "input_tokens": 2000, "output_tokens": 400,
                              "request_rate": 15, "max_model_len": 8192},
    "7B on A10, capacity": {"model": "Qwen2.5-7B", "gpu": "A10"},
    "14B int4, one GPU, every cloud": {"model": "Qwen2.5-14B", "weights": "int4", "gpus": 1},
    "8B, TTFT/TPOT limits, fastest": {"model": "Llama-3.1-8B", "input_tokens": 1000, "output_tokens": 300,
                                      "concurrency": 64, "ttft_ms": 1500, "tpot_ms": 50, "objective": "fastest",
                                      "max_model_len": 8192},
    "30B-A3B MoE, fp8, 20 QPS": {"model": "Qwen3-30B-A3B", "weights": "fp8", "request_rate": 20,
                                 "max_model_len": 16384},
}
P50_TARGET_MS = 20.0


def _clear() -> None:
    serving_size._CACHE.clear()
    params._COUNTS_CACHE.clear()
    params._FLOPS_CACHE.clear()
    queries._INDEXES.clear()


def _pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(q * (len(xs) - 1)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=50, help="warm runs per workload")
    parser.add_argument("--strict", action="store_true")
    args = parser.parse_args()
    cat = load_catalog(REPO / "knowledge")
    today = date.today()
    workloads = {k: ServingWorkload.model_validate(v) for k, v in WORKLOADS.items()}
    cold_wall, cold_cpu = [], []
    for w in workloads.values():
        for _ in range(3):
            _clear()
            w0, c0 = time.perf_counter(), time.process_time()
            plan_serving(w, cat, today)
            cold_wall.append((time.perf_counter() - w0) * 1000)
            cold_cpu.append((time.process_time() - c0) * 1000)
    wall: dict[str, list[float]] = {k: [] for k in workloads}
    cpu: dict[str, list[float]] = {k: [] for k in workloads}
    for w in workloads.values():
        plan_serving(w, cat, today)  # warm-up
    for _ in range(args.runs):
        for name, w in workloads.items():
            w0, c0 = time.perf_counter(), time.process_time()
            plan_serving(w, cat, today)
            wall[name].append((time.perf_counter() - w0) * 1000)
            cpu[name].append((time.process_time() - c0) * 1000)
    print(f"plan_serving over {len(cat.instances)} instances, {args.runs} warm runs per workload; load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    print(f"  {'workload':44s} {'wall p50':>9s} {'wall p99':>9s} {'CPU p50':>9s}  (ms)")
    for name in workloads:
        print(f"  {name:44s} {_pct(wall[name], .5):9.2f} {_pct(wall[name], .99):9.2f} {_pct(cpu[name], .5):9.2f}")
    all_wall = [x for xs in wall.values() for x in xs]
    all_cpu = [x for xs in cpu.values() for x in xs]
    p50_wall, p50_cpu = _pct(all_wall, .5), _pct(all_cpu, .5)
    print(f"  {'all workloads, warm':44s} {p50_wall:9.2f} {_pct(all_wall, .99):9.2f} {p50_cpu:9.2f}"
          f"  (target p50 < {P50_TARGET_MS:g} ms)")
    print(f"  {'all workloads, cold caches':44s} {_pct(cold_wall, .5):9.2f} {_pct(cold_wall, .99):9.2f} "
          f"{_pct(cold_cpu, .5):9.2f}")
    missed = p50_cpu >= P50_TARGET_MS
    print("target met (judged on CPU time)" if not missed else f"target MISSED: p50 CPU {p50_cpu:.2f} ms")
    return 1 if missed and args.strict else 0


if __name__ == "__main__":
    raise SystemExit(main())
