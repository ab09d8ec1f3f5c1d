"""Small stand-ins for the assistant and the retriever, implementing the protocols the API is built against."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field

from service.assistant.types import (
    AskResult,
    Citation,
    Language,
    SessionInfo,
    SessionMessage,
    SessionPage,
    StreamEvent,
)
from service.errors import AdvisorError
from service.retrieval.types import Passage

ANSWER_TOKENS = ["需要 ", "2×H100", "。"]


class FakeSessionNotFound(AdvisorError):
    code = "session_not_found"


@dataclass
class FakeAssistant:
    """Answers with a fixed text in fixed tokens; keeps sessions (with their owners) in memory; records what it was
    asked and with which keyword arguments (owner, history, request_id)."""

    tokens: list[str] = field(default_factory=lambda: list(ANSWER_TOKENS))
    fail_with: Exception | None = None  # raised by ask and by stream after the first token
    sessions: dict[str, SessionInfo] = field(default_factory=dict)
    owners: dict[str, str | None] = field(default_factory=dict)
    asked: list[tuple[str, str | None]] = field(default_factory=list)
    langs: list[str | None] = field(default_factory=list)  # the answer language each call asked for
    kwargs: list[dict[str, object]] = field(default_factory=list)

    def _visible(self, session_id: str, owner: str | None) -> bool:
        return session_id in self.sessions and (owner is None or self.owners.get(session_id) == owner)

    def _turn(self, message: str, session_id: str | None, create: bool = False, owner: str | None = None,
              **kwargs: object) -> str:
        if session_id is not None and not self._visible(session_id, owner) and \
                not (create and session_id not in self.sessions):
            raise FakeSessionNotFound(f"Unknown session '{session_id}'.")
        self.asked.append((message, session_id))
        self.kwargs.append({"owner": owner, **kwargs})
        sid = session_id or uuid.uuid4().hex
        old = self.sessions.get(sid)
        self.owners.setdefault(sid, owner)
        self.sessions[sid] = SessionInfo(
            session_id=sid, title=old.title if old else message[:40], created_at="2026-01-01T00:00:00+00:00",
            updated_at="2026-01-01T00:00:00+00:00", turns=(old.turns if old else 0) + 1,
        )
        return sid

    def _result(self, sid: str) -> AskResult:
        return AskResult(
            session_id=sid, answer_markdown="".join(self.tokens), language="zh", backend="fake",
            recommendation={"picks": {"tencent": "GN10Xp.20XLARGE320"}},
            citations=[Citation(id="guide/04-training-memory.zh.md#x", title="显存", source="guide/04.zh.md")],
        )

    def ask(self, message: str, session_id: str | None = None, *, create: bool = False,
            lang: Language | None = None, **kwargs: object) -> AskResult:
        if self.fail_with is not None:
            raise self.fail_with
        self.langs.append(lang)
        return self._result(self._turn(message, session_id, create, **kwargs))  # type: ignore[arg-type]

    def stream(self, message: str, session_id: str | None = None, *, create: bool = False,
               lang: Language | None = None, **kwargs: object) -> Iterator[StreamEvent]:
        self.langs.append(lang)
        sid = self._turn(message, session_id, create, **kwargs)  # type: ignore[arg-type]
        yield StreamEvent(type="tool", name="plan_training", data={"args": {"model": "Qwen2-7B"}})
        for n, tok in enumerate(self.tokens):
            if n == 1 and self.fail_with is not None:
                raise self.fail_with
            yield StreamEvent(type="token", text=tok)
        yield StreamEvent(type="final", data=self._result(sid).model_dump())

    def check_request_id(self, message: str, session_id: str | None = None, **kwargs: object) -> None:
        """The fake keeps no request ids: nothing to refuse (the real one: tests/api/test_idempotency.py)."""

    def has_session(self, session_id: str, owner: str | None = None) -> bool:
        return self._visible(session_id, owner)

    def list_sessions(self, owner: str | None = None) -> list[SessionInfo]:
        return [s for sid, s in self.sessions.items() if self._visible(sid, owner)]

    def session_messages(self, session_id: str, owner: str | None = None) -> list[SessionMessage]:
        if not self._visible(session_id, owner):
            raise FakeSessionNotFound(f"Unknown session '{session_id}'.")
        return []

    def session_page(self, session_id: str, owner: str | None = None, *, limit: int = 50,
                     before: int | None = None, detail: str = "compact") -> SessionPage:
        """The turns this fake answered in the session, as messages (a page of them, like the store's)."""
        if not self._visible(session_id, owner):
            raise FakeSessionNotFound(f"Unknown session '{session_id}'.")
        top = min(self.sessions[session_id].turns + 1, before or 2**62)
        numbers = list(range(max(1, top - limit), top))
        messages = [SessionMessage(role=role, content=f"turn {n}", turn=n, created_at="t")
                    for n in numbers for role in ("user", "assistant")]
        return SessionPage(messages=messages, next_before=numbers[0] if numbers and numbers[0] > 1 else None)

    def rename_session(self, session_id: str, title: str, owner: str | None = None) -> SessionInfo:
        info = self.sessions[session_id].model_copy(update={"title": title})
        self.sessions[session_id] = info
        return info

    def delete_session(self, session_id: str, owner: str | None = None) -> None:
        del self.sessions[session_id]


@dataclass
class FakeRetriever:
    """Returns one passage per call, echoing the filters it was given."""

    warnings: list[str] = field(default_factory=list)
    calls: list[dict[str, object]] = field(default_factory=list)

    def search(
        self, query: str, k: int = 5, lang: str | None = None, cloud: str | None = None, topic: str | None = None,
        mode: str = "hybrid",
    ) -> list[Passage]:
        self.calls.append({"query": query, "k": k, "lang": lang, "cloud": cloud, "topic": topic, "mode": mode})
        return [Passage(id="guide/03-gpu-specs-precision.zh.md#fp8", source="guide/03-gpu-specs-precision.zh.md",
                        title="精度", section="FP8", text="A10 不支持 FP8。", score=0.03, dense_rank=1,
                        bm25_rank=2, lang="zh", ref="guide/03-gpu-specs-precision.zh.md#fp8")][:k]
