"""The MCP server: the engine's question types as tools (JSON input schemas, structured output) and the guide's
sections as resources, over stdio (`gpu-advisor mcp`) and Streamable HTTP (/mcp on the API). See docs/mcp.md.

Only server.py imports the SDK at module level; the API imports http.py, which loads the SDK when the app starts.
"""
