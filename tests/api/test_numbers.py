"""Issue 41 item 9: numbers. NaN, Infinity, -Infinity and 1e400 are refused with a 4xx naming the field on every
surface (every float of every API body, the OpenAI route's own parameters, query parameters, MCP tools' arguments
over HTTP and stdio, CLI options), never read as "not given"; a size below the catalog's smallest model is refused,
not answered.

Regression: the MCP tools read NaN, Infinity and 1e400 as "not given" (4 of 20 refused before, 20 now); the OpenAI
route took NaN for temperature (12 of 164 API bodies answered 200 before, 0 now); /v1/inference answered params_b
5e-324 as "4.9e-324B (≈ Qwen2-0.5B)" (6 of 20 tiny sizes refused before, 20 now)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import anyio
import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from service.app import create_app
from service.catalog.loader import Catalog
from service.workload import MIN_PARAMS_B
from tests.api.conftest import make_settings
from tests.api.fakes import FakeAssistant, FakeRetriever

BAD = ["NaN", "Infinity", "-Infinity", "1e400"]
TRAIN = {"model": "Qwen2-7B", "samples": 10_000}
SERVE = {"model": "Qwen2.5-7B", "concurrency": 8}
TRAIN_FLOATS = ["params_b", "tokens", "dataset_gb", "epochs", "budget_cny", "deadline_hours"]
SERVE_FLOATS = ["params_b", "mem_fraction", "concurrency", "request_rate", "ttft_ms", "tpot_ms", "budget_cny"]


def raw(body: dict[str, Any], token: str) -> str:
    """The body as JSON text with the token where the value "__X__" is (JSON has no way to write it otherwise)."""
    return json.dumps(body).replace('"__X__"', token)


def with_bad(base: dict[str, Any], field: str) -> dict[str, Any]:
    out = {**base, field: "__X__"}
    if field == "params_b":
        out.pop("model")
    return out


def cases() -> list[tuple[str, str, Any]]:
    out: list[tuple[str, str, Any]] = []
    for f in TRAIN_FLOATS:
        w = with_bad(TRAIN, f)
        out += [("/v1/plan", f, w), ("/v1/estimate", f, {**w, "gpu": "A100"}), ("/v1/documents/launch", f,
                {"workload": w}), ("/v1/documents/request", f, {"workload": w}),
                ("/v1/chat", f, {"message": "plan it", "workload": w})]
    for f in SERVE_FLOATS:
        w = with_bad(SERVE, f)
        out += [("/v1/inference", f, {**w, "gpu": "L20"}), ("/v1/plan", f, {**w, "kind": "serving"}),
                ("/v1/plan/serving", f, w)]
    for f in ("temperature", "top_p", "presence_penalty"):  # the OpenAI route's parameters it ignores
        out.append(("/v1/chat/completions", f, {"messages": [{"role": "user", "content": "H20一小时多少钱"}], f: "__X__"}))
    return out


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory, catalog: Catalog) -> Iterator[TestClient]:
    app = create_app(make_settings(tmp_path_factory.mktemp("numbers")), FakeAssistant(), catalog=catalog,
                     retriever=FakeRetriever())
    with TestClient(app, raise_server_exceptions=False) as c:
        yield c


@pytest.mark.parametrize("token", BAD)
@pytest.mark.parametrize("route, field, body", cases(), ids=[f"{c[0]}:{c[1]}" for c in cases()])
def test_every_api_float_refuses_what_is_not_a_number(client: TestClient, route: str, field: str, body: Any,
                                                      token: str) -> None:
    r = client.post(route, content=raw(body, token), headers={"Content-Type": "application/json"})
    assert r.status_code == 422, r.text[:200]
    error = r.json()["error"]
    assert error["code"] == "invalid_input" and field in error["message"] and token in error["message"]
    assert error["fix"]


@pytest.mark.parametrize("content_type", [None, "application/json; charset=utf-8", "application/merge-patch+json"])
def test_whatever_the_json_type_says(client: TestClient, content_type: str | None) -> None:
    headers = {"Content-Type": content_type} if content_type else {}
    r = client.post("/v1/plan", content=raw(with_bad(TRAIN, "epochs"), "NaN"), headers=headers)
    assert r.status_code == 422 and "epochs" in r.json()["error"]["message"]


def test_a_lone_surrogate_is_refused_not_a_500(client: TestClient) -> None:
    # regression: a lone surrogate in an OpenAI message's content was a 500 (UnicodeEncodeError)
    r = client.post("/v1/chat/completions", content='{"messages":[{"role":"user","content":"x\\udc00"}]}',
                    headers={"Content-Type": "application/json"})
    assert r.status_code == 422 and "messages.0.content" in r.json()["error"]["message"]


def test_text_that_merely_says_nan_is_text(client: TestClient) -> None:
    r = client.post("/v1/chat", json={"message": "loss is NaN after Infinity steps, 1e400?"})
    assert r.status_code == 200


@pytest.mark.parametrize("token", ["nan", "inf", "-inf", "1e400", "Infinity"])
def test_query_floats_refuse_what_is_not_a_number(client: TestClient, token: str) -> None:
    r = client.get("/v1/catalog/instances", params={"min_memory_gb": token})
    assert r.status_code == 422 and "min_memory_gb" in r.json()["error"]["message"]


# -- sizes below the smallest model ---------------------------------------------------------------------------------
def test_the_floor_is_the_catalogs_smallest_model(catalog: Catalog) -> None:
    smallest = min(m.params_published_b for m in catalog.models if m.params_published_b)
    assert smallest * 0.9 <= MIN_PARAMS_B <= smallest  # at it, rounded down: every model the catalog has passes


TINY = ("5e-324", "1e-6", "0.001", "0.005")
TINY_ROUTES = [("/v1/inference", '{"params_b": %s, "gpu": "L20", "concurrency": 4}'),
               ("/v1/plan", '{"params_b": %s, "samples": 1000}'),
               ("/v1/plan", '{"kind": "serving", "params_b": %s}'),
               ("/v1/estimate", '{"params_b": %s, "gpu": "A100"}'),
               ("/v1/chat", '{"message": "x", "workload": {"params_b": %s, "samples": 1000}}')]


@pytest.mark.parametrize("value", TINY)
@pytest.mark.parametrize("route, template", TINY_ROUTES)
def test_sizes_below_the_smallest_model_are_refused(client: TestClient, route: str, template: str,
                                                    value: str) -> None:
    r = client.post(route, content=template % value, headers={"Content-Type": "application/json"})
    assert r.status_code == 422, r.text[:200]
    assert "params_b" in r.json()["error"]["message"] and f"{MIN_PARAMS_B:g}" in r.json()["error"]["message"]


def test_the_smallest_model_still_sizes(client: TestClient) -> None:
    r = client.post("/v1/inference", json={"params_b": 0.0072, "gpu": "L20", "concurrency": 4})
    assert r.status_code == 200


# -- MCP over stdio (HTTP: tests/mcp/test_content_types.py) -------------------------------------------------------
def test_the_stdio_transport_answers_bad_numbers_itself() -> None:
    from mcp.shared.message import SessionMessage

    from service.mcp.stdio_transport import guarded_stdio

    lines = [b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"plan","arguments":'
             b'{"model":"Qwen2-7B","epochs":1e400}}}\n', b'{"jsonrpc":"2.0","id":3,"method":"ping"}\n']
    written: list[str] = []

    class Out:
        async def write(self, text: str) -> None:
            written.append(text)

        async def flush(self) -> None:
            pass

    async def stdin() -> Any:
        for line in lines:
            yield line

    async def main() -> Any:
        async with guarded_stdio(stdin(), Out()) as (read, write):
            first = await read.receive()
            await write.aclose()
            return first

    first = anyio.run(main)
    assert isinstance(first, SessionMessage) and first.message.root.id == 3  # only the good line reached the SDK
    [answer] = [json.loads(w) for w in written]
    assert answer["id"] == 2 and answer["error"]["code"] == -32602
    assert "params.arguments.epochs" in answer["error"]["message"]


# -- CLI --------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("token", ["nan", "inf", "-inf", "1e400"])
@pytest.mark.parametrize("args, option", [
    (["plan", "--model", "Qwen2-7B", "--epochs"], "epochs"),
    (["plan", "--model", "Qwen2-7B", "--budget-cny"], "budget"),
    (["plan-serving", "--model", "Qwen2.5-7B", "--concurrency"], "concurrency"),
    (["estimate", "--model", "Qwen2-7B", "--gpu", "A100", "--epochs"], "epochs"),
])
def test_cli_options_refuse_what_is_not_a_number(args: list[str], option: str, token: str) -> None:
    from service.cli.app import build_app

    r = CliRunner().invoke(build_app(), [*args, token])
    assert r.exit_code == 2 and option in r.output
