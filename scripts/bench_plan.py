"""Planner latency: in-process `plan()` over the whole catalog, and the CLI's wall time (`make bench`).

Targets: in-process p50 under 5 ms per plan (warm: the planner's caches hold the model's counts and sized setups,
as in a long-running API process), and `gpu-advisor plan ... --json` well under 1.5 s. Cold figures (every cache
emptied before each run, as in a fresh CLI process) are printed for comparison. Each figure is given as wall time
and as CPU time of this process (or of the CLI child): on a shared, loaded machine the wall time mostly measures
waiting for a core, so the load average is printed too and the targets are judged on CPU time.
`--strict` exits 1 on a miss.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from datetime import date
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from service import labels  # noqa: E402
from service.catalog import queries  # noqa: E402
from service.catalog.loader import load_catalog  # noqa: E402
from service.planner import strategy  # noqa: E402
from service.planner.plan import plan  # noqa: E402
from service.sizing import params  # noqa: E402
from service.workload import Workload  # noqa: E402

WORKLOADS: dict[str, dict[str, object]] = {
    "7B LoRA, 100k samples": {"model": "Qwen2-7B", "samples": 100_000},
    "7B QLoRA, budget ¥3000/month": {"model": "Qwen2-7B", "method": "qlora", "samples": 50_000, "budget_cny": 3000},
    "8B full, seq 4096": {"model": "Llama-3-8B", "method": "full", "samples": 50_000, "seq_len": 4096},
    "14B LoRA, budget": {"model": "Qwen2.5-14B", "samples": 200_000, "budget_cny": 3000},
    "72B full, 1B tokens": {"model": "Qwen2-72B", "method": "full", "tokens": 1e9, "epochs": 1},
    "70B QLoRA": {"model": "Llama-3-70B", "method": "qlora", "samples": 100_000},
    "30B-A3B MoE LoRA, fastest": {"model": "Qwen3-30B-A3B", "samples": 100_000, "objective": "fastest"},
    "32B full, 48 h deadline": {"model": "DeepSeek-R1-Distill-Qwen-32B", "method": "full", "samples": 20_000,
                                "deadline_hours": 48},
    "BERT-base full": {"model": "BERT-base", "method": "full", "samples": 1_000_000},
    "ResNet-50, ImageNet 90 epochs": {"model": "ResNet-50", "method": "full", "dataset_gb": 140, "epochs": 90},
    "13B pretrain 20B tokens, balanced": {"params_b": 13, "method": "pretrain", "tokens": 2e10,
                                          "objective": "balanced"},
}
CLI_ARGS = ["plan", "--model", "Qwen2-7B", "--samples", "100000", "--budget-cny", "3000", "--json"]
P50_TARGET_MS = 5.0
CLI_TARGET_S = 1.5


def _clear_caches() -> None:
    # Private caches, emptied to measure the cold path of a fresh process.
    params._COUNTS_CACHE.clear()
    params._FLOPS_CACHE.clear()
    labels.strip_internal.cache_clear()
    labels.public_source.cache_clear()
    strategy._MEMO.clear()
    queries._INDEXES.clear()


def _percentile(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(q * (len(xs) - 1)))]


def _timed(fn) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    """(wall ms, CPU ms) of one call."""
    w0, c0 = time.perf_counter(), time.process_time()
    fn()
    return (time.perf_counter() - w0) * 1000, (time.process_time() - c0) * 1000


def bench_in_process(runs: int, frontier: bool = True) -> tuple[float, float]:
    cat = load_catalog(REPO / "knowledge")
    today = date.today()
    workloads = {k: Workload.model_validate(v) for k, v in WORKLOADS.items()}
    for w in workloads.values():  # warm-up
        plan(w, cat, today, frontier=frontier)
    wall: dict[str, list[float]] = {k: [] for k in workloads}
    cpu: dict[str, list[float]] = {k: [] for k in workloads}
    for _ in range(runs):  # round-robin, so that no workload runs twice in a row
        for name, w in workloads.items():
            dw, dc = _timed(lambda w=w: plan(w, cat, today, frontier=frontier))
            wall[name].append(dw)
            cpu[name].append(dc)
    cold_wall: list[float] = []
    cold_cpu: list[float] = []
    for _ in range(max(5, runs // 20)):
        for w in workloads.values():
            _clear_caches()
            dw, dc = _timed(lambda w=w: plan(w, cat, today, frontier=frontier))
            cold_wall.append(dw)
            cold_cpu.append(dc)
    print(f"in-process plan(frontier={frontier}) over {len(cat.instances)} instances, {runs} runs per workload "
          "(warm caches); "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    print(f"  {'workload':38s} {'wall p50':>9s} {'wall p99':>9s} {'CPU p50':>9s} {'CPU p99':>9s}  (ms)")
    for name in workloads:
        print(f"  {name:38s} {_percentile(wall[name], 0.5):9.2f} {_percentile(wall[name], 0.99):9.2f} "
              f"{_percentile(cpu[name], 0.5):9.2f} {_percentile(cpu[name], 0.99):9.2f}")
    all_wall = [x for xs in wall.values() for x in xs]
    all_cpu = [x for xs in cpu.values() for x in xs]
    print(f"  {'all workloads':38s} {_percentile(all_wall, 0.5):9.2f} {_percentile(all_wall, 0.99):9.2f} "
          f"{_percentile(all_cpu, 0.5):9.2f} {_percentile(all_cpu, 0.99):9.2f}  (target p50 < {P50_TARGET_MS:g} ms)")
    print(f"  {'all workloads, cold caches':38s} {_percentile(cold_wall, 0.5):9.2f} {_percentile(cold_wall, 0.99):9.2f} "
          f"{_percentile(cold_cpu, 0.5):9.2f} {_percentile(cold_cpu, 0.99):9.2f}")
    return _percentile(all_wall, 0.5), _percentile(all_cpu, 0.5)


def bench_cli(repeats: int = 5) -> tuple[float, float]:
    exe = Path(sys.executable).parent / "gpu-advisor"
    cmd = [str(exe), *CLI_ARGS] if exe.exists() else [sys.executable, "-m", "service.cli", *CLI_ARGS]
    walls, cpus = [], []
    for _ in range(repeats):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        subprocess.run(cmd, cwd=REPO, check=True, capture_output=True)
        walls.append(time.perf_counter() - t0)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    wall, cpu = statistics.median(walls), statistics.median(cpus)
    print(f"CLI `gpu-advisor {' '.join(CLI_ARGS)}`, {repeats} runs: median wall {wall:.3f} s "
          f"(min {min(walls):.3f}, max {max(walls):.3f}), median CPU {cpu:.3f} s; target < {CLI_TARGET_S:g} s; "
          f"load average {os.getloadavg()[0]:.1f}")
    return wall, cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=200, help="in-process runs per workload")
    parser.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    args = parser.parse_args()
    bench_in_process(args.runs, frontier=False)  # the smallest fitting cluster per instance type, for comparison
    p50_wall, p50_cpu = bench_in_process(args.runs)
    cli_wall, cli_cpu = bench_cli()
    missed = []
    if p50_cpu >= P50_TARGET_MS:
        missed.append(f"plan p50 CPU {p50_cpu:.2f} ms (wall {p50_wall:.2f} ms)")
    if cli_cpu >= CLI_TARGET_S:
        missed.append(f"CLI CPU {cli_cpu:.2f} s (wall {cli_wall:.2f} s)")
    print("targets met (judged on CPU time)" if not missed else f"targets MISSED: {'; '.join(missed)}")
    return 1 if missed and args.strict else 0


if __name__ == "__main__":
    raise SystemExit(main())
