"""`python -m service.cli mcp` spawned as a desktop client would, driven by the SDK's stdio client: list the
tools, plan the guide's workload on both clouds, a 14B LoRA on one 4090 does not fit, a bad argument is a tool
error naming the field, and the guide's sections are resources."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.conftest import REPO_ROOT
from tests.mcp.conftest import GUIDE_WORKLOAD, LORA_14B_ON_4090, run_async

pytestmark = pytest.mark.integration


def server_params(data_dir: Path) -> StdioServerParameters:
    """The command a Claude Desktop / Cursor config names, with this checkout on PYTHONPATH and a fresh data dir
    (no synced overlay, no user price sheet, no API key from the environment)."""
    env = {"PYTHONPATH": str(REPO_ROOT), "GPU_ADVISOR_DATA_DIR": str(data_dir), "PATH": os.environ.get("PATH", ""),
           "HOME": os.environ.get("HOME", str(data_dir))}
    return StdioServerParameters(command=sys.executable, args=["-m", "service.cli", "mcp"], env=env, cwd=str(data_dir))


def test_stdio_lists_and_calls_the_tools(tmp_path: Path) -> None:
    async def main() -> dict[str, Any]:
        async with stdio_client(server_params(tmp_path)) as (read, write), ClientSession(read, write) as session:
            init = await session.initialize()
            return {
                "server": init.serverInfo.name,
                "tools": [t.name for t in (await session.list_tools()).tools],
                "plan": await session.call_tool("plan", GUIDE_WORKLOAD),
                "fit": await session.call_tool("check_feasibility", LORA_14B_ON_4090),
                "bad": await session.call_tool("check_feasibility", {**LORA_14B_ON_4090, "gpu_count": 0}),
                "resources": (await session.list_resources()).resources,
                "section": await session.read_resource(
                    "guide://04-training-memory.en.md#memory-for-lora-and-qlora"),
            }

    out = run_async(main)
    assert out["server"] == "gpu-advisor"
    assert {"plan", "check_feasibility", "search_catalog", "search_knowledge"} <= set(out["tools"])
    plan = out["plan"]
    assert not plan.isError and set(plan.structuredContent["plan"]["picks"]) == {"tencent", "jdcloud"}
    fit = out["fit"]
    assert not fit.isError and fit.structuredContent["fits"] is False
    bad = out["bad"]
    assert bad.isError and "gpu_count: Input should be greater than or equal to 1" in bad.content[0].text
    uris = {str(r.uri) for r in out["resources"]}
    assert "guide://04-training-memory.en.md#memory-for-lora-and-qlora" in uris
    assert out["section"].contents[0].text.startswith("## ")
