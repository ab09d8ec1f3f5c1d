"""Retrieval benchmark: full index build (fresh data dir), no-op re-index, warm hybrid query latency, and the
retrieval eval (recall@1/@5 per mode and language) for one embedding model.

Targets: no-op re-index < 2 s, warm query p50 < 50 ms; hybrid recall@5 >= 0.9, dense-only zh recall@5 >= 0.8.
Run: .venv/bin/python scripts/bench_retrieval.py [--embedding-model e5|minilm|DIR]   (once: a build takes minutes)
Each build is timed in a fresh process, as `gpu-advisor index` runs (imports and model load included).
"""

from __future__ import annotations

import dataclasses
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

INDEX_ONCE = """
import json, sys, time
t0 = time.perf_counter()
from pathlib import Path
from service.retrieval.config import RetrievalConfig
from service.retrieval.ingest import build_index
config = RetrievalConfig.from_settings()
report = build_index(config)
print(json.dumps({"wall_s": time.perf_counter() - t0, **report.to_dict()}))
"""


def index_in_fresh_process(data_dir: Path, model: str) -> dict[str, float]:
    env = {**os.environ, "GPU_ADVISOR_DATA_DIR": str(data_dir), "GPU_ADVISOR_EMBEDDING_MODEL": model}
    out = subprocess.run(
        [sys.executable, "-c", INDEX_ONCE], cwd=ROOT, env=env, check=True, capture_output=True, text=True
    ).stdout
    result: dict[str, float] = json.loads(out.strip().splitlines()[-1])
    return result


def main() -> None:
    import argparse

    from service.retrieval.config import RetrievalConfig
    from service.retrieval.evaluate import evaluate, load_cases
    from service.retrieval.hybrid import Retriever
    from service.retrieval.ingest import build_index

    parser = argparse.ArgumentParser(description="retrieval benchmark")
    parser.add_argument("--embedding-model", default="e5", help="e5 (default), minilm, or a local model directory")
    model = parser.parse_args().embedding_model
    load = os.getloadavg()[0]
    print(f"embedding model {model}; load average {load:.1f} on {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory(prefix="bench-retrieval-") as tmp:
        data_dir = Path(tmp)
        full = index_in_fresh_process(data_dir, model)
        print(f"full build (fresh data dir, new process): {full['wall_s']:.1f} s wall "
              f"({full['seconds']:.1f} s in build_index; {full['added']:.0f} chunks)")
        for run in ("first", "second"):
            noop = index_in_fresh_process(data_dir, model)
            print(f"no-op re-index ({run}), new process: {noop['wall_s']:.2f} s wall "
                  f"({noop['seconds']:.2f} s in build_index, {noop['unchanged']:.0f} unchanged)   target < 2 s")

        config = dataclasses.replace(RetrievalConfig.from_settings(), data_dir=data_dir, embedding_model=model)
        started = time.perf_counter()
        retriever = Retriever(config, refresh=False)
        retriever.search("warm-up: load the model", k=5)
        print(f"retriever ready (model load + first query): {time.perf_counter() - started:.2f} s")
        t = time.perf_counter()
        build_index(config, retriever.embedder)
        print(f"no-op re-index, warm process: {time.perf_counter() - t:.2f} s")

        questions = [c.question for c in load_cases()]
        timings_ms = []
        for q in questions * 2:
            t = time.perf_counter()
            retriever.search(q, k=5)
            timings_ms.append((time.perf_counter() - t) * 1000)
        timings_ms.sort()
        p95 = timings_ms[int(0.95 * (len(timings_ms) - 1))]
        print(f"warm hybrid query over {len(timings_ms)} searches: p50 {statistics.median(timings_ms):.1f} ms, "
              f"p95 {p95:.1f} ms   target p50 < 50 ms")
        t = time.perf_counter()
        retriever.search_many(questions, k=5)
        print(f"search_many of {len(questions)} questions: {(time.perf_counter() - t) * 1000:.0f} ms")
        report = evaluate(retriever, load_cases())
        for mode, by_lang in report.results.items():
            cells = ", ".join(f"{lang} R@1 {m.recall_at_1:.3f} R@5 {m.recall_at_5:.3f}" for lang, m in by_lang.items())
            print(f"eval {mode:6}: {cells}")
        retriever.close()


if __name__ == "__main__":
    main()
