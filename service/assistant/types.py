"""The assistant's public shapes: one entry point for the CLI, the API, Slack and the evals."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Literal, Protocol

from pydantic import BaseModel, Field

Language = Literal["zh", "en"]


class Citation(BaseModel):
    id: str = Field(description="chunk id, e.g. knowledge/guide/03-gpu-specs-precision.zh.md#fp8")
    title: str
    source: str = Field(description="file or URL the passage comes from")
    url: str = Field(default="", description="where a person can read it (web route or external link)")


class AskResult(BaseModel):
    """The `ask --json` object; also the body of POST /v1/chat."""

    session_id: str
    answer_markdown: str
    language: Language
    workload: dict[str, Any] | None = Field(default=None, description="the public Workload schema, flat")
    recommendation: dict[str, Any] | None = Field(default=None, description="the plan result (plan --json)")
    citations: list[Citation] = Field(default_factory=list)
    backend: str = Field(description="offline | openai | offline (fallback: <reason>)")
    documents: dict[str, Any] = Field(default_factory=dict,
                                      description="request_document / launch_bundle when asked for")
    prose_check: list[str] = Field(default_factory=list,
                                   description="figures in the prose that the artifact does not contain")


class StreamEvent(BaseModel):
    """Server-sent event payloads: token text, a tool call or result, then the final AskResult."""

    type: Literal["token", "tool", "final", "error"]
    text: str = ""
    name: str = ""
    data: dict[str, Any] = Field(default_factory=dict)


class SessionInfo(BaseModel):
    session_id: str
    title: str
    created_at: str
    updated_at: str
    turns: int


class AssistantProtocol(Protocol):
    def ask(self, message: str, session_id: str | None = None, *, create: bool = False,
            lang: Language | None = None) -> AskResult: ...

    def stream(self, message: str, session_id: str | None = None, *, create: bool = False,
               lang: Language | None = None) -> Iterator[StreamEvent]: ...

    def has_session(self, session_id: str) -> bool: ...

    def list_sessions(self) -> list[SessionInfo]: ...

    def rename_session(self, session_id: str, title: str) -> SessionInfo: ...

    def delete_session(self, session_id: str) -> None: ...
