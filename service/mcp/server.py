"""The MCP server (the official SDK's low-level `Server`): the tools of service.mcp.tools and the guide sections as
resources. The transports (stdio: service.mcp.stdio; Streamable HTTP on the API: service.mcp.http) run the same
server.

A tool call validates its arguments with the tool's pydantic model, runs the engine in a worker thread (the
event loop keeps serving), and answers with a text summary (at most 2,000 characters) and the result as structured
content: compact by default (service/mcp/outputs.py), whole with `detail: "full"`; the structured JSON is repeated
as text only when it is small, for clients that read text only. Bad arguments and engine errors are tool errors (isError) whose
text names the field and the fix, never a traceback.
"""

from __future__ import annotations

import json
import logging
from functools import partial
from typing import Any

import anyio
from mcp import types
from mcp.server.lowlevel import Server
from mcp.server.lowlevel.helper_types import ReadResourceContents
from mcp.shared.exceptions import McpError
from pydantic import AnyUrl, BaseModel, ValidationError

from service.errors import AdvisorError, DependencyUnavailableError, UnknownNameError
from service.mcp import guide
from service.mcp.outputs import compact, output_schema
from service.mcp.summaries import clip
from service.mcp.tools import McpContext, mcp_tools, tools_by_name
from service.questions.tools import ToolSpec, artifact_of

log = logging.getLogger(__name__)
NAME = "gpu-advisor"
INSTRUCTIONS = (
    "GPU Advisor: which GPU configuration to rent on Tencent Cloud or JD Cloud for an ML training job or for serving "
    "a model, with every instance, memory figure, hour and yuan from a deterministic engine over sourced catalog "
    "data. Call `plan` for a training workload, the question tools (check_feasibility, find_min_gpus, "
    "compare_options, estimate_savings, capacity, diagnose) for the other training questions, plan_serving / "
    "size_inference for serving (GPUs per replica x replicas, KV cache, concurrency, tokens/s, latency, cost), "
    "catalog_fact / search_catalog for catalog rows and search_knowledge for the guide. Quote the tools' figures; "
    "never compute or recall your own."
)
FIX_ARGS = "Fix the named field and call again (the tool's inputSchema lists every field and its range)."
# the chat's follow-up fields and the offline reader's routing ('applied': a workload the reader found in a
# knowledge question): not for a tool caller
BOOKKEEPING = ("question", "also", "applied")
TEXT_JSON_LIMIT = 6000  # the structured JSON is repeated as text when it is at most this long
DETAIL = {"type": "string", "enum": ["summary", "full"], "default": "summary",
          "description": "summary (default): the compact result; full: every candidate, rejected option and figure"}
ROOT_COMBINATORS = ("allOf", "anyOf", "oneOf")
READ_ONLY = types.ToolAnnotations(readOnlyHint=True, destructiveHint=False, idempotentHint=True,
                                  openWorldHint=False)


def tool_error(code: str, message: str, fix: str = "") -> types.CallToolResult:
    """A tool error: the text a model reads, and the API's error shape as structured content."""
    text = f"Error ({code}): {message}" + (f" {fix}" if fix else "")
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], isError=True,
                                structuredContent={"error": {"code": code, "message": message, "fix": fix}})


def _validation_error(exc: ValidationError) -> types.CallToolResult:
    """The API's message ('field: problem (got value)'); a rule between fields is named 'arguments'."""
    from service.edge.errors import validation_message

    errors = [{**e, "loc": e["loc"] or ("arguments",)} for e in exc.errors()]
    return tool_error("invalid_input", validation_message(errors), FIX_ARGS)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("gpu-advisor")
    except PackageNotFoundError:  # run from a checkout without `pip install -e .`
        return "0.1.0"


def slim(node: Any) -> Any:
    """A JSON schema without what a model does not read: per-property titles, `default: null`, and an optional
    field's `anyOf [X, null]` written as X's own schema with `null` added to its type. Meaning is unchanged."""
    if isinstance(node, list):
        return [slim(x) for x in node]
    if not isinstance(node, dict):
        return node
    out = {k: slim(v) for k, v in node.items() if k != "title" and not (k == "default" and v is None)}
    alts = out.get("anyOf")
    if isinstance(alts, list) and len(alts) == 2 and {"type": "null"} in alts:
        other = next(a for a in alts if a != {"type": "null"})
        if isinstance(other, dict) and isinstance(other.get("type"), str) and "anyOf" not in other:
            del out["anyOf"]
            out = {**other, **out, "type": [other["type"], "null"]}
    return out


def prune_defs(schema: dict[str, Any]) -> None:
    """Drop the `$defs` nothing refers to any more (a field removed above was their only user)."""
    defs = schema.get("$defs")
    if not isinstance(defs, dict):
        return
    while True:
        text = json.dumps({k: v for k, v in schema.items() if k != "$defs"}) + json.dumps(defs)
        unused = [k for k in defs if f'"#/$defs/{k}"' not in text]
        if not unused:
            break
        for k in unused:
            del defs[k]
    if not defs:
        del schema["$defs"]


def input_schema(args: type[BaseModel]) -> dict[str, Any]:
    """The argument model's JSON schema with no combinator at its root: Anthropic's and OpenAI's APIs refuse a tool
    whose input schema has a top-level allOf/anyOf/oneOf (and some clients then drop every tool). The workload's
    rules between fields ('give model or params_b') move into the description; the pydantic model still enforces
    them on every call, and its error names the field."""
    schema: dict[str, Any] = slim(args.model_json_schema())
    for key in BOOKKEEPING:
        schema.get("properties", {}).pop(key, None)
    prune_defs(schema)
    schema.setdefault("properties", {})["detail"] = DETAIL
    rules = [str(r.get("description", "")) for key in ROOT_COMBINATORS for r in schema.pop(key, [])]
    if rules:
        said = [r for r in rules if r]
        schema["description"] = f"{schema.get('description', '')} Rules: {'; '.join(said)}.".strip()
    return schema


def _tool(spec: ToolSpec) -> types.Tool:
    return types.Tool(name=spec.name, title=spec.title, description=spec.description,
                      inputSchema=input_schema(spec.args), outputSchema=output_schema(spec.output),
                      annotations=READ_ONLY)


def call(ctx: McpContext, name: str, arguments: dict[str, Any]) -> types.CallToolResult:
    """One tool call, synchronously: validate, run the engine, summarise; every failure a tool error."""
    by_name = tools_by_name()
    spec = by_name.get(name)
    if spec is None:
        return tool_error("unknown_tool", f"No tool '{name}'.", f"Use one of: {', '.join(by_name)}.")
    arguments = dict(arguments)
    detail = arguments.pop("detail", "summary")
    if detail not in ("summary", "full"):
        return tool_error("invalid_input", f"detail: must be 'summary' or 'full' (got {detail!r}).", FIX_ARGS)
    for key in BOOKKEEPING:
        arguments.pop(key, None)
    try:
        result = spec.call(ctx.spine(), arguments)
    except ValidationError as exc:
        return _validation_error(exc)
    except DependencyUnavailableError as exc:  # the guide is still readable as resources
        return tool_error(exc.code, exc.message, "Read the guide sections as resources (resources/list) meanwhile. "
                          + exc.fix)
    except UnknownNameError as exc:  # the CLI's fix names `gpu-advisor catalog list`; over MCP, say the tool
        return tool_error(exc.code, exc.message, f"{exc.fix} Over MCP: search_catalog lists the names.")
    except AdvisorError as exc:
        return tool_error(exc.code, exc.message, exc.fix)
    except Exception:  # a bug or a broken dependency: logged here, one line to the caller
        log.exception("MCP tool %s failed", name)
        return tool_error("internal_error", f"The tool {name} failed unexpectedly.",
                          "Try again; if it persists, see the server log.")
    refused = getattr(getattr(result, "documents", None), "refused", None)
    if refused is not None:  # a document asked for was refused (a model name that is not a model id): say so
        return tool_error("invalid_input", refused.message, refused.fix or FIX_ARGS)
    full = json.loads(json.dumps(artifact_of(result), ensure_ascii=False, default=str))  # plain JSON values
    structured = full if detail == "full" else compact(full)
    if name == "search_knowledge" or isinstance(structured.get("passages"), list):
        structured["passages"] = [guide.with_resource(p) for p in structured.get("passages") or []]
    content = [types.TextContent(type="text", text=clip(spec.summary(result)))]
    data = json.dumps(structured, ensure_ascii=False, separators=(",", ":"))
    if len(data) <= TEXT_JSON_LIMIT or detail == "full":
        content.append(types.TextContent(type="text", text=data))
    return types.CallToolResult(content=content, structuredContent=structured, isError=False)


def build_server(ctx: McpContext) -> Server[Any, Any]:
    server: Server[Any, Any] = Server(NAME, version=_version(), instructions=INSTRUCTIONS)

    @server.list_tools()  # type: ignore[no-untyped-call, untyped-decorator]
    async def list_tools() -> list[types.Tool]:
        return [_tool(spec) for spec in mcp_tools()]

    @server.call_tool(validate_input=False)  # type: ignore[untyped-decorator]
    async def call_tool(name: str, arguments: dict[str, Any]) -> types.CallToolResult:
        return await anyio.to_thread.run_sync(partial(call, ctx, name, arguments or {}))

    @server.list_resources()  # type: ignore[no-untyped-call, untyped-decorator]
    async def list_resources() -> list[types.Resource]:
        found = await anyio.to_thread.run_sync(guide.sections, ctx.guide_dir)
        return [types.Resource(uri=AnyUrl(s.uri), name=f"{s.file}#{s.anchor}", title=s.title,
                               description=f"Selection guide ({s.lang}): {s.title}", mimeType=guide.MIME)
                for s in found]

    @server.list_resource_templates()  # type: ignore[no-untyped-call, untyped-decorator]
    async def list_templates() -> list[types.ResourceTemplate]:
        return [types.ResourceTemplate(uriTemplate=f"{guide.SCHEME}://{{file}}", name="guide-document",
                                       title="A whole guide document", mimeType=guide.MIME,
                                       description="A guide file by name, e.g. guide://04-training-memory.en.md")]

    @server.read_resource()  # type: ignore[no-untyped-call, untyped-decorator]
    async def read_resource(uri: AnyUrl) -> list[ReadResourceContents]:
        text = await anyio.to_thread.run_sync(guide.read, ctx.guide_dir, str(uri))
        if text is None:
            raise McpError(types.ErrorData(code=types.INVALID_PARAMS, message=f"No guide resource '{uri}'. "
                                           "Use a URI from resources/list, e.g. guide://04-training-memory.en.md."))
        return [ReadResourceContents(content=text, mime_type=guide.MIME)]

    return server
