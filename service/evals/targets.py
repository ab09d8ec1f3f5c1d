"""What the eval asks: the assistant in this process, or a running API over HTTP (POST {base_url}/v1/chat).

Either way a scenario is one session: each turn after the first carries the session id the first returned, and
the final turn's AskResult (as JSON) is what gets scored.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from service.assistant.types import AssistantProtocol
from service.errors import DependencyUnavailableError


class Target(Protocol):
    label: str

    def ask(self, message: str, session_id: str | None) -> dict[str, Any]: ...

    def close(self) -> None: ...


@dataclass(frozen=True)
class Conversation:
    final: dict[str, Any] | None  # the last turn's AskResult as JSON; None when a turn failed
    latencies_s: tuple[float, ...]
    error: str = ""
    backends: tuple[str, ...] = field(default=())


class AssistantTarget:
    """The assistant object itself (the offline model, or an LLM when the settings say so)."""

    def __init__(self, assistant: AssistantProtocol, label: str = "in-process") -> None:
        self.assistant = assistant
        self.label = label

    def ask(self, message: str, session_id: str | None) -> dict[str, Any]:
        return self.assistant.ask(message, session_id).model_dump(mode="json")

    def close(self) -> None:
        return None


class HttpTarget:
    """A running API: POST /v1/chat with {message, session_id, detail: full}; the body is the same AskResult JSON."""

    def __init__(self, base_url: str, api_key: str = "", timeout_s: float = 180.0, client: Any | None = None) -> None:
        import httpx

        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.base_url = base_url.rstrip("/")
        self.label = self.base_url
        self.client = client or httpx.Client(base_url=self.base_url, headers=headers, timeout=timeout_s)

    def ask(self, message: str, session_id: str | None) -> dict[str, Any]:
        import httpx

        body: dict[str, Any] = {"message": message, "detail": "full"}  # the whole plan, as in process
        if session_id is not None:
            body["session_id"] = session_id
        try:
            r = self.client.post("/v1/chat", json=body)
        except httpx.HTTPError as exc:
            raise DependencyUnavailableError(f"{self.base_url}/v1/chat is unreachable ({exc}).",
                                             "Start the API (`gpu-advisor serve`) or fix --base-url.") from exc
        if r.status_code != 200:
            raise RuntimeError(f"HTTP {r.status_code} from /v1/chat: {r.text[:300]}")
        data: dict[str, Any] = r.json()
        return data

    def close(self) -> None:
        self.client.close()


def converse(target: Target, turns: list[str], clock: Callable[[], float] = time.perf_counter) -> Conversation:
    """Ask every turn in one session; stop at the first failing turn (its error is the scenario's error)."""
    sid: str | None = None
    latencies: list[float] = []
    backends: list[str] = []
    result: dict[str, Any] | None = None
    for n, message in enumerate(turns, start=1):
        start = clock()
        try:
            result = target.ask(message, sid)
        except DependencyUnavailableError:
            raise  # the target is down: no point asking the other scenarios
        except Exception as exc:  # one scenario's failure is scored, not fatal to the run
            latencies.append(clock() - start)
            return Conversation(None, tuple(latencies), f"turn {n}: {type(exc).__name__}: {exc}", tuple(backends))
        latencies.append(clock() - start)
        sid = str(result.get("session_id") or "") or None
        backends.append(str(result.get("backend", "")))
    return Conversation(result, tuple(latencies), "", tuple(backends))
