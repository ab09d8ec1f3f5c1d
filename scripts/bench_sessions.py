"""Storage per session: the data dir before and after 20 turns in one session (the offline assistant, a fresh
data dir, no retrieval index). Prints figures; asserts nothing.

    python scripts/bench_sessions.py [--turns 20]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from service.assistant.service import Assistant
from service.retrieval.types import Passage
from service.settings import Settings

FIRST = "用Qwen2-7B做问答微调，数据集10万条JSONL，预算月均¥3000"


class NoRetriever:
    def search(self, query: str, k: int = 4, lang: str | None = None, cloud: str | None = None) -> list[Passage]:
        return []


def size(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--turns", type=int, default=20)
    args = ap.parse_args()
    data = Path(tempfile.mkdtemp(prefix="bench-sessions-"))
    a = Assistant(Settings(data_dir=data, llm="offline", DATABASE_URL=""), retriever_factory=NoRetriever)
    a.ask("warm up")  # the session store exists and has a page or two
    before = size(data)
    start = time.perf_counter()
    sid = a.ask(FIRST).session_id
    sizes = [size(data)]
    for n in range(1, args.turns):
        a.ask(f"预算改成{3000 + 500 * n}呢" if n % 2 else "换成全参微调", sid)
        sizes.append(size(data))
    elapsed = time.perf_counter() - start
    after = size(data)
    print(f"turns={args.turns} data_dir_before={before / 1e6:.2f} MB after={after / 1e6:.2f} MB "
          f"growth={(after - before) / 1e6:.2f} MB ({(after - before) / args.turns / 1e3:.0f} kB/turn)")
    print(f"last turn added {(sizes[-1] - sizes[-2]) / 1e3:.0f} kB; {elapsed / args.turns * 1e3:.0f} ms/turn")


if __name__ == "__main__":
    main()
