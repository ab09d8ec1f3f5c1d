"""Row models for the knowledge files. One schema across clouds; every row carries its source and date.

Files validated here: knowledge/catalog/gpus.yaml, knowledge/catalog/instances.csv,
knowledge/catalog/prices.csv and knowledge/models.yaml. Units live in field names.
"""

from __future__ import annotations

from datetime import date
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

Cloud = Literal["tencent", "jdcloud"]
Billing = Literal["on_demand", "monthly", "spot"]
PriceConfidence = Literal["official", "third_party", "estimate", "user"]  # user: the price the user gave this turn
FactConfidence = Literal["official", "third_party", "inferred", "unverified"]
SaleStatus = Literal["main", "on_sale", "allowlist", "invite_only", "limited", "sold_out", "legacy", "unknown"]
# NVIDIA generations; "blackwell" covers datacenter (B200, CC 10.0) and GeForce (RTX 50, CC 12.0). "ascend" is Huawei's
# Da Vinci NPU (910B/910C), "cdna3" AMD's Instinct MI300 generation: neither runs CUDA.
Arch = Literal["kepler", "pascal", "volta", "turing", "ampere", "ada", "hopper", "blackwell", "ascend", "cdna3"]
Vendor = Literal["nvidia", "huawei", "amd"]
# What a non-NVIDIA accelerator runs instead of CUDA, and what its GPU-to-GPU link is called.
SOFTWARE_STACK: dict[str, str] = {"nvidia": "CUDA", "huawei": "CANN (torch_npu)", "amd": "ROCm"}
LINK_NAME: dict[str, str] = {"nvidia": "NVLink", "huawei": "HCCS", "amd": "Infinity Fabric"}


class _Row(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class GpuSpec(_Row):
    """One GPU SKU (form factor matters: A100 80GB SXM4 and PCIe differ in bandwidth and NVLink). Also the
    accelerators no cloud here sells (consumer cards, Huawei Ascend, AMD Instinct): they are sized like any GPU
    and have no instance rows."""

    id: str = Field(description="canonical id, e.g. A100-80G-SXM")
    name: str = Field(description="display name, e.g. NVIDIA A100 80GB SXM4")
    aliases: list[str] = Field(default_factory=list, description="names as people type them")
    vendor: Vendor = "nvidia"
    arch: Arch
    form_factor: Literal["sxm", "pcie", "pcie_lp", "consumer", "oam"] = Field(
        description="oam: an OCP accelerator module or similar mezzanine board (AMD Instinct, Huawei Ascend modules)")
    memory_gib: float = Field(gt=0)
    memory_type: str
    mem_bw_gb_s: float = Field(gt=0)
    dense_16bit_tflops: float = Field(gt=0, description="dense tensor BF16, or FP16 where the GPU has no BF16")
    fp32_tflops: float | None = None
    fp8_tflops: float | None = Field(default=None, description="dense FP8 tensor; null when unsupported")
    supports_bf16: bool
    supports_fp8: bool
    supports_flash_attn2: bool = Field(description="FlashAttention-2 needs Ampere or newer")
    nvlink_gb_s: float = Field(ge=0, description="GPU-to-GPU link, total bidirectional per GPU; 0 when none. NVLink on "
                               "NVIDIA, HCCS on Huawei Ascend, Infinity Fabric on AMD (see link_name)")
    pcie_gen: int = Field(ge=3, le=6)
    tdp_w: float = Field(gt=0)
    compute_capability: str | None = Field(default=None, description="NVIDIA only; null for other vendors")
    min_cuda: str | None = Field(default=None, description="first CUDA toolkit with native code for this compute "
                                 "capability; NVIDIA only, null for other vendors (they do not run CUDA)")
    max_cuda: str | None = Field(default=None, description="last CUDA major line that still supports it")
    # Which form factor to assume when a user types an ambiguous name ("A100 80G"): the one the clouds sell.
    default_for: list[str] = Field(default_factory=list, description="ambiguous names that resolve to this SKU")
    confidence: FactConfidence
    notes: str = ""
    source: str
    as_of: date

    @model_validator(mode="after")
    def _fp8_consistent(self) -> GpuSpec:
        if self.supports_fp8 != (self.fp8_tflops is not None):
            raise ValueError(f"{self.id}: supports_fp8 and fp8_tflops disagree")
        cuda = (self.compute_capability, self.min_cuda)
        if self.vendor == "nvidia" and None in cuda:
            raise ValueError(f"{self.id}: an NVIDIA GPU needs compute_capability and min_cuda")
        if self.vendor != "nvidia" and (cuda != (None, None) or self.max_cuda is not None):
            raise ValueError(f"{self.id}: a {self.vendor} accelerator has no CUDA compute capability or CUDA range")
        return self

    @property
    def link_name(self) -> str:
        """What the GPU-to-GPU link is called: NVLink, HCCS (Ascend) or Infinity Fabric (AMD)."""
        return LINK_NAME[self.vendor]

    @property
    def software_stack(self) -> str:
        """CUDA, or what the accelerator runs instead (CANN on Ascend, ROCm on AMD)."""
        return SOFTWARE_STACK[self.vendor]


class InstanceRow(_Row):
    """One instance type as a cloud sells it. Never an invented name: each row cites its source."""

    cloud: Cloud
    family: str
    instance_type: str
    gpu: str = Field(description="GpuSpec.id")
    gpu_count: float = Field(gt=0, description="GPUs per instance; a fraction for vGPU slices (0.25 = 1/4 card)")
    gpu_memory_gib: float = Field(gt=0, description="GPU memory visible per GPU (or per slice)")
    vcpus: int | None = Field(default=None, gt=0, description="None: not published (a family known only from "
                              "third-party sightings shows it as unknown, never a guess)")
    memory_gib: float | None = Field(default=None, gt=0, description="host RAM, GiB; None: not published")
    network_gbps: float | None = None
    rdma: bool = False
    local_disk: str = ""
    cpu_model: str = ""
    regions: str = Field(default="", description="semicolon-separated regions or zones as the source lists them")
    sale_status: SaleStatus
    source: str = Field(description="a public URL or repository path@commit (knowledge/sources.md lists each once)")
    as_of: date
    confidence: FactConfidence
    note: str = Field(default="", description="evidence and derivations, in English")
    note_zh: str = Field(default="", description="the same note in Chinese")
    stale: bool = Field(default=False, description="a sync no longer saw this row; kept, not trusted")

    @property
    def is_slice(self) -> bool:
        return self.gpu_count < 1


class FamilyRow(_Row):
    """An instance family a cloud's own documents name, with what is known of it: the families with sized rows in
    instances.csv and those known by name only (Tencent's TKE node models list PNV5, PNV5i, GC49 and GC49d with no
    GPU or sizes). An unknown field stays empty; it is never guessed."""

    cloud: Cloud
    family: str
    gpu: str = Field(default="", description="GpuSpec.id where a source states it; empty: not published")
    sale_status: SaleStatus = "unknown"
    source: str = Field(description="one public URL: the document that names the family")
    as_of: date
    confidence: FactConfidence = Field(description="official: the cloud's own document names the family (its GPU "
                                       "may still be unknown)")
    note: str = Field(description="what is known and what is not, in English")
    note_zh: str = Field(description="the same in Chinese")


# Dates that stand in for "the page has no date": never a real price date (`gpu-advisor catalog validate` rejects
# them; an undated page leaves `as_of` empty and says when it was captured).
STAND_IN_DATES = frozenset({date(2020, 1, 1), date(1970, 1, 1), date(2000, 1, 1), date(1900, 1, 1)})


def _honest_dates(row: str, as_of: date | None, captured: date | None) -> None:
    if as_of is None and captured is None:
        raise ValueError(f"{row}: give as_of (the source's own date) or captured (when an undated page was read)")
    if as_of in STAND_IN_DATES:
        raise ValueError(f"{row}: as_of {as_of} is a stand-in date; leave as_of empty for an undated page and give "
                         "captured (the date it was read)")


# What dates a price's content (its age, from which freshness counts), weakest last: the source's own date; the
# commit that last changed the source file in the cloud's documentation repository; the newest family the page
# lists (an undated page that omits a family launched on a known date predates it); a dated capture of the page by
# someone (a third party's row, never an official one); an estimate's anchor (the dated price it derives from).
ContentBasis = Literal["stated", "commit", "newest_family", "capture", "anchor"]
APPROX_BASES: frozenset[str] = frozenset({"commit", "newest_family"})  # "about 2021": a year, never a day


class PriceRow(_Row):
    instance_type: str
    billing: Billing
    price_cny: float = Field(gt=0, allow_inf_nan=False,
                             description="the price; the upper bound where the source gives a range")
    unit: Literal["hour", "month"]
    region: str = ""
    source: str
    as_of: date | None = Field(default=None, description="the date the source states; empty when it states none")
    captured: date | None = Field(default=None, description="when an undated source was read (its commit here)")
    confidence: PriceConfidence
    note: str = ""
    note_zh: str = Field(default="", description="the note in Chinese, for Chinese answers")
    price_low_cny: float | None = Field(default=None, gt=0, allow_inf_nan=False,
                                        description="lower bound of a published or estimated range")
    promo: bool = Field(default=False, description="a promotional price (官网优惠价), not the list price")
    on_request: bool = Field(default=False, description="no public price: sold through sales (价格需询价); the "
                             "figures are a dated market reference, shown as an estimate range, never as the price")
    stale: bool = Field(default=False, description="a sync no longer saw this price; kept, not trusted")
    content_as_of: date | None = Field(
        default=None, description="the content's age: the newest date the price is shown to have held (an undated "
        "page's, from its evidence; a capture's day; an estimate's anchor's). Freshness counts from it; empty: "
        "as_of, else captured")
    content_basis: ContentBasis | None = Field(default=None, description="what dates the content (see ContentBasis)")
    content_evidence: str = Field(default="", description="the evidence, in English: the commit and its date, the "
                                  "family the page omits and its launch, the capture")
    anchor: str = Field(default="", description="estimate: the dated price it derives from: a row of this catalog "
                        "('GT4.4XLARGE96 on_demand') or a dated price elsewhere ('Aliyun ecs.gn8is.2xlarge ¥14.42/h, "
                        "2026-09-15'); its date is the estimate's")

    @model_validator(mode="after")
    def _unit_matches_billing(self) -> PriceRow:
        expected = "month" if self.billing == "monthly" else "hour"
        if self.unit != expected:
            raise ValueError(f"{self.instance_type}: billing {self.billing} needs unit {expected}")
        if self.price_low_cny is not None and self.price_low_cny > self.price_cny:
            raise ValueError(f"{self.instance_type}: price_low_cny is above price_cny")
        if self.on_request and self.confidence != "estimate":
            raise ValueError(f"{self.instance_type}: an on_request row carries an estimate, not a price")
        _honest_dates(f"{self.instance_type} {self.billing}", self.as_of, self.captured)
        if (self.content_as_of is None) != (self.content_basis is None):
            raise ValueError(f"{self.instance_type} {self.billing}: content_as_of and content_basis go together "
                             "(the content's age and what dates it)")
        if self.content_basis in APPROX_BASES and not self.content_evidence.strip():
            raise ValueError(f"{self.instance_type} {self.billing}: a content age from a {self.content_basis} needs "
                             "content_evidence (the commit, or the family the page omits and its launch)")
        return self

    @property
    def dated(self) -> date:
        """The date freshness counts from: the content's age, else the source's own date, else when an undated page
        was read."""
        out = self.content_as_of or self.as_of or self.captured
        assert out is not None  # the validator requires one
        return out

    @property
    def content_approx(self) -> bool:
        """The content's age is known to about a year (a commit or the page's families), not to the day."""
        return self.content_basis in APPROX_BASES


class BillingRule(_Row):
    """How a family's monthly (包月) list price relates to its on-demand (按量) hourly price, with its source.

    monthly = ratio x hourly, ratio in [low, high]: 288 for the older Tencent CVM families and JD, 480 for GT4/GN10Xp/
    GI3X, 720/1.4 to 720 for bare metal and HCC (on-demand unit price 1.0-1.4 x the monthly unit price at 720 h)."""

    cloud: Cloud
    family: str
    monthly_per_hourly_low: float = Field(gt=0)
    monthly_per_hourly_high: float = Field(gt=0)
    source: str
    as_of: date | None = Field(default=None, description="the date the source states; empty when it states none")
    captured: date | None = Field(default=None, description="when an undated source was read")
    confidence: FactConfidence = Field(description="official: read from the cloud's own price pairs or notice")
    note: str = ""
    note_zh: str = ""

    @model_validator(mode="after")
    def _ordered(self) -> BillingRule:
        if self.monthly_per_hourly_low > self.monthly_per_hourly_high:
            raise ValueError(f"{self.family}: monthly_per_hourly_low is above monthly_per_hourly_high")
        _honest_dates(f"billing rule {self.cloud} {self.family}", self.as_of, self.captured)
        return self

    def holds(self, hourly: float, monthly: float, tolerance: float = 0.015) -> bool:
        ratio = monthly / hourly
        return self.monthly_per_hourly_low * (1 - tolerance) <= ratio <= self.monthly_per_hourly_high * (1 + tolerance)


class MoeSpec(_Row):
    num_experts: int = Field(gt=0)
    top_k: int = Field(gt=0)
    moe_intermediate_size: int = Field(gt=0)
    shared_experts: int = 0
    first_k_dense: int = Field(default=0, description="leading layers that stay dense")
    shared_expert_intermediate_size: int | None = Field(
        default=None, description="Qwen2-MoE: one shared expert of this width (instead of moe_intermediate_size)")
    layer_step: int = Field(default=1, ge=1, description="MoE on every k-th layer only, layer i when (i + 1) % k "
                            "== 0, the others dense (Llama-4 Maverick interleave_moe_layer_step 2, Qwen-MoE "
                            "decoder_sparse_step)")
    dense_layers: list[int] = Field(default_factory=list, description="further dense layers, 0-based (Qwen-MoE "
                                    "mlp_only_layers)")

    def is_sparse(self, layer: int) -> bool:
        """Whether 0-based `layer` holds the experts (else the dense MLP of ModelSpec.intermediate_size)."""
        return (layer >= self.first_k_dense and (layer + 1) % self.layer_step == 0
                and layer not in self.dense_layers)

    def sparse_layers(self, num_layers: int) -> int:
        """How many of `num_layers` layers hold the experts."""
        return sum(1 for i in range(num_layers) if self.is_sparse(i))


class MlaSpec(_Row):
    """DeepSeek multi-head latent attention projection sizes; DeepSeek-V3.2 / GLM-5 add the DSA indexer."""

    q_lora_rank: int
    kv_lora_rank: int
    qk_nope_head_dim: int
    qk_rope_head_dim: int
    v_head_dim: int
    index_n_heads: int = Field(default=0, ge=0, description="DSA lightning indexer heads (index_n_heads); 0: none")
    index_head_dim: int = Field(default=0, ge=0, description="DSA indexer key width: one more cached key per token "
                                "and layer")


class LinearAttnSpec(_Row):
    """Linear-attention layers: a fixed-size state per sequence instead of a per-token KV cache (Qwen3-Next and
    Qwen3.5 gated DeltaNet, MiniMax-01 / M1 lightning attention). The other layers use ModelSpec's attention."""

    kind: Literal["gated_deltanet", "lightning"]
    layers: int = Field(gt=0, description="how many of num_layers are linear (Qwen3-Next: full attention every 4th "
                        "layer, 36 of 48; MiniMax-Text-01: softmax every 8th, 70 of 80)")
    num_key_heads: int = Field(gt=0)
    num_value_heads: int = Field(gt=0)
    key_head_dim: int = Field(gt=0)
    value_head_dim: int = Field(gt=0)
    conv_kernel: int = Field(default=0, ge=0, description="gated DeltaNet's causal conv over q, k, v "
                             "(linear_conv_kernel_dim); 0: none")


class ModelSpec(_Row):
    """A model architecture. Transformers give dimensions; other kinds give params and FLOPs directly."""

    id: str
    name: str
    family: str = Field(description="qwen2, llama3, bert, resnet, ...; picks the chat template")
    kind: Literal["decoder", "encoder", "vision_transformer", "cnn", "diffusion"]
    aliases: list[str] = Field(default_factory=list)
    num_layers: int | None = None
    hidden_size: int | None = None
    num_heads: int | None = None
    num_kv_heads: int | None = None
    head_dim: int | None = Field(default=None, description="only when not hidden_size / num_heads")
    intermediate_size: int | None = None
    vocab_size: int | None = None
    max_position_embeddings: int | None = None
    tie_word_embeddings: bool = False
    qkv_bias: bool = False
    qk_norm: bool = False
    mlp: Literal["swiglu", "gelu"] = "swiglu"
    moe: MoeSpec | None = None
    mla: MlaSpec | None = None
    linear_attn: LinearAttnSpec | None = None
    attn_output_gate: bool = Field(default=False, description="the query projection also yields a sigmoid gate "
                                   "on the attention output (Qwen3-Next, Qwen3.5 attn_output_gate)")
    # Serving (KV cache): optional, absent for every model that attends over the whole context on every layer.
    sliding_window: int | None = Field(default=None, gt=0, description="tokens a sliding-window layer attends "
                                       "to (config.json sliding_window, where the model uses it)")
    sliding_window_layers: int | None = Field(default=None, ge=0, description="layers that use the window (Gemma-2 "
                                              "every other, Gemma-3 five in six); None = all, when the window is set")
    served_context_len: int | None = Field(default=None, gt=0, description="max_model_len a serving engine takes "
                                           "by default where it differs from max_position_embeddings: the instruct "
                                           "config's, or vLLM's product with a linear RoPE factor")
    vision_params_b: float | None = Field(default=None, gt=0, description="vision-language: the vision tower's "
                                          "parameters, billions (loaded by a serving engine next to the LLM)")
    # The vision encoder's shape, for the profile run a serving engine makes at start-up with the largest image
    # the processor allows (vLLM: "Encoder cache will be initialized with a budget of N tokens, and profiled with
    # 1 image items of the maximum feature size"): config.json vision_config and preprocessor_config.json.
    vision_hidden_size: int | None = Field(default=None, gt=0, description="vision encoder width")
    vision_intermediate_size: int | None = Field(default=None, gt=0, description="vision encoder MLP width")
    vision_max_patches: int | None = Field(default=None, gt=0, description="encoder patches of the largest image "
                                           "(or all tiles / slices of one image) the processor allows")
    vision_tokens_per_item: int | None = Field(default=None, gt=0, description="language-model tokens that "
                                               "largest image becomes (the encoder cache holds them)")
    released_dtype: Literal["bf16", "fp8", "int4", "mxfp4"] = Field(
        default="bf16", description="the dtype the official weights ship in (DeepSeek-V3/R1: fp8, Kimi-K2-Thinking: "
        "int4): what a serving engine loads unless told")
    params_published_b: float = Field(gt=0, description="published parameter count, billions")
    active_params_b: float | None = Field(default=None, description="MoE: parameters active per token")
    # Non-transformer models: compute per sample and the input the figure refers to.
    gflops_per_sample: float | None = Field(default=None, description="forward GFLOPs per sample")
    sample_desc: str = ""
    template: str = Field(default="", description="LLaMA-Factory chat template name")
    source: str
    as_of: date

    @field_validator("aliases")
    @classmethod
    def _non_empty_aliases(cls, v: list[str]) -> list[str]:
        if any(not a.strip() for a in v):
            raise ValueError("empty alias")
        return v

    @model_validator(mode="after")
    def _dims_for_transformers(self) -> ModelSpec:
        if self.kind in ("decoder", "encoder", "vision_transformer"):
            missing = [
                f
                for f in ("num_layers", "hidden_size", "num_heads", "intermediate_size")
                if getattr(self, f) is None
            ]
            if missing:
                raise ValueError(f"{self.id}: transformer needs {', '.join(missing)}")
        elif self.gflops_per_sample is None:
            raise ValueError(f"{self.id}: {self.kind} model needs gflops_per_sample")
        if self.sliding_window_layers is not None and self.sliding_window is None:
            raise ValueError(f"{self.id}: sliding_window_layers needs sliding_window")
        if self.sliding_window_layers is not None and self.sliding_window_layers > (self.num_layers or 0):
            raise ValueError(f"{self.id}: sliding_window_layers is above num_layers")
        linear = self.linear_attn.layers if self.linear_attn is not None else 0
        window = self.sliding_window_layers or 0
        if linear and linear + window > (self.num_layers or 0):
            raise ValueError(f"{self.id}: linear_attn.layers and sliding_window_layers add up to more than num_layers")
        if self.moe is not None and self.moe.sparse_layers(self.num_layers or 0) == 0 and self.kind == "decoder":
            raise ValueError(f"{self.id}: moe is set but no layer holds the experts (first_k_dense / layer_step)")
        return self
