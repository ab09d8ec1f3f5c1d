"""/v1/sessions: list, show, rename, delete; unknown ids are 404."""

from __future__ import annotations

from fastapi.testclient import TestClient


def _new(client: TestClient, text: str = "用Qwen2-7B做LoRA") -> str:
    sid: str = client.post("/v1/chat", json={"message": text}).json()["session_id"]
    return sid


def test_list_show_rename_delete(client: TestClient) -> None:
    sid = _new(client)
    assert [s["session_id"] for s in client.get("/v1/sessions").json()] == [sid]
    assert client.get(f"/v1/sessions/{sid}").json()["turns"] == 1
    r = client.patch(f"/v1/sessions/{sid}", json={"title": "  Qwen 微调  "})
    assert r.status_code == 200 and r.json()["title"] == "Qwen 微调"
    assert client.delete(f"/v1/sessions/{sid}").status_code == 204
    assert client.get("/v1/sessions").json() == []


def test_unknown_session_routes_are_404(client: TestClient) -> None:
    for method, kwargs in (("GET", {}), ("PATCH", {"json": {"title": "x"}}), ("DELETE", {})):
        r = client.request(method, "/v1/sessions/missing", **kwargs)  # type: ignore[arg-type]
        assert r.status_code == 404, method
        assert r.json()["error"]["code"] == "not_found"


def test_empty_title_is_422(client: TestClient) -> None:
    sid = _new(client)
    r = client.patch(f"/v1/sessions/{sid}", json={"title": ""})
    assert r.status_code == 422 and "title" in r.json()["error"]["message"]
