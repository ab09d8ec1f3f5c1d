"""Schemathesis over every operation of the API: a live uvicorn on 127.0.0.1 (the API key set, the API tests' fake
assistant and stand-in retriever, the real catalog and engine), all checks, the API key sent. Prints schemathesis'
summary and the number of test cases it generated; exits non-zero on any server error or failed check.

    python scripts/schemathesis_sweep.py                      # the full sweep: 250 cases per operation (>= 4,000)
    python scripts/schemathesis_sweep.py --max-examples 10    # what tests/api/test_schemathesis.py runs in CI

tests/api/schemathesis.toml says which non-2xx answers a schema-valid request may get, and why.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

KEY = "schemathesis-key"
CONFIG = REPO / "tests" / "api" / "schemathesis.toml"
FULL_MAX_EXAMPLES = 250


def start_server(data_dir: Path) -> tuple[str, object, threading.Thread]:
    import socket

    import httpx
    import uvicorn

    from service.app import create_app
    from service.catalog.loader import load_catalog
    from service.settings import Settings
    from tests.api.fakes import FakeAssistant, FakeRetriever

    settings = Settings(data_dir=data_dir, llm="offline", api_key=KEY, prices_file=None, chroma_host="")
    catalog = load_catalog(settings.knowledge_dir, settings.catalog_overlay_dir, None)
    app = create_app(settings, FakeAssistant(), catalog=catalog, retriever=FakeRetriever())
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{port}"
    for _ in range(400):
        try:
            if httpx.get(f"{base}/healthz", timeout=1.0).status_code == 200:
                break
        except httpx.HTTPError:
            pass
        time.sleep(0.05)
    return base, server, thread


def run(base_url: str, max_examples: int, seed: int, workers: int, cwd: Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-c", "from schemathesis.cli import schemathesis; schemathesis()",
               "--config-file", str(CONFIG), "run", f"{base_url}/openapi.json", "-H", f"Authorization: Bearer {KEY}",
               "--checks", "all", "--max-examples", str(max_examples), "--seed", str(seed), "--no-color",
               "--workers", str(workers)]
    return subprocess.run(command, capture_output=True, text=True, timeout=3 * 3600, cwd=cwd)


def cases_generated(report: str) -> int:
    """The test cases schemathesis generated ("Test cases:" line of its summary: 'N generated, ...')."""
    match = re.search(r"Test cases:\s+([\d,]+) generated", report)
    return int(match.group(1).replace(",", "")) if match else 0


def sweep(max_examples: int, seed: int = 14, workers: int = 1) -> tuple[int, int, str]:
    """(exit code, test cases generated, report) of one run against a fresh server."""
    with tempfile.TemporaryDirectory(prefix="schemathesis-") as tmp:
        base, server, thread = start_server(Path(tmp) / "data")
        try:
            done = run(base, max_examples, seed, workers, Path(tmp))  # schemathesis keeps its cache in its cwd
        finally:
            server.should_exit = True  # type: ignore[attr-defined]
            thread.join(timeout=10)
    report = done.stdout + done.stderr
    return done.returncode, cases_generated(report), report


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-examples", type=int, default=FULL_MAX_EXAMPLES, help="cases per operation")
    parser.add_argument("--seed", type=int, default=14)
    parser.add_argument("--workers", type=int, default=1)
    args = parser.parse_args()
    started = time.monotonic()
    code, cases, report = sweep(args.max_examples, args.seed, args.workers)
    print(report[-12000:])
    print(f"schemathesis: {cases} test cases generated, exit {code}, {time.monotonic() - started:.0f} s")
    return code


if __name__ == "__main__":
    raise SystemExit(main())
