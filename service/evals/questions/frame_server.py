"""A stand-in OpenAI-compatible provider on 127.0.0.1 that serves stored frames: the LLM reader's call for a message
(in its conversation) is answered with the frame stored for it (service/evals/questions/frames.py), as a tool
call of the FrameDraft tool or as JSON content, whichever the request asked for. A message with no stored frame
gets an HTTP 404, so the turn falls back to the offline reader and is counted as such.

    with FrameServer(frames_by_prompt) as server:   # server.url: the base URL for GPU_ADVISOR_LLM_BASE_URL
        ...

Frames are looked up by the reader's own user prompt (service/reader/llm_reader.py `user_prompt`), built for each
message from the case's earlier turns; the line naming the previous question's type is left out of the key, since
it depends on how the previous turn was answered.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable, Mapping, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType

from service.reader.llm_reader import CONTEXT_TURNS, user_prompt
from service.reader.llm_schema import FrameDraft

_PREV_LINE = "(The previous question was answered as:"


def prompt_key(prompt: str) -> str:
    return "\n".join(line for line in prompt.splitlines() if not line.startswith(_PREV_LINE)).strip()


def keyed_frames(conversations: Iterable[tuple[Sequence[str], Sequence[FrameDraft]]]) -> dict[str, str]:
    """prompt key -> the frame's JSON, for each message of each conversation (its messages and their frames)."""
    out: dict[str, str] = {}
    for messages, frames in conversations:
        for i, (text, frame) in enumerate(zip(messages, frames, strict=False)):
            turns = list(messages[max(0, i - CONTEXT_TURNS):i])
            out[prompt_key(user_prompt(text, turns, None))] = frame.model_dump_json(exclude_defaults=True)
    return out


def _last_user_text(body: Mapping[str, object]) -> str:
    messages = body.get("messages")
    if not isinstance(messages, list):
        return ""
    for m in reversed(messages):
        if isinstance(m, dict) and m.get("role") == "user":
            content = m.get("content")
            if isinstance(content, list):  # content parts
                return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
            return str(content or "")
    return ""


class FrameServer:
    def __init__(self, frames: Mapping[str, str]) -> None:
        self.frames = dict(frames)
        self.served = 0
        self.missed = 0
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                server._handle(self)

            def log_message(self, *args: object) -> None:
                pass

        self._http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._http.server_address[1]}/v1"
        self._thread = threading.Thread(target=self._http.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    def __enter__(self) -> FrameServer:
        self._thread.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._http.shutdown()
        self._http.server_close()

    def _handle(self, h: BaseHTTPRequestHandler) -> None:
        try:
            body = json.loads(h.rfile.read(int(h.headers.get("Content-Length") or 0)) or b"{}")
        except ValueError:
            self._send(h, 400, {"error": {"message": "not JSON"}})
            return
        frame = self.frames.get(prompt_key(_last_user_text(body)))
        with self._lock:
            if frame is None:
                self.missed += 1
            else:
                self.served += 1
        if frame is None:
            self._send(h, 404, {"error": {"message": "no stored frame for this message", "type": "not_found"}})
            return
        message: dict[str, object] = {"role": "assistant", "content": None}
        tools = body.get("tools")
        if isinstance(tools, list) and tools:
            message["tool_calls"] = [{"id": "call_1", "type": "function",
                                      "function": {"name": tools[0]["function"]["name"], "arguments": frame}}]
        else:
            message["content"] = frame
        self._send(h, 200, {"id": "chatcmpl-frames", "object": "chat.completion", "created": 0,
                            "model": str(body.get("model", "stored-frames")),
                            "choices": [{"index": 0, "message": message,
                                         "finish_reason": "tool_calls" if tools else "stop"}],
                            "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}})

    @staticmethod
    def _send(h: BaseHTTPRequestHandler, status: int, data: Mapping[str, object]) -> None:
        raw = json.dumps(data, ensure_ascii=False).encode()
        try:
            h.send_response(status)
            h.send_header("Content-Type", "application/json")
            h.send_header("Content-Length", str(len(raw)))
            h.end_headers()
            h.wfile.write(raw)
        except (BrokenPipeError, ConnectionResetError):
            pass
