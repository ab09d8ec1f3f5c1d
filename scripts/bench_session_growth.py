"""Per-turn latency as one session grows: POST /v1/chat through the API (in-process ASGI, the real offline assistant,
SQLite in a fresh data dir, no retrieval index), turn after turn in one session. Every turn asks the same kind of
question (the guide's example with another budget: one plan each), so what changes from turn 1 to turn 200 is the
session's length alone. Prints the latency of turn 1 (the median over 5 fresh sessions), turn 50 and turn 200 (each
the median of the turns around it) and their ratio to turn 1. Prints figures; asserts nothing.

    python scripts/bench_session_growth.py [--turns 200] [--around 2]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from fastapi.testclient import TestClient

from service.app import create_app
from service.catalog.loader import load_catalog
from service.retrieval.types import Passage
from service.settings import Settings

FIRST = "用Qwen2-7B做问答微调，数据集10万条JSONL，预算月均¥3000"
MARKS = (1, 50, 200)


class NoRetriever:
    warnings: list[str] = []

    def search(self, query: str, k: int = 4, lang: str | None = None, cloud: str | None = None) -> list[Passage]:
        return []


def question(n: int) -> str:
    return FIRST.replace("3000", str(3000 + 100 * (n % 40)))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--turns", type=int, default=200)
    ap.add_argument("--around", type=int, default=2, help="turns each side of a mark in its median")
    args = ap.parse_args()
    settings = Settings(data_dir=Path(tempfile.mkdtemp(prefix="bench-growth-")), llm="offline", api_key="",
                        chroma_host="", DATABASE_URL="")
    catalog = load_catalog(settings.knowledge_dir, settings.catalog_overlay_dir, None)
    with TestClient(create_app(settings, catalog=catalog, retriever=NoRetriever())) as client:
        def chat(body: dict[str, object]) -> tuple[float, dict[str, object]]:
            start = time.perf_counter()
            r = client.post("/v1/chat", json=body)
            elapsed = time.perf_counter() - start
            assert r.status_code == 200, r.text
            return elapsed, r.json()

        chat({"message": "warm up"})
        firsts = [chat({"message": FIRST})[0] for _ in range(5)]
        _, first = chat({"message": FIRST})
        sid = first["session_id"]
        times = {1: firsts[-1]}
        for n in range(2, args.turns + args.around + 1):
            times[n] = chat({"message": question(n), "session_id": sid})[0]
    base = statistics.median(firsts)
    print(f"one session, {args.turns} turns (SQLite, offline assistant, through the API):")
    for mark in MARKS:
        if mark > args.turns:
            continue
        window = [times[n] for n in range(max(2, mark - args.around), mark + args.around + 1) if n in times]
        value = base if mark == 1 else statistics.median(window)
        print(f"  turn {mark:>3}: {value:.3f} s  ({value / base:.2f}x turn 1)")


if __name__ == "__main__":
    main()
