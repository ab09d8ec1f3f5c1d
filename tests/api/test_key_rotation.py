"""Rotating GPU_ADVISOR_API_KEY keeps the sessions: scoped to a key id (GPU_ADVISOR_API_KEY_ID) they stay where
they are; scoped to the key itself, `gpu-advisor sessions rekey --from-key OLD` moves them to the new key (and
--to-key-id to a key id, the first time one is set). Before, the list was empty after a rotation and each session a
404, while its rows stayed in the database."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from service.app import create_app
from service.catalog.loader import Catalog
from service.cli.app import build_app
from service.settings import get_settings
from tests.api.conftest import make_settings
from tests.api.fakes import FakeRetriever

OLD, NEW = "old-key-1234", "new-key-5678"
ALICE = {"X-Client-Id": "alice"}
QUESTION = "用Qwen2-7B做LoRA，预算3000"


@contextmanager
def served(data: Path, catalog: Catalog, key: str, key_id: str = "") -> Iterator[TestClient]:
    settings = make_settings(data, api_key=key, api_key_id=key_id)
    app = create_app(settings, catalog=catalog, retriever=FakeRetriever())
    with TestClient(app, headers={"Authorization": f"Bearer {key}"}) as client:
        yield client


def chat(client: TestClient, headers: dict[str, str] | None = None) -> str:
    r = client.post("/v1/chat", json={"message": QUESTION}, headers=headers or {})
    assert r.status_code == 200, r.text
    return str(r.json()["session_id"])


def listed(client: TestClient, headers: dict[str, str] | None = None) -> list[str]:
    r = client.get("/v1/sessions", headers=headers or {})
    assert r.status_code == 200, r.text
    return [s["session_id"] for s in r.json()]


def rekey(data: Path, monkeypatch: pytest.MonkeyPatch, *args: str, key: str = NEW, key_id: str = "",
          stdin: str | None = None) -> str:
    monkeypatch.setenv("GPU_ADVISOR_DATA_DIR", str(data))
    monkeypatch.setenv("GPU_ADVISOR_API_KEY", key)
    monkeypatch.setenv("GPU_ADVISOR_API_KEY_ID", key_id)
    monkeypatch.setenv("DATABASE_URL", "")
    get_settings.cache_clear()
    try:
        result = CliRunner().invoke(build_app(), ["sessions", "rekey", *args], input=stdin)
    finally:
        get_settings.cache_clear()
    assert result.exit_code == 0, result.output
    return result.output


def test_a_rotated_key_gets_its_sessions_back_with_rekey(tmp_path: Path, catalog: Catalog,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    data = tmp_path / "data"
    with served(data, catalog, OLD) as old:
        mine, shared = chat(old, ALICE), chat(old)
    with served(data, catalog, NEW) as new:
        assert listed(new, ALICE) == [] and listed(new) == []  # what a rotation did, and still does without rekey
        assert new.get(f"/v1/sessions/{mine}", headers=ALICE).status_code == 404
    out = rekey(data, monkeypatch, "--from-key", "-", stdin=OLD + "\n")  # the old key from stdin, not argv
    assert "moved 2 sessions (2 turns)" in out
    with served(data, catalog, NEW) as new:
        assert listed(new, ALICE) == [mine] and listed(new) == [shared]
        messages = new.get(f"/v1/sessions/{mine}/messages", headers=ALICE).json()
        assert [m["content"] for m in messages if m["role"] == "user"] == [QUESTION]
        r = new.post("/v1/chat", json={"message": "预算改成8000呢", "session_id": mine}, headers=ALICE)
        assert r.status_code == 200 and r.json()["session_id"] == mine  # and the conversation goes on
        assert listed(new, {"X-Client-Id": "bob"}) == []  # still each caller's own
    with served(data, catalog, OLD) as old:
        assert listed(old, ALICE) == []  # moved, not copied


def test_with_a_key_id_a_rotation_keeps_the_sessions_as_they_are(tmp_path: Path, catalog: Catalog,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    data = tmp_path / "data"
    with served(data, catalog, OLD) as old:  # before a key id was configured
        before = chat(old, ALICE)
    out = rekey(data, monkeypatch, "--from-key", OLD, key=OLD, key_id="team-ml")  # to the configured id
    assert "moved 1 sessions" in out
    with served(data, catalog, OLD, "team-ml") as first:
        assert listed(first, ALICE) == [before]
        after = chat(first, ALICE)
    with served(data, catalog, NEW, "team-ml") as rotated:  # the key rotated, the id kept: nothing to do
        assert sorted(listed(rotated, ALICE)) == sorted([before, after])
        assert rotated.get(f"/v1/sessions/{after}/messages", headers=ALICE).status_code == 200
    with served(data, catalog, NEW, "team-other") as other:
        assert listed(other, ALICE) == []


def test_rekey_leaves_a_session_whose_id_the_new_owner_has(tmp_path: Path, catalog: Catalog,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    data = tmp_path / "data"
    carol = {"X-Client-Id": "carol"}
    for key in (OLD, NEW):
        with served(data, catalog, key) as client:
            r = client.post("/v1/chat/completions", json={"model": "gpu-advisor", "user": "carol@corp.example",
                                                          "messages": [{"role": "user", "content": QUESTION}]},
                            headers=carol)
            assert r.status_code == 200, r.text
    out = rekey(data, monkeypatch, "--from-key", OLD, "--to-key", NEW)
    assert "moved 0 sessions" in out and "1 left where they were" in out and "carol@corp.example" in out


def test_rekey_refuses_what_it_cannot_do(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPU_ADVISOR_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("GPU_ADVISOR_API_KEY", OLD)
    monkeypatch.setenv("GPU_ADVISOR_API_KEY_ID", "")
    get_settings.cache_clear()
    try:
        runner = CliRunner()
        same = runner.invoke(build_app(), ["sessions", "rekey", "--from-key", OLD])
        none = runner.invoke(build_app(), ["sessions", "rekey"])
        bad = runner.invoke(build_app(), ["sessions", "rekey", "--from-key", OLD, "--to-key-id", "team ml;"])
    finally:
        get_settings.cache_clear()
    assert same.exit_code == 2 and "same" in same.output
    assert none.exit_code == 2 and "--from-key" in none.output
    assert bad.exit_code == 2 and "api_key_id" in bad.output
