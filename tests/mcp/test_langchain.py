"""The MCP tools loaded into a LangChain agent through langchain-mcp-adapters: a scripted chat model (no LLM, no
network) calls check_feasibility; the tool message carries the summary and the artifact the structured content."""

from __future__ import annotations

from typing import Any

from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, ToolMessage
from langchain_mcp_adapters.tools import load_mcp_tools
from mcp.shared.memory import create_connected_server_and_client_session

from service.mcp.server import build_server
from service.mcp.tools import McpContext
from tests.mcp.conftest import LORA_14B_ON_4090, run_async


class ScriptedModel(FakeMessagesListChatModel):
    """Emits the scripted messages in turn; bind_tools returns itself (as in tests/assistant/test_agent.py)."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedModel:
        return self


def test_agent_calls_an_mcp_tool(context: McpContext) -> None:
    call = {"name": "check_feasibility", "args": LORA_14B_ON_4090, "id": "c1", "type": "tool_call"}
    model = ScriptedModel(responses=[AIMessage(content="", tool_calls=[call]),
                                     AIMessage(content="No: it does not fit on one RTX 4090.")])

    async def main() -> tuple[list[str], dict[str, Any]]:
        async with create_connected_server_and_client_session(build_server(context)) as session:
            tools = await load_mcp_tools(session)
            agent = create_agent(model, tools)
            result = await agent.ainvoke({"messages": [{"role": "user", "content": "4090能跑14B lora吗"}]})
            return [t.name for t in tools], result

    names, result = run_async(main)
    assert {"plan", "check_feasibility", "search_knowledge"} <= set(names)
    tool_msg = next(m for m in result["messages"] if isinstance(m, ToolMessage))
    assert tool_msg.name == "check_feasibility" and tool_msg.status == "success"
    assert "fits=False" in str(tool_msg.content)
    assert tool_msg.artifact["structured_content"]["fits"] is False
    assert result["messages"][-1].content == "No: it does not fit on one RTX 4090."
