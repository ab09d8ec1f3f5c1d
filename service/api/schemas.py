"""Request and response bodies. The workload is the public flat schema (service.workload.Workload)."""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    StringConstraints,
    Tag,
    field_validator,
    model_validator,
)

from service.edge.ids import SESSION_ID_MAX, SESSION_ID_PATTERN
from service.planner.contract import request_kind
from service.planner.estimate import EstimateRequest
from service.serving_workload import ServingWorkload
from service.workload import Workload

Lang = Literal["zh", "en"]
# Some character that str.strip() keeps: the same test as check_message's "the message is empty"
NON_BLANK = r"[^\s\x1c-\x1f\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]"
TITLE_MAX = 80  # the assistant's stored titles
ShortText = Annotated[str, StringConstraints(max_length=1000)]
FieldName = Annotated[str, StringConstraints(min_length=1, max_length=64)]


NUMBER_FIELDS = ("params_b", "quant_bits", "samples", "avg_tokens_per_sample", "tokens", "dataset_gb", "epochs",
                 "seq_len", "budget_cny", "deadline_hours", "gpu_count", "micro_batch", "lora_rank", "zero_stage")


def json_number(value: object) -> object:
    """A number must come as a JSON number: not "1_000" or "7" (Python would read those), not true/false."""
    if isinstance(value, str | bool):
        raise ValueError(f"send a JSON number, not {json.dumps(value)[:40]}")
    return value


class WorkloadIn(Workload):
    """The workload as the API takes it: numbers as JSON numbers, booleans as JSON booleans."""

    @field_validator(*NUMBER_FIELDS, mode="before")
    @classmethod
    def _numbers(cls, value: object) -> object:
        return json_number(value)

    @field_validator("grad_ckpt", "kbit_upcast", mode="before")
    @classmethod
    def _boolean(cls, value: object) -> object:
        if value is not None and not isinstance(value, bool):
            raise ValueError("send true or false")
        return value


SERVING_NUMBER_FIELDS = ("params_b", "gpus", "mem_fraction", "max_model_len", "input_tokens", "output_tokens",
                         "concurrency", "request_rate", "ttft_ms", "tpot_ms", "budget_cny")


class ServingWorkloadIn(ServingWorkload):
    """The serving workload as the API takes it: numbers as JSON numbers."""

    @field_validator(*SERVING_NUMBER_FIELDS, mode="before")
    @classmethod
    def _numbers(cls, value: object) -> object:
        return json_number(value)


class ServingKindIn(ServingWorkloadIn):
    """A serving workload sent to POST /v1/plan: `kind: "serving"` is required there (a body without `kind` is a
    training workload). POST /v1/plan/serving takes the same fields with `kind` optional."""

    kind: Literal["serving"] = Field(description="the plan contract's discriminator: 'serving'")


# POST /v1/plan's body: a training workload (kind "training" or absent) or a serving one (kind "serving")
PlanRequestIn = Annotated[Annotated[WorkloadIn, Tag("training")] | Annotated[ServingKindIn, Tag("serving")],
                          Discriminator(request_kind)]


class ErrorDetail(BaseModel):
    code: str = Field(description="a stable machine name, e.g. invalid_input, unauthorized, payload_too_large")
    message: str = Field(description="what is wrong, naming the field; quotes at most ~200 characters of input")
    fix: str = Field(description="what to send instead")


class ErrorBody(BaseModel):
    """Every error the API returns, whatever the status."""

    error: ErrorDetail


ERROR_STATUSES: dict[int, str] = {
    400: "bad request: an unknown GPU or model name, or a request the engine cannot use",
    401: "missing or wrong API key (when the server sets GPU_ADVISOR_API_KEY)",
    404: "unknown session, model or page",
    408: "the request body did not arrive in time",
    413: "the body, or the message, is over its limit",
    422: "a field is missing, of the wrong type, out of range, or breaks a rule between fields",
    500: "internal error (logged)",
    503: "a component (catalog, index, assistant) is still loading or unavailable",
    507: "storage full: the data directory's disk (or the database's) has no space; the turn was not stored",
}


def error_responses(*statuses: int, by_ref: bool = False) -> dict[int | str, dict[str, Any]]:
    """OpenAPI `responses` for these error statuses (all of ERROR_STATUSES when none are named). `by_ref` for
    routes whose success is not JSON (FastAPI would list the error body under their media type)."""
    if by_ref:
        json_body = {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}}}
        return {status: {"description": ERROR_STATUSES[status], "content": json_body} for status in statuses}
    return {status: {"model": ErrorBody, "description": ERROR_STATUSES[status]}
            for status in (statuses or tuple(ERROR_STATUSES))}


class ChatRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    message: str = Field(min_length=1, pattern=NON_BLANK, description="the user's question, Chinese or English; "
                         "at most the server's max_message_chars (4000 by default) characters, 413 beyond")
    session_id: str | None = Field(
        default=None, max_length=SESSION_ID_MAX, pattern=SESSION_ID_PATTERN,
        description="continue this session; omit to start a new one",
    )
    workload: WorkloadIn | None = Field(
        default=None, description="a structured training workload (the page's form): planned as it is, nothing "
        "read from `message`, which is what the chat shows for the turn")
    detail: Literal["compact", "full"] | None = Field(
        default=None, description="compact (the default): a plan answer with its chosen candidates; full: the whole "
        "plan (the same as the `detail` query parameter)")


class RenameRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    title: str = Field(min_length=1, max_length=TITLE_MAX, pattern=NON_BLANK)


class EstimateIn(WorkloadIn):
    """A workload (flat) plus the setup to size: GPU, GPU count and optimizer offload."""

    gpu: str = Field(min_length=1, max_length=128, description="GPU name, e.g. A100 or H800")
    gpus: int = Field(default=1, ge=1, le=4096)

    @field_validator("gpus", mode="before")
    @classmethod
    def _gpus_number(cls, value: object) -> object:
        return json_number(value)
    offload: Literal["none", "optimizer", "all"] = "none"

    def to_request(self) -> EstimateRequest:
        workload = Workload.model_validate(self.model_dump(exclude={"gpu", "gpus", "offload"}))
        return EstimateRequest(workload, self.gpu, self.gpus, self.offload)


class PlanIn(BaseModel):
    """A POST /v1/plan result, sent back unchanged; only its workload is read (the plan is made again)."""

    model_config = ConfigDict(extra="allow")

    workload: Workload


class DocumentIn(BaseModel):
    """A plan (the POST /v1/plan result) or a workload to plan first; exactly one of the two."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={"oneOf": [{"required": ["plan"], "properties": {"plan": {"type": "object"}}},
                                     {"required": ["workload"], "properties": {"workload": {"type": "object"}}}]},
    )

    plan: PlanIn | None = Field(default=None, description="a POST /v1/plan result")
    workload: WorkloadIn | None = None
    lang: Lang = "zh"
    candidate_index: int = Field(default=0, ge=0, le=500, description="the configuration to use (0 = the pick)")

    @field_validator("candidate_index", mode="before")
    @classmethod
    def _index_number(cls, value: object) -> object:
        return json_number(value)

    @model_validator(mode="after")
    def _one_source(self) -> DocumentIn:
        if (self.plan is None) == (self.workload is None):
            raise ValueError("send exactly one of 'plan' (a POST /v1/plan result) and 'workload'")
        return self


class RequestDocumentIn(DocumentIn):
    format: Literal["md", "docx"] = "md"
    applicant: dict[FieldName, ShortText] | None = Field(
        default=None, max_length=20, description="name, department, contact, approver, date, project, background (blank if absent)"
    )


class SearchOut(BaseModel):
    query: str
    lang: str = Field(description="the query's detected language")
    passages: list[dict[str, Any]]
    warnings: list[str] = Field(default_factory=list)


# OpenAI-compatible Chat Completions (the fields clients send; unknown ones are ignored)


class CompatMessage(BaseModel):
    model_config = ConfigDict(extra="allow")

    role: str = Field(max_length=32)
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

    model: str = Field(default="gpu-advisor", max_length=128)
    messages: list[CompatMessage] = Field(
        min_length=1, max_length=1000, description="the conversation; it must hold a user message",
        json_schema_extra={"contains": {"required": ["role"], "properties": {"role": {"const": "user"}}}},
    )
    stream: bool = False
    stream_options: StreamOptions | None = None
    max_tokens: int | None = Field(default=None, ge=1, le=1_000_000, description="shortens the answer to about "
                                   "this many tokens, and the reply says so (finish_reason: length)")
    max_completion_tokens: int | None = Field(default=None, ge=1, le=1_000_000, description="as max_tokens")
    user: str | None = Field(
        default=None, max_length=1000,
        description="the session to continue (or send X-Session-Id): a session id is used as is, any other text "
        "(a name, an email) names a stable session of its own",
    )
