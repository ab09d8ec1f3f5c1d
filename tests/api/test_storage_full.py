"""A full data disk: a chat is 507 storage_full naming the data directory's disk and the fix, nothing stored before
is lost, /readyz reports the disk, and it all recovers once there is space. The disk is not filled: the writer is
made to raise ENOSPC (and the free-space figure is faked).

Regression: every chat on a full disk was a 500 internal_error that did not say why, and /readyz did not notice."""

from __future__ import annotations

import errno
import json
import shutil
import time
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from service import storage
from service.app import create_app
from service.assistant.sessions import SessionStore
from service.catalog.loader import Catalog
from service.settings import Settings
from tests.api.fakes import FakeRetriever

QUESTION = "用Qwen2-7B做问答微调，数据集10万条JSONL，预算月均¥3000"
KEY = "disk-key"
AUTH = {"Authorization": f"Bearer {KEY}"}


@pytest.fixture
def real(settings: Settings, catalog: Catalog) -> Iterator[TestClient]:
    app = create_app(settings.model_copy(update={"api_key": KEY}), catalog=catalog, retriever=FakeRetriever())
    with TestClient(app, headers=AUTH) as c:
        deadline = time.monotonic() + 60
        while c.get("/readyz").status_code != 200:  # the warm-up loads the assistant
            assert time.monotonic() < deadline
            time.sleep(0.05)
        yield c


def no_space(*_: Any, **__: Any) -> None:
    raise OSError(errno.ENOSPC, "No space left on device")


def test_a_full_disk_is_507_naming_the_disk_and_nothing_is_lost(real: TestClient, settings: Settings,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    sid = real.post("/v1/chat", json={"message": QUESTION}).json()["session_id"]
    before = real.get(f"/v1/sessions/{sid}/messages").json()
    with monkeypatch.context() as full:
        full.setattr(SessionStore, "append", no_space)
        r = real.post("/v1/chat", json={"message": "预算改成8000呢", "session_id": sid},
                      headers={"Idempotency-Key": "retry-me"})
        assert r.status_code == 507, r.text
        error = r.json()["error"]
        assert error["code"] == "storage_full" and "data directory's disk" in error["message"]
        assert str(settings.data_dir) in error["message"] and "No space left on device" in error["message"]
        assert "Free space" in error["fix"]
        stream = real.post("/v1/chat?stream=true", json={"message": "预算改成9000呢", "session_id": sid})
        last = [json.loads(line[6:]) for line in stream.text.splitlines() if line.startswith("data: ")][-1]
        assert last["type"] == "error" and last["data"]["error"]["code"] == "storage_full"
        ready = real.get("/readyz")
        assert ready.status_code == 503 and ready.json()["components"]["disk"].startswith("full: ")
    assert real.get(f"/v1/sessions/{sid}/messages").json() == before  # nothing half-written, nothing lost
    again = real.post("/v1/chat", json={"message": "预算改成8000呢", "session_id": sid},
                      headers={"Idempotency-Key": "retry-me"})
    assert again.status_code == 200 and again.json()["workload"]["budget_cny"] == 8000  # space again: it goes
    assert real.get(f"/v1/sessions/{sid}").json()["turns"] == 2
    assert real.get("/readyz").json()["components"]["disk"] == "ready"


def test_readyz_reports_the_free_space_without_the_path_unless_authenticated(
        real: TestClient, settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    assert real.get("/readyz").json()["components"]["disk"] == "ready"
    usage = shutil.disk_usage(settings.data_dir)
    monkeypatch.setattr(storage.shutil, "disk_usage", lambda _p: usage._replace(free=12 * storage.MIB))
    public = real.get("/readyz", headers={"Authorization": ""})
    assert public.status_code == 503  # the sessions are on this disk (SQLite)
    disk = public.json()["components"]["disk"]
    assert disk.startswith("full: 12 MiB free on the data directory's disk (under 100 MiB)"), disk
    assert str(settings.data_dir.resolve()) not in public.text
    assert str(settings.data_dir.resolve()) in real.get("/readyz").json()["components"]["disk"]  # with the key
    monkeypatch.undo()
    r = real.get("/readyz")
    assert r.status_code == 200, r.text  # recovers once there is space
