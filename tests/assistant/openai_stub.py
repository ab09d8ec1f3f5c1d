"""A loopback stand-in for an OpenAI-compatible chat-completions API (DeepSeek, DashScope, vLLM ...): answers each
POST /v1/chat/completions with the next scripted reply and records the request. A reply is the frame's arguments
(a dict), sent back the way the request asked for it (a tool call when it sent `tools`, JSON content when it sent
a `response_format`), optionally with prose beside it; or a `Reply` with the raw content, a delay or an HTTP
status. Point ChatOpenAI at `url`; nothing leaves 127.0.0.1."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Reply:
    frame: dict[str, Any] | None = None  # the frame's arguments, as the request asked for them
    content: str | None = None  # prose beside the frame, or the whole reply when there is no frame
    delay_s: float = 0.0  # answer this late (a provider that times out)
    status: int = 200


class OpenAIStub:
    def __init__(self, replies: list[Reply | dict[str, Any]] | None = None) -> None:
        self.replies: list[Reply] = [r if isinstance(r, Reply) else Reply(frame=r) for r in replies or []]
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                stub._handle(self)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self._thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True)

    def start(self) -> OpenAIStub:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def script(self, *replies: Reply | dict[str, Any]) -> None:
        with self._lock:
            self.replies = [r if isinstance(r, Reply) else Reply(frame=r) for r in replies]
            self.requests.clear()

    def _next(self) -> Reply:
        with self._lock:
            return self.replies.pop(0) if self.replies else Reply(content="(no reply scripted)")

    def _handle(self, h: BaseHTTPRequestHandler) -> None:
        body = json.loads(h.rfile.read(int(h.headers.get("Content-Length") or 0)) or b"{}")
        with self._lock:
            self.requests.append(body)
        reply = self._next()
        if reply.delay_s:
            time.sleep(reply.delay_s)
        if reply.status != 200:
            self._send(h, reply.status, {"error": {"message": "scripted failure", "type": "server_error"}})
            return
        message: dict[str, Any] = {"role": "assistant", "content": reply.content}
        finish = "stop"
        if reply.frame is not None and body.get("tools"):
            name = body["tools"][0]["function"]["name"]
            message["tool_calls"] = [{"id": "call_1", "type": "function",
                                      "function": {"name": name, "arguments": json.dumps(reply.frame)}}]
            finish = "tool_calls"
        elif reply.frame is not None:
            message["content"] = json.dumps(reply.frame)
        self._send(h, 200, {"id": "chatcmpl-stub", "object": "chat.completion", "created": 0,
                            "model": body.get("model", "stub"),
                            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})

    @staticmethod
    def _send(h: BaseHTTPRequestHandler, status: int, data: dict[str, Any]) -> None:
        raw = json.dumps(data).encode()
        try:
            h.send_response(status)
            h.send_header("Content-Type", "application/json")
            h.send_header("Content-Length", str(len(raw)))
            h.end_headers()
            h.wfile.write(raw)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (its timeout)
            pass
