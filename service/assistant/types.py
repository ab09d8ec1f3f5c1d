"""The assistant's public shapes: one entry point for the CLI, the API, Slack and the evals."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Literal, Protocol

from pydantic import BaseModel, Field

from service.questions.registry import TYPES, AnyAnswer
from service.workload import Workload

Language = Literal["zh", "en"]


class Citation(BaseModel):
    id: str = Field(description="chunk id, e.g. knowledge/guide/03-gpu-specs-precision.zh.md#fp8")
    title: str
    source: str = Field(description="file or URL the passage comes from")
    url: str = Field(default="", description="where a person can read it (web route or external link)")


Intent = Literal[TYPES]  # type: ignore[valid-type]  # the question types of service/questions/registry.py


class AskResult(BaseModel):
    """The `ask --json` object; also the body of POST /v1/chat."""

    session_id: str
    answer_markdown: str
    language: Language
    intent: Intent = Field(default="knowledge", description="the question type the answer answers")
    answer: AnyAnswer | None = Field(
        default=None, description="the typed answer, discriminated by `kind` (one per question type, plus `fact` for "
        "a catalog fact and `clarify` for the one question asked back): what the fields below alias")
    feasibility: dict[str, Any] | None = Field(
        default=None, description="alias of `answer` (until the next release): feasibility / min_gpus: {gpu, gpu_count, fits, per_gpu_gib, gpu_memory_gib, "
                                  "gpus_needed, fits_with: [...], rent: [...]}")
    comparison: list[dict[str, Any]] | None = Field(
        default=None, description="compare: [{option, hours, cost_cny, fits, priced, instance_type, ...}]")
    winner: str | None = Field(default=None, description="compare: the option that wins")
    savings: dict[str, Any] | None = Field(
        default=None, description="savings: {before, after, delta_cny, delta_hours, saving_cny, changed}")
    serving: dict[str, Any] | None = Field(
        default=None, description="serving: {gpu, gpus_per_replica, replicas, total_gpus, starts, max_concurrency, "
                                  "kv_capacity_tokens, output_tokens_per_s, ttft_ms, tpot_ms, cost_cny_per_month, "
                                  "cny_per_million_tokens, instance}")
    serving_plan: dict[str, Any] | None = Field(
        default=None, description="serving: what the card draws: {plan: the ServingPlan (POST /v1/plan/serving) with "
                                  "at most 3 options per cloud and its rejected list left out, inference: the pinned "
                                  "GPU's POST /v1/inference object or null, n_candidates, n_rejected}")
    capacity: dict[str, Any] | None = Field(
        default=None, description="capacity: {target, gpu, gpu_count, max_params_b | max_seq_len | max_micro_batch, "
                                  "per_gpu_gib, rows}")
    diagnose: dict[str, Any] | None = Field(
        default=None, description="diagnose: {observation, expected, per_gpu_gib, estimated_hours_per_epoch, ratio, "
                                  "causes, fixes}")
    fact: dict[str, Any] | None = Field(
        default=None, description="knowledge answered from the catalog: {fact, answer (yes/no/value), rows, ...}")
    reading: dict[str, Any] | None = Field(
        default=None, description="how the question was read: {type, confidence (sure|unsure), alternative, scores}")
    slots: dict[str, Any] = Field(default_factory=dict,
                                  description="what the words state: model, gpu, gpu_count, method, seq_len, ...")
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


class HistoryTurn(BaseModel):
    """One earlier exchange of a conversation: what a stateless caller passes as `history` (e.g. rebuilt from an
    OpenAI `messages` array), and what the session store keeps per turn."""

    user: str = Field(description="the user's message")
    assistant: str = Field(default="", description="the answer text")
    workload: dict[str, Any] | None = Field(
        default=None, description="the Workload fields the answer was planned from (AskResult.workload will do); "
        "without it, follow-ups are read from the earlier user messages")
    intent: str | None = Field(default=None, description="the question type the answer answered (AskResult.intent)")


class SessionMessage(BaseModel):
    """GET /v1/sessions/{id}/messages: one message of a stored conversation, oldest first."""

    role: Literal["user", "assistant"]
    content: str
    turn: int = Field(description="1-based turn number; a user message and its answer share it")
    created_at: str
    stopped: bool = Field(default=False, description="the answer's stream was dropped before it ended")
    workload: dict[str, Any] | None = None
    recommendation: dict[str, Any] | None = Field(default=None, description="the turn's structured plan")
    serving_plan: dict[str, Any] | None = Field(default=None, description="a serving turn's card (AskResult's)")
    citations: list[Citation] = Field(default_factory=list)


class SessionPage(BaseModel):
    """One page of a stored conversation: its messages, oldest first, and the `before` of the next (older) page."""

    messages: list[SessionMessage]
    next_before: int | None = Field(default=None, description="pass as `before` for the older turns; null: none")


Detail = Literal["compact", "full"]


class AssistantProtocol(Protocol):
    """`owner` None (CLI, Slack, evals) sees every session; a string (the API's caller) only its own.
    `history` replaces the stored turns as the conversation so far; `request_id` answers a retry once;
    `lang` answers in that language whatever the message's (a client's system message asked for it);
    `detail` "compact" answers with the plan's chosen candidates (as the turn is stored), "full" with all of them."""

    def ask(self, message: str, session_id: str | None = None, *, create: bool = False,
            history: list[HistoryTurn] | None = None, owner: str | None = None,
            request_id: str | None = None, lang: Language | None = None,
            workload: Workload | None = None, detail: Detail = "full") -> AskResult: ...

    def stream(self, message: str, session_id: str | None = None, *, create: bool = False,
               history: list[HistoryTurn] | None = None, owner: str | None = None,
               request_id: str | None = None, lang: Language | None = None,
               workload: Workload | None = None, detail: Detail = "full") -> Iterator[StreamEvent]: ...

    def has_session(self, session_id: str, owner: str | None = None) -> bool: ...

    def check_request_id(self, message: str, session_id: str | None = None, *, owner: str | None = None,
                         request_id: str | None = None, workload: Workload | None = None) -> None: ...

    def list_sessions(self, owner: str | None = None) -> list[SessionInfo]: ...

    def session_messages(self, session_id: str, owner: str | None = None) -> list[SessionMessage]: ...

    def session_page(self, session_id: str, owner: str | None = None, *, limit: int = 50,
                     before: int | None = None, detail: Detail = "compact") -> SessionPage: ...

    def rename_session(self, session_id: str, title: str, owner: str | None = None) -> SessionInfo: ...

    def delete_session(self, session_id: str, owner: str | None = None) -> None: ...

    def rate_turn(self, session_id: str, turn: int, rating: Literal["up", "down"], *, rater: str = "",
                  source: str = "") -> None: ...
