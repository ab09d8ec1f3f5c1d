"""The stdio transport with the same input check as /mcp (service/mcp/guard.py): each line is checked before the
SDK reads it; a line that is not UTF-8 JSON, nests too deep, holds NaN / Infinity / 1e400 or a lone surrogate, has
a malformed id or names no MCP method is answered with its JSON-RPC error on stdout and never reaches a tool.
(The SDK's own stdio_server reads NaN and 1e400 in a tool's arguments as null: "not given".)

    async with guarded_stdio(stdin, stdout) as (read, write):
        await server.run(read, write, init_options)
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp import types
from mcp.shared.message import SessionMessage

from service.mcp.guard import check_body

Streams = tuple[MemoryObjectReceiveStream[SessionMessage | Exception], MemoryObjectSendStream[SessionMessage]]


@asynccontextmanager
async def guarded_stdio(stdin: Any, stdout: Any) -> AsyncIterator[Streams]:
    """`stdin` yields bytes lines (anyio.wrap_file(sys.stdin.buffer)); `stdout` takes text (one JSON per line)."""
    read_writer, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, write_reader = anyio.create_memory_object_stream[SessionMessage](0)
    lock = anyio.Lock()

    async def emit(line: str) -> None:
        async with lock:
            await stdout.write(line + "\n")
            await stdout.flush()

    async def reader() -> None:
        try:
            async with read_writer:
                async for raw in stdin:
                    line = raw.rstrip(b"\r\n") if isinstance(raw, bytes) else str(raw).rstrip("\r\n").encode()
                    if not line.strip():
                        continue
                    problem = check_body(line)
                    if problem is not None:  # answered here, as /mcp answers it (its HTTP status has no place here)
                        await emit(json.dumps(problem[1], ensure_ascii=True))
                        continue
                    try:
                        message = types.JSONRPCMessage.model_validate_json(line)
                    except Exception as exc:  # the SDK's own validation: its session answers the error
                        await read_writer.send(exc)
                        continue
                    await read_writer.send(SessionMessage(message))
        except anyio.ClosedResourceError:
            await anyio.lowlevel.checkpoint()

    async def writer() -> None:
        try:
            async with write_reader:
                async for session_message in write_reader:
                    await emit(session_message.message.model_dump_json(by_alias=True, exclude_none=True))
        except anyio.ClosedResourceError:
            await anyio.lowlevel.checkpoint()

    async with anyio.create_task_group() as tg:
        tg.start_soon(reader)
        tg.start_soon(writer)
        yield read_stream, write_stream
