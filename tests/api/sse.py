"""Parse a text/event-stream body into (event, data) pairs: the tests read our streams the way a browser does."""

from __future__ import annotations

import json
from typing import Any


def parse_sse(body: str) -> list[tuple[str, Any]]:
    events: list[tuple[str, Any]] = []
    for block in body.replace("\r\n", "\n").split("\n\n"):
        name, data_lines = "message", []
        for line in block.split("\n"):
            if line.startswith(":") or not line:
                continue
            key, _, value = line.partition(":")
            value = value.removeprefix(" ")
            if key == "event":
                name = value
            elif key == "data":
                data_lines.append(value)
        if data_lines:
            raw = "\n".join(data_lines)
            events.append((name, raw if raw == "[DONE]" else json.loads(raw)))
    return events
