"""Several workers against real servers: a Postgres started here (initdb/pg_ctl on a loopback port, temp dir), a
`chroma run` server, and two uvicorn worker processes with separate data dirs, so anything they share goes
through Postgres or Chroma. Skips, saying why, when Postgres is not installed (`make postgres`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from service.settings import REPO_ROOT
from tests.deploy.postgres import PgServer, find_pg_bin, free_port, start_postgres
from tests.deploy.worker_app import SIGNING_SECRET
from tests.slack.stub import BOT_USER_ID, SlackStub

pytestmark = [pytest.mark.integration, pytest.mark.postgres]
QUESTION = "用Qwen2-7B做问答微调，数据集10万条JSONL，预算月均¥3000"
ALICE = {"X-Client-Id": "alice"}


@pytest.fixture(scope="module")
def postgres() -> Iterator[PgServer]:
    bin_dir, why = find_pg_bin()
    if bin_dir is None:
        pytest.skip(f"multi-worker tests need Postgres: {why}")
    server = start_postgres(bin_dir)
    yield server
    server.stop()


@pytest.fixture(scope="module")
def chroma(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    binary = Path(sys.executable).parent / "chroma"
    if not binary.is_file():
        pytest.skip("the `chroma` binary is not installed (pip install chromadb provides it)")
    port = free_port()
    proc = subprocess.Popen([str(binary), "run", "--path", str(tmp_path_factory.mktemp("chroma")), "--host",
                             "127.0.0.1", "--port", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env={**os.environ, "ANONYMIZED_TELEMETRY": "False"})
    try:
        _wait(f"http://127.0.0.1:{port}/api/v2/heartbeat", proc, 60)
        yield port
    finally:
        proc.terminate()
        proc.wait(timeout=20)


@pytest.fixture(scope="module")
def slack_stub() -> Iterator[SlackStub]:
    stub = SlackStub().start()
    yield stub
    stub.stop()


def _wait(url: str, proc: subprocess.Popen[bytes], timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{url}: the process exited with {proc.returncode}")
        try:
            if httpx.get(url, timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.3)
    raise TimeoutError(f"{url} not ready within {timeout_s} s")


@pytest.fixture(scope="module")
def workers(postgres: PgServer, chroma: int, slack_stub: SlackStub,
            tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[str]]:
    procs: list[subprocess.Popen[bytes]] = []
    urls: list[str] = []
    for n in range(2):
        port = free_port()
        env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "DATABASE_URL": postgres.url,
               "CHROMA_HOST": "127.0.0.1", "CHROMA_PORT": str(chroma), "GPU_ADVISOR_LLM": "offline",
               "GPU_ADVISOR_API_KEY": "", "GPU_ADVISOR_DATA_DIR": str(tmp_path_factory.mktemp(f"worker{n}")),
               "GPU_ADVISOR_TEST_SLACK_URL": slack_stub.url, "HF_HUB_OFFLINE": "1", "ANONYMIZED_TELEMETRY": "False"}
        procs.append(subprocess.Popen(
            [sys.executable, "-m", "uvicorn", "--factory", "tests.deploy.worker_app:app", "--host", "127.0.0.1",
             "--port", str(port), "--log-level", "warning"], env=env, cwd=REPO_ROOT))
        urls.append(f"http://127.0.0.1:{port}")
    try:
        for url, proc in zip(urls, procs, strict=True):
            _wait(f"{url}/readyz", proc, 180)
        yield urls
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            proc.wait(timeout=30)


def test_a_conversation_continues_on_the_other_worker(workers: list[str]) -> None:
    a, b = workers
    first = httpx.post(f"{a}/v1/chat", json={"message": QUESTION}, headers=ALICE, timeout=60).json()
    sid = first["session_id"]
    r = httpx.post(f"{b}/v1/chat", json={"message": "预算改成8000呢", "session_id": sid}, headers=ALICE, timeout=60)
    assert r.status_code == 200, r.text
    assert r.json()["workload"]["model"] == "Qwen2-7B" and r.json()["workload"]["budget_cny"] == 8000
    msgs = httpx.get(f"{a}/v1/sessions/{sid}/messages", headers=ALICE, timeout=30).json()
    assert [m["content"] for m in msgs if m["role"] == "user"] == [QUESTION, "预算改成8000呢"]
    assert httpx.get(f"{b}/v1/sessions/{sid}", headers={"X-Client-Id": "bob"}, timeout=30).status_code == 404


def test_twenty_concurrent_turns_across_both_workers_are_all_kept(workers: list[str]) -> None:
    a, _ = workers
    sid = httpx.post(f"{a}/v1/chat", json={"message": QUESTION}, headers=ALICE, timeout=60).json()["session_id"]
    budgets = [4000 + 100 * i for i in range(20)]

    def turn(i: int) -> int:
        url = workers[i % 2]
        r = httpx.post(f"{url}/v1/chat", json={"message": f"预算改成{budgets[i]}呢", "session_id": sid},
                       headers=ALICE, timeout=300)
        return r.status_code

    with ThreadPoolExecutor(max_workers=20) as pool:
        codes = list(pool.map(turn, range(20)))
    assert codes == [200] * 20
    info = httpx.get(f"{workers[1]}/v1/sessions/{sid}", headers=ALICE, timeout=30).json()
    assert info["turns"] == 21
    msgs = httpx.get(f"{workers[1]}/v1/sessions/{sid}/messages", headers=ALICE, timeout=30).json()
    users = [m["content"] for m in msgs if m["role"] == "user"]
    assert sorted(users[1:]) == sorted(f"预算改成{b}呢" for b in budgets)
    assert [m["turn"] for m in msgs if m["role"] == "assistant"] == list(range(1, 22))
    for m in msgs[3::2]:  # every follow-up kept the first turn's model and took its own budget
        assert m["workload"]["model"] == "Qwen2-7B"


def test_a_slack_retry_delivered_to_the_other_worker_is_answered_once(workers: list[str],
                                                                      slack_stub: SlackStub) -> None:
    from slack_sdk.signature import SignatureVerifier

    event = {"type": "app_mention", "channel": "C9", "user": "U1", "ts": "1700000001.000100",
             "text": f"<@{BOT_USER_ID}> 用Qwen2-7B做LoRA，预算3000"}
    body = json.dumps({"token": "t", "team_id": "T1", "api_app_id": "A1", "type": "event_callback",
                       "event_id": "EvMultiWorker1", "event_time": int(time.time()), "event": event,
                       "authorizations": [{"team_id": "T1", "user_id": BOT_USER_ID, "is_bot": True}]})

    def post(url: str, **extra: str) -> int:
        ts = str(int(time.time()))
        sig = SignatureVerifier(SIGNING_SECRET).generate_signature(timestamp=ts, body=body) or ""
        headers = {"Content-Type": "application/json", "X-Slack-Request-Timestamp": ts, "X-Slack-Signature": sig,
                   **extra}
        return httpx.post(f"{url}/slack/events", content=body, headers=headers, timeout=30).status_code

    def answers() -> int:  # an answer is streamed (chat.startStream, the AI-app surface) or posted whole
        return len([c for m in ("chat.startStream", "chat.postMessage") for c in slack_stub.to(m)
                    if c.get("channel") == "C9"])

    before = answers()
    assert post(workers[0]) == 200
    assert post(workers[1], **{"X-Slack-Retry-Num": "1", "X-Slack-Retry-Reason": "http_timeout"}) == 200
    deadline = time.monotonic() + 60
    while answers() < before + 1 and time.monotonic() < deadline:
        threading.Event().wait(0.2)
    threading.Event().wait(3.0)  # time for a second (wrong) answer to arrive
    assert answers() - before == 1
