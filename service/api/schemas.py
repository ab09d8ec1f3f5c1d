"""Request and response bodies. The workload is the public flat schema (service.workload.Workload)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from service.api.ids import SESSION_ID_MAX, SESSION_ID_PATTERN
from service.planner.estimate import EstimateRequest
from service.workload import Workload

Lang = Literal["zh", "en"]


class ChatRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    message: str = Field(min_length=1, description="the user's question, Chinese or English")
    session_id: str | None = Field(
        default=None, max_length=SESSION_ID_MAX, pattern=SESSION_ID_PATTERN,
        description="continue this session; omit to start a new one",
    )


class RenameRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    title: str = Field(min_length=1, max_length=200)


class EstimateIn(Workload):
    """A workload (flat) plus the setup to size: GPU, GPU count and optimizer offload."""

    gpu: str = Field(min_length=1, description="GPU name, e.g. A100 or H800")
    gpus: int = Field(default=1, ge=1, le=4096)
    offload: Literal["none", "optimizer", "all"] = "none"

    def to_request(self) -> EstimateRequest:
        workload = Workload.model_validate(self.model_dump(exclude={"gpu", "gpus", "offload"}))
        return EstimateRequest(workload, self.gpu, self.gpus, self.offload)


class DocumentIn(BaseModel):
    """A plan (the POST /v1/plan result) or a workload to plan first; exactly one of the two."""

    model_config = ConfigDict(extra="forbid")

    plan: dict[str, Any] | None = Field(default=None, description="a POST /v1/plan result")
    workload: Workload | None = None
    lang: Lang = "zh"
    candidate_index: int = Field(default=0, ge=0, le=500, description="the configuration to use (0 = the pick)")


class RequestDocumentIn(DocumentIn):
    format: Literal["md", "docx"] = "md"
    applicant: dict[str, str] | None = Field(
        default=None, description="name, department, contact, approver, date, project, background (blank if absent)"
    )


class SearchOut(BaseModel):
    query: str
    lang: str = Field(description="the query's detected language")
    passages: list[dict[str, Any]]
    warnings: list[str] = Field(default_factory=list)


# OpenAI-compatible Chat Completions (the fields clients send; unknown ones are ignored)


class CompatMessage(BaseModel):
    model_config = ConfigDict(extra="allow")

    role: str
    content: str | list[dict[str, Any]] | None = None

    def text(self) -> str:
        if isinstance(self.content, str):
            return self.content
        if not self.content:
            return ""
        return "\n".join(str(p.get("text", "")) for p in self.content if p.get("type") == "text")


class StreamOptions(BaseModel):
    model_config = ConfigDict(extra="allow")

    include_usage: bool = False


class ChatCompletionRequest(BaseModel):
    model_config = ConfigDict(extra="allow")

    model: str = "gpu-advisor"
    messages: list[CompatMessage] = Field(min_length=1)
    stream: bool = False
    stream_options: StreamOptions | None = None
    user: str | None = Field(
        default=None,
        description="the session to continue (or send X-Session-Id): a session id is used as is, any other text "
        "(a name, an email) names a stable session of its own",
    )

    def last_user_text(self) -> str | None:
        for m in reversed(self.messages):
            if m.role == "user":
                return m.text()
        return None
