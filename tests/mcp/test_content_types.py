"""Issue 41 F5: one input check for /mcp whatever the Content-Type says. Each kind of bad body, sent under each
spelling of the type (a second type after a comma, a charset, odd casing, none, another type), gets a 4xx, and under
the spellings the SDK reads (any `application/json` part) the JSON-RPC error of its kind.

Regression: the check ran only for Content-Type exactly `application/json`; with `application/json, text/plain` a
non-UTF-8 body, 5,000-deep nesting or a 5,000-digit id was a 500 (and a lone surrogate id was a 500 under every
spelling): 7 of 120 before, 0 now."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from service.app import create_app
from service.catalog.loader import Catalog
from tests.api.conftest import make_settings
from tests.api.fakes import FakeAssistant, FakeRetriever

PARSE, INVALID_REQUEST, NOT_FOUND, INVALID_PARAMS = -32700, -32600, -32601, -32602


def call(arguments: str) -> bytes:
    return ('{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"plan","arguments":' + arguments
            + "}}").encode()


# (kind, body, the JSON-RPC error it gets once the SDK would read the body)
BODIES = [
    ("not_utf8", b'{"jsonrpc":"2.0","id":1,"method":"ping","x":"\xff\xfe"}', PARSE),
    ("deep_5000_object", b'{"jsonrpc":"2.0","id":1,"method":"ping","params":' + b'{"a":' * 5000 + b"1"
     + b"}" * 5001, PARSE),
    ("deep_5000_list", b"[" * 5000 + b"]" * 5000, PARSE),
    ("id_5000_digits", b'{"jsonrpc":"2.0","id":' + b"9" * 5000 + b',"method":"ping"}', PARSE),
    ("id_over_64_bits", b'{"jsonrpc":"2.0","id":' + b"9" * 40 + b',"method":"ping"}', INVALID_REQUEST),
    ("id_true", b'{"jsonrpc":"2.0","id":true,"method":"ping"}', INVALID_REQUEST),
    ("id_object", b'{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}', INVALID_REQUEST),
    ("id_lone_surrogate", b'{"jsonrpc":"2.0","id":"\\ud800","method":"ping"}', INVALID_REQUEST),
    ("text_lone_surrogate", call('{"model":"Qwen\\udc00"}'), INVALID_REQUEST),
    ("truncated", b'{"jsonrpc":"2.0","id":1,"method":', PARSE),
    ("empty", b"", PARSE),
    ("not_an_object", b'"hello"', INVALID_REQUEST),
    ("method_number", b'{"jsonrpc":"2.0","id":1,"method":5}', INVALID_REQUEST),
    ("argument_nan", call('{"model":"Qwen2-7B","epochs":NaN}'), INVALID_PARAMS),
    ("argument_infinity", call('{"model":"Qwen2-7B","budget_cny":Infinity}'), INVALID_PARAMS),
    ("argument_minus_infinity", call('{"model":"Qwen2-7B","budget_cny":-Infinity}'), INVALID_PARAMS),
    ("argument_1e400", call('{"model":"Qwen2-7B","epochs":1e400}'), INVALID_PARAMS),
    ("batch_with_a_number", b'[{"jsonrpc":"2.0","id":1,"method":"ping"}, 5]', INVALID_REQUEST),
]
JSON_TYPES = ["application/json", "application/json, text/plain", "text/plain, application/json",
              "application/json; charset=utf-8", "Application/JSON", "APPLICATION/JSON; CHARSET=UTF-8"]
OTHER_TYPES = ["text/plain", None]


@pytest.fixture(scope="module")
def mcp(tmp_path_factory: pytest.TempPathFactory, catalog: Catalog) -> Iterator[TestClient]:
    app = create_app(make_settings(tmp_path_factory.mktemp("mcp-types")), FakeAssistant(), catalog=catalog,
                     retriever=FakeRetriever())
    with TestClient(app, raise_server_exceptions=False) as client:
        yield client


def post(client: TestClient, body: bytes, content_type: str | None) -> tuple[int, dict[str, object]]:
    headers = {"Accept": "application/json, text/event-stream"}
    if content_type is not None:
        headers["Content-Type"] = content_type
    r = client.post("/mcp", content=body, headers=headers)
    try:
        payload = r.json()
    except ValueError:
        payload = {}
    return r.status_code, payload if isinstance(payload, dict) else {}


@pytest.mark.parametrize("content_type", JSON_TYPES)
@pytest.mark.parametrize("kind, body, code", BODIES, ids=[b[0] for b in BODIES])
def test_every_bad_body_gets_its_json_rpc_error_under_every_json_type(mcp: TestClient, content_type: str,
                                                                      kind: str, body: bytes, code: int) -> None:
    status, payload = post(mcp, body, content_type)
    assert status == 400, (status, payload)
    assert payload["error"]["code"] == code, payload  # type: ignore[index]


@pytest.mark.parametrize("content_type", OTHER_TYPES)
@pytest.mark.parametrize("kind, body, code", BODIES, ids=[b[0] for b in BODIES])
def test_every_bad_body_is_a_4xx_under_any_other_type(mcp: TestClient, content_type: str | None, kind: str,
                                                      body: bytes, code: int) -> None:
    status, _ = post(mcp, body, content_type)
    assert 400 <= status < 500, status


def test_a_bad_argument_names_its_field(mcp: TestClient) -> None:
    _, payload = post(mcp, call('{"model":"Qwen2-7B","epochs":NaN}'), "application/json, text/plain")
    message = payload["error"]["message"]  # type: ignore[index]
    assert "params.arguments.epochs" in message and "NaN" in message and payload["id"] == 7


# (Content-Type, what a well-formed ping gets: the SDK reads it, or refuses the type with its own 4xx)
GOOD = [("application/json", 200), ("application/json, text/plain", 200), ("application/json; charset=utf-8", 200),
        ("text/plain, application/json", 400),  # the SDK's transport check wants application/json first
        ("Application/JSON", 415), ("APPLICATION/JSON; CHARSET=UTF-8", 415)]  # the SDK compares case-sensitively


@pytest.mark.parametrize("content_type, status", GOOD)
def test_a_good_request_still_reaches_the_sdk(mcp: TestClient, content_type: str, status: int) -> None:
    got, payload = post(mcp, json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}).encode(), content_type)
    assert got == status
    if status == 200:
        assert payload == {"jsonrpc": "2.0", "id": 1, "result": {}}
