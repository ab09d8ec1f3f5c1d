"""The weight of an answer: the JSON of one POST /v1/chat answer to the guide's example (as sent by default, and with
`detail=full`), and what 20 turns of one session add to the data directory (sessions.sqlite and its WAL). Through
the API in-process, the real offline assistant, SQLite in a fresh data dir, no retrieval index. Prints figures;
asserts nothing. Targets (issue 40): <= 60 KB per answer, <= 1 MB for 20 turns.

    python scripts/bench_answer_size.py [--turns 20]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from fastapi.testclient import TestClient

from service.app import create_app
from service.catalog.loader import load_catalog
from service.retrieval.types import Passage
from service.settings import Settings

FIRST = "用Qwen2-7B做问答微调，数据集10万条JSONL，预算月均¥3000"


class NoRetriever:
    warnings: list[str] = []

    def search(self, query: str, k: int = 4, lang: str | None = None, cloud: str | None = None) -> list[Passage]:
        return []


def size(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--turns", type=int, default=20)
    args = ap.parse_args()
    data = Path(tempfile.mkdtemp(prefix="bench-answer-"))
    settings = Settings(data_dir=data, llm="offline", api_key="", chroma_host="", DATABASE_URL="")
    catalog = load_catalog(settings.knowledge_dir, settings.catalog_overlay_dir, None)
    with TestClient(create_app(settings, catalog=catalog, retriever=NoRetriever())) as client:
        client.post("/v1/chat", json={"message": "warm up"})  # the session store exists and has a page or two
        before = size(data)
        first = client.post("/v1/chat", json={"message": FIRST})
        sid = first.json()["session_id"]
        for n in range(1, args.turns):
            message = f"预算改成{3000 + 500 * n}呢" if n % 2 else "换成全参微调"
            r = client.post("/v1/chat", json={"message": message, "session_id": sid})
            assert r.status_code == 200, r.text
        after = size(data)
        full = client.post("/v1/chat?detail=full", json={"message": FIRST})  # after the count: a session of its own
    print(f"one /v1/chat answer to the guide's example: {len(first.content) / 1e3:.1f} KB of JSON "
          f"(detail=full: {len(full.content) / 1e3:.1f} KB)")
    print(f"{args.turns} turns of one session add {(after - before) / 1e6:.2f} MB to the data "
          f"dir ({(after - before) / args.turns / 1e3:.0f} KB per turn; sessions.sqlite and its WAL)")


if __name__ == "__main__":
    main()
