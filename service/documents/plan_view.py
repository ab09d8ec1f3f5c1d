"""A typed, read-only view of the training plan: the one boundary the document builders read.

`read_plan` takes the plan contract (TrainingPlan) or its JSON (`plan_to_dict`'s dict), validates the JSON against
the contract, and gives the builders this view of it. Fields mirror the dict's keys; values are kept as given (no
rounding, no recomputation).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from service.documents import safe
from service.documents.errors import DocumentInputError
from service.labels import mfu_basis, public_links, public_source, strip_internal
from service.planner.training_types import TrainingPlan

Lang = Literal["zh", "en"]
PlanInput = TrainingPlan | Mapping[str, Any]  # the training plan contract, or its JSON
CLOUD_ORDER = ("tencent", "jdcloud")


class _View(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class PriceView(_View):
    price_cny: float
    unit: str
    region: str = ""
    source: str
    as_of: str | None = None  # the source's date; None: the page states none
    captured: str | None = None  # when an undated page was read
    confidence: str
    note: str = ""
    note_zh: str = ""  # the catalog's Chinese note, for Chinese documents
    stale: bool = False
    content_as_of: str | None = None  # the content's age (a ~2021 list page): freshness counts from it
    content_basis: str | None = None
    newer: dict[str, object] | None = None  # a newer dated price of the same instance, shown beside it

    def date(self, lang: str) -> str:
        """The content's age and when it was read; older than price_max_age_days, that it may have changed."""
        from service.labels import newer_price_text, price_when

        return price_when(self, lang) + newer_price_text(self, lang)


class CostView(_View):
    billing: str
    total_cny: float
    monthly_cny: float
    months: int = 0
    price: PriceView


class StrategyView(_View):
    label: str
    method: str
    quant_bits: int | None = None
    zero_stage: int = 0
    offload: str = "none"
    grad_ckpt: bool = True
    precision: str = "bf16"
    micro_batch: int = 1
    seq_len: int
    lora_rank: int | None = None
    gpus_per_node: int = 1
    nodes: int = 1
    deepspeed: bool = False
    # Training settings as sized (plans made before issue 22 lack them: the defaults then in force)
    sharding: str | None = None
    optimizer: str = "adamw"
    optimizer_in_backward: bool = False
    activation_checkpointing: str | None = None
    attention: str | None = None
    loss: str = "full-logits"
    lora_targets: str | None = None
    lora_modules_to_save: list[str] | None = None
    kbit_upcast: bool | None = None


class MemoryView(_View):
    per_gpu_gib: float
    weights_gib: float
    gradients_gib: float
    optimizer_gib: float
    activations_gib: float
    overhead_gib: float

    def terms(self) -> list[tuple[str, float]]:
        return [("weights", self.weights_gib), ("gradients", self.gradients_gib),
                ("optimizer", self.optimizer_gib), ("activations", self.activations_gib),
                ("overhead", self.overhead_gib)]


class NoteView(_View):
    code: str
    severity: str = "warning"
    message: str
    message_zh: str = ""

    def text(self, lang: Lang) -> str:
        return self.message_zh if lang == "zh" and self.message_zh else self.message


class CandidateView(_View):
    cloud: str
    instance_type: str
    family: str = ""
    gpu: str
    gpu_name: str
    gpu_count: float
    nodes: int = 1
    vcpus: int | None = None  # None: not published
    memory_gib: float | None = None  # None: not published
    rdma: bool = False
    sale_status: str = ""
    instance_source: str = ""
    instance_confidence: str = ""
    strategy: StrategyView
    memory: MemoryView
    host_ram_needed_gib: float = 0.0
    gpu_memory_gib: float
    training_hours: float
    throughput_tokens_per_s: float
    mfu: float
    mfu_source: str
    scaling_efficiency: float = 1.0
    cost_cny: dict[str, CostView] = Field(default_factory=dict)
    billing: str
    total_cost_cny: float
    monthly_cost_cny: float
    price: PriceView
    quote_link: str = ""
    within_budget: bool | None = None
    meets_deadline: bool | None = None
    warnings: list[NoteView] = Field(default_factory=list)


class JobView(_View):
    method: str
    quant_bits: int | None = None
    seq_len: int
    tokens_per_epoch: float
    epochs: float
    tokens_total: float
    samples_per_epoch: float


class ModelView(_View):
    id: str
    name: str
    family: str = ""
    kind: str = "decoder"
    params_b: float
    active_params_b: float | None = None


class WorkloadView(_View):
    model: str | None = None
    method: str = "lora"
    stage: str | None = None
    samples: int | None = None
    avg_tokens_per_sample: int | None = None
    dataset_gb: float | None = None
    epochs: float | None = None
    budget_cny: float | None = None
    budget_period: str = "month"
    deadline_hours: float | None = None
    billing: str | None = None
    objective: str = "cheapest"
    clouds: list[str] = Field(default_factory=list)


class RejectedView(_View):
    instance_type: str
    reason: str


class PickReasonView(_View):
    """Why a cloud's pick is neither its cheapest nor its fastest option (the plan's pick_reasons)."""

    instance_type: str
    message: str
    message_zh: str
    cheapest: str = ""
    fastest: str = ""
    versus: list[str] = Field(default_factory=list)

    def text(self, lang: str) -> str:
        return self.message_zh if lang == "zh" else self.message


class PlanView(_View):
    workload: WorkloadView
    model: ModelView
    job: JobView
    candidates: list[CandidateView]
    n_candidates: int = 0
    picks: dict[str, str] = Field(default_factory=dict)
    alternatives: dict[str, str] = Field(default_factory=dict)
    pick_reasons: dict[str, PickReasonView] = Field(default_factory=dict)
    rejected: list[RejectedView] = Field(default_factory=list)
    assumptions: list[str] = Field(default_factory=list)
    notes: list[NoteView] = Field(default_factory=list)
    infeasible: str | None = None

    def candidate(self, instance_type: str, cloud: str | None = None) -> CandidateView | None:
        for c in self.candidates:
            if c.instance_type == instance_type and (cloud is None or c.cloud == cloud):
                return c
        return None

    def cloud_picks(self) -> list[CandidateView]:
        """Each cloud's pick, Tencent first, then JD, then any other cloud in the plan."""
        order = [*[c for c in CLOUD_ORDER if c in self.picks], *[c for c in self.picks if c not in CLOUD_ORDER]]
        found = (self.candidate(self.picks[cloud], cloud) for cloud in order)
        return [c for c in found if c is not None]

    def why_not(self, chosen: CandidateView, other: CandidateView | None = None) -> PickReasonView | None:
        """Why `chosen` (its cloud's pick) goes before `other` (default: any option the reason names), or None.
        Under another option only a reason that names it: one about the cheaper option is not pasted under the
        faster one."""
        why = self.pick_reasons.get(chosen.cloud)
        if why is None or why.instance_type != chosen.instance_type:
            return None
        if other is not None and other.instance_type not in why.versus:
            return None
        return why

    def alternative(self, kind: str) -> CandidateView | None:
        name = self.alternatives.get(kind)
        return self.candidate(name) if name else None

    def chosen(self, index: int = 0) -> CandidateView:
        if not self.candidates:
            reason = self.infeasible or "the plan has no feasible candidate"
            raise DocumentInputError(f"No configuration to document: {reason}",
                                     "Relax the workload (method, GPU filter, budget) and plan again.")
        if not 0 <= index < len(self.candidates):
            raise DocumentInputError(f"candidate_index {index} is out of range.",
                                     f"Use 0..{len(self.candidates) - 1} (0 is the recommended pick).")
        return self.candidates[index]


def _public_price(price: Any, lang: str) -> Any:
    """A price as a reader sees it: its source as public addresses, its note without working references, in the
    reader's language (a Chinese reader gets the Chinese note when the data has one, else none)."""
    if not isinstance(price, dict):
        return price
    conf = str(price.get("confidence", ""))
    note = price.get("note_zh", "") if lang == "zh" else price.get("note", "")
    return {**price, "source": public_source(str(price.get("source", "")), conf, lang),
            "note": strip_internal(str(note or ""))}


def _public_candidate(c: Any, lang: str) -> Any:
    if not isinstance(c, dict):
        return c
    out = dict(c)
    if isinstance(c.get("strategy"), dict) and lang == "zh":
        out["strategy"] = {**c["strategy"], "label": c["strategy"].get("label_zh") or c["strategy"].get("label")}
    if "price" in c:
        out["price"] = _public_price(c["price"], lang)
    if isinstance(c.get("cost_cny"), dict):
        out["cost_cny"] = {k: {**v, "price": _public_price(v.get("price"), lang)} if isinstance(v, dict) else v
                           for k, v in c["cost_cny"].items()}
    if "mfu_source" in c:
        out["mfu_source"] = mfu_basis(str(c["mfu_source"]), lang)
    if "instance_source" in c:
        out["instance_source"] = "; ".join(public_links(str(c["instance_source"])))
    return out


def _localized(plan: Mapping[str, Any], lang: str) -> Mapping[str, Any]:
    """The plan as a reader in `lang` sees it: Chinese strategy labels and assumptions for Chinese, and every source
    a public address, every note free of our working references (scrape ids, research-note sections)."""
    out = dict(plan)
    out["candidates"] = [_public_candidate(c, lang) for c in plan.get("candidates", [])]
    if lang == "zh" and plan.get("assumptions_zh"):
        out["assumptions"] = plan["assumptions_zh"]
    out["assumptions"] = [strip_internal(str(a)) for a in out.get("assumptions", [])]
    return out


def _priced_only(plan: Mapping[str, Any]) -> Mapping[str, Any]:
    """Documents cost a configuration, so price-on-request candidates (no public price) leave the candidate list;
    a note names them, so they are not dropped silently."""
    cands = plan.get("candidates", [])
    on_request = [c for c in cands if isinstance(c, dict) and c.get("price_on_request")]
    if not on_request:
        return plan
    gone = {c.get("instance_type") for c in on_request}
    out = dict(plan)
    out["candidates"] = [c for c in cands if c not in on_request]
    out["picks"] = {k: v for k, v in (plan.get("picks") or {}).items() if v not in gone}
    out["alternatives"] = {k: v for k, v in (plan.get("alternatives") or {}).items() if v not in gone}
    names = ", ".join(str(n) for n in sorted(gone, key=str))
    out["notes"] = [*plan.get("notes", []), {
        "code": "price_on_request", "severity": "info",
        "message": f"Price on request (no public price), not costed here: {names}. Ask the cloud's sales for a "
                   "quote and plan again with the quote as a price sheet.",
        "message_zh": f"以下实例价格需询价（无公开价格），本文档未计算其费用：{names}。请向云厂商销售询价，"
                      "并将报价作为价格表重新规划。"}]
    if not out["candidates"]:
        out["infeasible"] = (f"only price-on-request options ({names}): get a quote from sales and plan again "
                             "with it as a price sheet")
    return out


def _contract_json(plan: PlanInput) -> dict[str, Any]:
    """The training plan as its contract's JSON: a serving plan, or a dict that is not a TrainingPlan, raises."""
    if isinstance(plan, TrainingPlan):
        return plan.model_dump(mode="json")
    if plan.get("kind") == "serving":
        raise DocumentInputError("This is a serving plan (kind 'serving'); the request document and the launch bundle "
                                 "here are for training.",
                                 "For serving, build the serving bundle: service.documents.serving_bundle, or "
                                 "`gpu-advisor plan-serving --bundle DIR`.")
    return TrainingPlan.model_validate(plan).model_dump(mode="json")


def read_plan(plan: PlanInput, lang: str = "en") -> PlanView:
    """Validate a training plan (the contract or its JSON); a malformed one raises DocumentInputError listing the
    bad fields."""
    try:
        view = PlanView.model_validate(_localized(_priced_only(_contract_json(plan)), lang))
    except ValidationError as exc:
        where = "; ".join(f"{'.'.join(str(x) for x in e['loc'])}: {e['msg']}" for e in exc.errors()[:5])
        raise DocumentInputError(f"The plan does not have plan_to_dict's shape ({where}).",
                                 "Pass the training plan (TrainingPlan) or its JSON, the dict from "
                                 "service.planner.report.plan_to_dict(plan(...)).") from exc
    # The model's id and name land in scripts, YAML and Markdown: a name that is not a plausible model id (a user's
    # unknown model, named as typed) is refused here, before any document is written (service/documents/safe.py).
    safe.model_id(view.model.id, "model")
    safe.display_name(view.model.name, "model")
    return view
