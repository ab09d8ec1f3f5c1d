"""Print the size of what an MCP agent pays for: the `tools/list` answer (paid on every request; issue 40 target
<= 60,000 characters of JSON, 321,000 before), its input schemas, and the text and structured content of plan and
plan_serving (the guide's workload, a 70B chat service; targets <= 8,000 characters of text and <= 30,000 of
structured content per call).

    python scripts/bench_mcp_sizes.py
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
from mcp.shared.memory import create_connected_server_and_client_session

from service.catalog.loader import load_catalog
from service.mcp.server import build_server
from service.mcp.tools import McpContext

ROOT = Path(__file__).resolve().parent.parent
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("plan", {"model": "Qwen2-7B", "samples": 100000, "budget_cny": 3000, "budget_period": "month"}),
    ("plan", {"model": "Qwen2-72B", "method": "full", "samples": 200000}),
    ("plan_serving", {"model": "Qwen2-72B", "request_rate": 8, "input_tokens": 1500, "output_tokens": 300}),
    ("plan_serving", {"model": "Llama-3.1-70B"}),
]


async def main() -> None:
    cat = load_catalog(ROOT / "knowledge")
    ctx = McpContext(catalog=lambda: cat, guide_dir=ROOT / "knowledge" / "guide", retriever=None)
    async with create_connected_server_and_client_session(build_server(ctx)) as s:
        listed = await s.list_tools()
        tools = listed.tools
        total = len(json.dumps(listed.model_dump(mode="json", by_alias=True, exclude_none=True), ensure_ascii=False))
        schemas = sum(len(json.dumps(t.inputSchema, ensure_ascii=False)) for t in tools)
        print(f"tools/list: {len(tools)} tools, {total:,} characters of JSON (target <= 60,000); input schemas "
              f"{schemas:,}, output schemas {sum(1 for t in tools if t.outputSchema)}")
        for name, args in CALLS:
            r = await s.call_tool(name, args)
            text = sum(len(c.text) for c in r.content if getattr(c, "type", "") == "text")
            structured = len(json.dumps(r.structuredContent or {}, ensure_ascii=False))
            first = next((c.text for c in r.content if getattr(c, "type", "") == "text"), "").splitlines()[:1]
            print(f"{name} {json.dumps(args, ensure_ascii=False)}: text {text:,} / structured {structured:,} "
                  f"characters{' (error)' if r.isError else ''}; first line: {first[0][:110] if first else ''}")


if __name__ == "__main__":
    anyio.run(main)
