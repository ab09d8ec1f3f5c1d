"""Streamable HTTP at /mcp on the API app, under a live uvicorn on 127.0.0.1: the SDK's client with the API key
lists and calls the tools; without it (or with a wrong one) /mcp answers the API's 401 error body; a server
without a key is open, as the /v1 routes are."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from service.app import create_app
from service.catalog.loader import Catalog
from tests.api.conftest import LiveServer, make_settings
from tests.api.fakes import FakeAssistant, FakeRetriever
from tests.mcp.conftest import GUIDE_WORKLOAD, LORA_14B_ON_4090, run_async

pytestmark = pytest.mark.integration
StartServer = Callable[[FastAPI], LiveServer]
KEY = "mcp-key"
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def app_with(tmp_path: Path, catalog: Catalog, api_key: str) -> FastAPI:
    return create_app(make_settings(tmp_path, api_key=api_key), FakeAssistant(), catalog=catalog,
                      retriever=FakeRetriever())


def session_calls(url: str, headers: dict[str, str]) -> dict[str, Any]:
    async def main() -> dict[str, Any]:
        async with httpx.AsyncClient(headers=headers, timeout=30) as http, \
                streamable_http_client(url, http_client=http) as (read, write, _), \
                ClientSession(read, write) as session:
            await session.initialize()
            return {
                "tools": [t.name for t in (await session.list_tools()).tools],
                "plan": await session.call_tool("plan", GUIDE_WORKLOAD),
                "fit": await session.call_tool("check_feasibility", LORA_14B_ON_4090),
                "bad": await session.call_tool("plan", {**GUIDE_WORKLOAD, "budget_period": "week"}),
                "search": await session.call_tool("search_knowledge", {"query": "FP8"}),
                "resources": len((await session.list_resources()).resources),
            }

    return run_async(main)


def test_http_with_the_api_key(tmp_path: Path, catalog: Catalog, live_server_factory: StartServer) -> None:
    live = live_server_factory(app_with(tmp_path, catalog, KEY))
    out = session_calls(f"{live.base_url}/mcp", {"Authorization": f"Bearer {KEY}"})
    assert {"plan", "check_feasibility", "search_knowledge"} <= set(out["tools"])
    assert not out["plan"].isError and set(out["plan"].structuredContent["plan"]["picks"]) == {"tencent", "jdcloud"}
    assert not out["fit"].isError and out["fit"].structuredContent["fits"] is False
    assert out["bad"].isError and "budget_period:" in out["bad"].content[0].text
    assert not out["search"].isError and out["search"].structuredContent["passages"]  # the app's retriever
    assert out["resources"] > 20

    for headers, message in (({}, "Missing API key."), ({"Authorization": "Bearer wrong"}, "Invalid API key.")):
        r = httpx.post(f"{live.base_url}/mcp", json=INIT, headers={**MCP_HEADERS, **headers}, timeout=10)
        assert r.status_code == 401 and r.headers["www-authenticate"] == "Bearer"
        assert r.json()["error"]["code"] == "unauthorized" and r.json()["error"]["message"] == message
        assert r.json()["error"]["fix"]


def test_http_without_a_key_is_open(tmp_path: Path, catalog: Catalog, live_server_factory: StartServer) -> None:
    live = live_server_factory(app_with(tmp_path, catalog, ""))
    out = session_calls(f"{live.base_url}/mcp", {})
    assert not out["fit"].isError and out["fit"].structuredContent["fits"] is False


def test_mcp_needs_the_app_lifespan_and_takes_post(tmp_path: Path, catalog: Catalog) -> None:
    client = TestClient(app_with(tmp_path, catalog, ""))  # no `with`: the lifespan (and the MCP manager) never ran
    r = client.post("/mcp", json=INIT, headers=MCP_HEADERS)
    assert r.status_code == 503 and r.json()["error"]["code"] == "dependency_unavailable"
    with TestClient(app_with(tmp_path, catalog, "")) as running:
        r = running.post("/mcp", json=INIT, headers=MCP_HEADERS)
        assert r.status_code == 200 and r.json()["result"]["serverInfo"]["name"] == "gpu-advisor"
        # stateless: no server-to-client stream to hold open (a GET used to hang), no session to delete
        for method in ("GET", "DELETE"):
            r = running.request(method, "/mcp", headers=MCP_HEADERS)
            assert r.status_code == 405 and r.headers["allow"] == "POST"
            assert r.json()["error"]["code"] == "method_not_allowed"
