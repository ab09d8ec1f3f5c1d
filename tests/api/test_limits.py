"""Bad input is a small, quick 4xx in our error shape: field limits, body limits, a body read deadline, strict
types, 405 with a complete Allow header, HEAD on GET routes."""

from __future__ import annotations

import socket
import time
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from service.app import create_app
from service.catalog.loader import Catalog
from service.settings import Settings
from tests.api.fakes import FakeAssistant, FakeRetriever


def _error(r: Any, status: int) -> dict[str, str]:
    assert r.status_code == status, r.text[:300]
    error: dict[str, str] = r.json()["error"]
    assert set(error) == {"code", "message", "fix"} and error["fix"]
    return error


def test_a_100k_entry_list_is_refused_quickly_and_briefly(client: TestClient) -> None:
    start = time.perf_counter()
    r = client.post("/v1/plan", json={"model": "Qwen2-7B", "gpu_include": ["A100"] * 100_000})
    elapsed = time.perf_counter() - start
    error = _error(r, 422)
    assert "gpu_include" in error["message"] and "64" in error["message"]
    assert len(r.content) < 2000 and elapsed < 3.0


def test_a_large_body_is_413_before_it_is_parsed(client: TestClient) -> None:
    r = client.post("/v1/plan", json={"model": "Qwen2-7B", "junk": "x" * 10_000_000})
    assert _error(r, 413)["code"] == "payload_too_large" and len(r.content) < 1000


def test_a_chunked_body_over_the_limit_is_413(client: TestClient) -> None:
    def chunks() -> Any:
        for _ in range(40):
            yield b" " * 65536

    r = client.post("/v1/plan", content=chunks(), headers={"Content-Type": "application/json"})
    _error(r, 413)


def test_errors_quote_at_most_about_200_characters_of_the_input(client: TestClient) -> None:
    r = client.post("/v1/plan", json={"model": "Qwen2-7B", "junk": "x" * 500_000})
    error = _error(r, 422)
    assert "junk" in error["message"] and len(error["message"]) < 400
    r = client.post("/v1/plan", json={"model": "m" * 5000})
    assert len(_error(r, 422)["message"]) < 400
    r = client.get("/v1/nothing/" + "y" * 50_000)
    assert len(_error(r, 404)["message"]) < 400


@pytest.mark.parametrize("bad", ["a" * 129, "a b", "%E5%BC%A0"])
def test_session_ids_are_checked_on_every_route(client: TestClient, bad: str) -> None:
    for method in ("GET", "PATCH", "DELETE"):
        r = client.request(method, f"/v1/sessions/{bad}", json={"title": "x"} if method == "PATCH" else None)
        assert len(_error(r, 422)["message"]) < 400


@pytest.mark.parametrize(("body", "field"), [
    ({"model": "Qwen2-7B", "zero_stage": False}, "zero_stage"),
    ({"model": "Qwen2-7B", "zero_stage": True}, "zero_stage"),
    ({"model": "Qwen2-7B", "samples": "1_000"}, "samples"),
    ({"model": "Qwen2-7B", "epochs": "3"}, "epochs"),
    ({"model": "Qwen2-7B", "grad_ckpt": 1}, "grad_ckpt"),
    ({"model": "Qwen2-7B", "clouds": ["tencent", "jdcloud", "tencent"]}, "clouds"),
])
def test_bad_types_are_rejected(client: TestClient, body: dict[str, Any], field: str) -> None:
    assert field in _error(client.post("/v1/plan", json=body), 422)["message"]


def test_numbers_as_json_numbers_still_work(client: TestClient) -> None:
    r = client.post("/v1/plan", json={"params_b": 7, "epochs": 2, "samples": 1000, "zero_stage": 2})
    assert r.status_code == 200, r.text[:300]


def test_a_too_long_title_is_422_not_cut(client: TestClient, assistant: FakeAssistant) -> None:
    sid = client.post("/v1/chat", json={"message": "hi"}).json()["session_id"]
    assert "title" in _error(client.patch(f"/v1/sessions/{sid}", json={"title": "t" * 200}), 422)["message"]
    assert client.patch(f"/v1/sessions/{sid}", json={"title": "t" * 80}).status_code == 200


def test_405_lists_every_method_of_the_path(client: TestClient) -> None:
    r = client.put("/v1/sessions/abc")
    _error(r, 405)
    assert r.headers["allow"] == "DELETE, GET, HEAD, PATCH"
    r = client.delete("/v1/plan")
    assert r.status_code == 405 and r.headers["allow"] == "POST"


@pytest.mark.parametrize("path", ["/healthz", "/v1/sessions", "/v1/catalog/gpus"])
def test_head_answers_like_get_without_a_body(client: TestClient, path: str) -> None:
    get, head = client.get(path), client.head(path)
    assert head.status_code == get.status_code == 200
    assert head.content == b"" and head.headers["content-type"] == get.headers["content-type"]


def test_a_stalled_body_gets_408_and_the_connection_back(
    live_server_factory: Any, settings: Settings, catalog: Catalog
) -> None:
    app: FastAPI = create_app(settings.model_copy(update={"body_timeout_s": 1.0}), FakeAssistant(),
                              catalog=catalog, retriever=FakeRetriever())
    server = live_server_factory(app)
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        sock.sendall(b"POST /v1/plan HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                     b"Content-Length: 1000\r\n\r\n{\"model\"")
        start = time.monotonic()
        reply = sock.recv(4096)
        waited = time.monotonic() - start
    assert reply.startswith(b"HTTP/1.1 408") and b"request_timeout" in reply
    assert waited < 5


def test_a_response_id_naming_no_valid_session_is_422(client: TestClient) -> None:
    body = {"model": "gpu-advisor", "input": "hi", "previous_response_id": "resp_张三 x_1"}
    assert "previous_response_id" in _error(client.post("/v1/responses", json=body), 422)["message"]


def test_each_route_documents_its_body_limit(client: TestClient) -> None:
    paths = client.get("/openapi.json").json()["paths"]
    assert "1048576 bytes" in paths["/v1/plan"]["post"]["responses"]["413"]["description"]
    assert "8388608 bytes" in paths["/v1/documents/launch"]["post"]["responses"]["413"]["description"]
    assert "4000 characters" in paths["/v1/chat"]["post"]["responses"]["413"]["description"]


def test_estimate_and_documents_take_json_numbers_only(client: TestClient) -> None:
    r = client.post("/v1/estimate", json={"model": "Qwen2-7B", "gpu": "A100", "gpus": "2"})
    assert "gpus" in _error(r, 422)["message"]
    r = client.post("/v1/documents/launch", json={"workload": {"model": "Qwen2-7B"}, "candidate_index": "1"})
    assert "candidate_index" in _error(r, 422)["message"]
