"""A loopback stand-in for the Slack Web API: records every call and answers ok JSON, like bolt-python's own
mock_web_api_server. Point a WebClient at it with base_url; nothing leaves 127.0.0.1."""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

BOT_USER_ID = "UBOT"
BOT_ID = "BBOT"


@dataclass
class Call:
    method: str  # "chat.postMessage", "upload/F1", "response/1"
    args: dict[str, Any]
    raw: bytes


Rejecter = Callable[[Call], str | None]  # returns a Slack error code to answer {"ok": false, "error": ...}


class SlackStub:
    def __init__(self) -> None:
        self.calls: list[Call] = []
        self.rejecters: list[Rejecter] = []
        self.locales: dict[str, str] = {}  # users.info: user id -> Slack locale ("zh-CN", "en-US")
        self._cond = threading.Condition()
        self._ts = itertools.count(1)
        self._files = itertools.count(1)
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                stub._handle(self)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/"
        self._thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True)

    # -- lifecycle ------------------------------------------------------------------------------
    def start(self) -> SlackStub:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    # -- queries ---------------------------------------------------------------------------------
    def to(self, method: str) -> list[dict[str, Any]]:
        with self._cond:
            return [c.args for c in self.calls if c.method == method]

    def methods(self) -> list[str]:
        with self._cond:
            return [c.method for c in self.calls if c.method != "auth.test"]

    def streamed(self) -> str:
        """The Markdown streamed so far: every markdown_text chunk of chat.startStream/appendStream/stopStream."""
        with self._cond:
            return "".join(chunk.get("text", "") for c in self.calls
                           if c.method in ("chat.startStream", "chat.appendStream", "chat.stopStream")
                           for chunk in c.args.get("chunks") or [] if chunk.get("type") == "markdown_text")

    def wait_for(self, method: str, count: int = 1, timeout_s: float = 10.0) -> list[dict[str, Any]]:
        deadline = time.monotonic() + timeout_s
        with self._cond:
            while len([c for c in self.calls if c.method == method]) < count:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"{count} × {method} not seen; calls: {[c.method for c in self.calls]}")
                self._cond.wait(left)
        return self.to(method)

    def reject(self, rejecter: Rejecter) -> None:
        self.rejecters.append(rejecter)

    # -- the server side -------------------------------------------------------------------------
    def _handle(self, h: BaseHTTPRequestHandler) -> None:
        parts = urlsplit(h.path)
        raw = h.rfile.read(int(h.headers.get("Content-Length") or 0))
        args: dict[str, Any] = dict(parse_qsl(parts.query))
        ctype = h.headers.get("Content-Type") or ""
        if parts.path.strip("/").startswith("upload/"):  # a file's bytes (a zip is not text): kept raw
            ctype = ""
        if "json" in ctype:
            args.update(json.loads(raw or b"{}"))
        elif "form-urlencoded" in ctype:
            args.update(parse_qsl(raw.decode("utf-8")))
        for key in ("blocks", "files"):  # form-encoded JSON fields
            if isinstance(args.get(key), str):
                args[key] = json.loads(args[key])
        call = Call(parts.path.strip("/"), args, raw)
        error = next((e for r in self.rejecters if (e := r(call))), None)
        reply = {"ok": False, "error": error} if error else self._reply(call)
        body = b"OK" if call.method.startswith("upload/") else json.dumps(reply).encode()
        with self._cond:
            self.calls.append(call)
            self._cond.notify_all()
        h.send_response(200)
        h.send_header("Content-Type", "application/json" if body != b"OK" else "text/plain")
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        h.wfile.write(body)

    def _reply(self, call: Call) -> dict[str, Any]:
        m, a = call.method, call.args
        if m == "auth.test":
            return {"ok": True, "url": "https://t.slack.com/", "team": "T", "user": "gpu-advisor", "team_id": "T1",
                    "user_id": BOT_USER_ID, "bot_id": BOT_ID}
        if m == "chat.postMessage":
            return {"ok": True, "channel": a.get("channel"), "ts": f"2000000000.{next(self._ts):06d}"}
        if m == "chat.update":
            return {"ok": True, "channel": a.get("channel"), "ts": a.get("ts")}
        if m == "chat.startStream":
            return {"ok": True, "channel": a.get("channel"), "ts": f"2000000000.{next(self._ts):06d}"}
        if m in ("chat.appendStream", "chat.stopStream"):
            return {"ok": True, "channel": a.get("channel"), "ts": a.get("ts")}
        if m == "users.info":
            return {"ok": True, "user": {"id": a.get("user"), "locale": self.locales.get(str(a.get("user")), "")}}
        if m == "files.getUploadURLExternal":
            fid = f"F{next(self._files)}"
            return {"ok": True, "file_id": fid, "upload_url": f"{self.url}upload/{fid}"}
        if m == "files.completeUploadExternal":
            return {"ok": True, "files": [{"id": f["id"], "title": f.get("title")} for f in a.get("files", [])]}
        return {"ok": True}
