"""/mcp against malformed input: never a 5xx. JSON-RPC's own errors for the client's mistakes (a parse error for a
body that is not UTF-8 JSON or is nested too deep, method not found for an unknown method), then a hypothesis fuzz
of bodies (malformed JSON, deep nesting, wrong types, unknown methods, huge ids) through the whole app.

Regression: a non-UTF-8 body, a body nested 5,000 deep and an id of 5,000 digits were HTTP 500; an unknown method
was -32602 (invalid params)."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from service.app import create_app
from service.catalog.loader import Catalog
from tests.api.conftest import make_settings
from tests.api.fakes import FakeAssistant, FakeRetriever

HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
PING = {"jsonrpc": "2.0", "id": 1, "method": "ping"}


@pytest.fixture(scope="module")
def mcp(tmp_path_factory: pytest.TempPathFactory, catalog: Catalog) -> Iterator[TestClient]:
    app = create_app(make_settings(tmp_path_factory.mktemp("mcp-fuzz")), FakeAssistant(), catalog=catalog,
                     retriever=FakeRetriever())
    with TestClient(app, raise_server_exceptions=False) as client:  # the lifespan runs the MCP session manager
        yield client


def post(client: TestClient, body: bytes) -> tuple[int, dict[str, object]]:
    r = client.post("/mcp", content=body, headers=HEADERS)
    try:
        payload = r.json()
    except ValueError:
        payload = {}
    return r.status_code, payload if isinstance(payload, dict) else {"batch": payload}


@pytest.mark.parametrize(("body", "status", "code"), [
    (b"\xff\xfe{\"jsonrpc\": \"2.0\"}", 400, -32700),                                   # not UTF-8
    (b"[" * 5000 + b"]" * 5000, 400, -32700),                                          # nested 5,000 deep
    (b'{"jsonrpc":"2.0","id":1,"method":"ping","params":' + b'{"a":' * 5000 + b"1" + b"}" * 5001, 400, -32700),
    (b'{"jsonrpc":"2.0","id":' + b"9" * 5000 + b',"method":"ping"}', 400, -32700),       # 5,000-digit id
    (b'{"jsonrpc":"2.0","id":' + b"9" * 40 + b',"method":"ping"}', 400, -32600),         # id over 64 bits
    (json.dumps({**PING, "id": "x" * 10_000}).encode(), 400, -32600),                  # 10,000-character id
    (json.dumps({**PING, "id": {"a": 1}}).encode(), 400, -32600),                      # id of the wrong type
    (json.dumps({**PING, "method": 5}).encode(), 400, -32600),                         # method of the wrong type
    (json.dumps({**PING, "method": "tools/destroy"}).encode(), 200, -32601),           # unknown method
    (b"{not json", 400, -32700),
    (b"", 400, -32700),
])
def test_malformed_bodies_get_json_rpc_errors(mcp: TestClient, body: bytes, status: int, code: int) -> None:
    got_status, payload = post(mcp, body)
    assert (got_status, payload.get("error", {}).get("code")) == (status, code), payload  # type: ignore[union-attr]


def test_a_well_formed_request_still_reaches_the_sdk(mcp: TestClient) -> None:
    status, payload = post(mcp, json.dumps(PING).encode())
    assert status == 200 and payload == {"jsonrpc": "2.0", "id": 1, "result": {}}


def test_size_inference_with_a_denormal_fraction_is_a_tool_error_not_internal(mcp: TestClient) -> None:
    # mem_fraction 5e-324 (the smallest double): was internal_error (OverflowError in math.ceil)
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "size_inference", "arguments": {
        "model": "Qwen2.5-7B", "gpu": "L20", "mem_fraction": 5e-324}}}
    status, payload = post(mcp, json.dumps(call).encode())
    result = payload["result"]
    assert status == 200 and result["isError"] is True  # type: ignore[index]
    assert result["structuredContent"]["error"]["code"] == "invalid_input", result  # type: ignore[index]


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20)
methods = st.sampled_from(["ping", "initialize", "tools/list", "tools/call", "resources/read", "resources/list",
                           "prompts/list", "nope", "", "tools/call/x"]) | st.text(max_size=30)
ids = st.none() | st.integers() | st.integers(min_value=10**18, max_value=10**60) | st.text(max_size=300) | json_values
messages = st.fixed_dictionaries({"jsonrpc": st.sampled_from(["2.0", "1.0", 2]), "method": methods | json_values},
                                 optional={"id": ids, "params": json_values | st.fixed_dictionaries(
                                     {"name": st.sampled_from(["plan", "size_inference", "nope"]) | st.text(),
                                      "arguments": json_values})})


def deep(n: int) -> bytes:
    return b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":' + b"[" * n + b"]" * n + b"}}"


bodies = st.one_of(
    messages.map(lambda m: json.dumps(m).encode()),                    # well-formed JSON, any shape
    st.lists(messages, max_size=3).map(lambda m: json.dumps(m).encode()),  # batches
    json_values.map(lambda v: json.dumps(v).encode()),                 # not a message at all
    st.binary(max_size=200),                                           # any bytes
    messages.map(lambda m: json.dumps(m).encode()[:-3]),               # truncated
    st.integers(min_value=1, max_value=3000).map(deep),                # deep nesting
)


@pytest.mark.slow  # a 300-body hypothesis sweep
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                   HealthCheck.too_slow])
@given(body=bodies)
def test_fuzzed_bodies_never_get_a_server_error(mcp: TestClient, body: bytes) -> None:
    status, payload = post(mcp, body)
    assert status < 500, (status, body[:200], payload)

