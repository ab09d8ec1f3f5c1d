"""The question frame: what a post describes, as a person reads it (shared/DESIGN.md "Questions").

A post describes one or more **setups** (what they run or plan: "TP4 works, TP8 OOMs" is two), an **outcome** of a
setup when they ran it (OOM at start-up, 70 GB in use, 9 h an epoch), **what they ask** (will it fit, how many,
why, which is cheaper) and **constraints** (budget, deadline, clouds, billing, the serving load). Both readers (the
offline one in service/reader and the LLM one) produce this frame; the question type is derived from it in one
table (`question_type`), and the spine's routes read their arguments from it.

Values are in schema units (GiB as the user wrote GB, hours, tokens, yuan). A field left None was not said;
`unknowns` names what a right answer needs and the post does not say, with the assumption the answer states.
"""

from __future__ import annotations

from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

from service.workload import AttentionName, LossName, OptimizerName, PrecisionName

Task = Literal["train", "serve", "both", "none"]
TASKS: tuple[str, ...] = ("train", "serve", "both", "none")
# What the user asks, whatever the task. `plan`: what to rent (the configuration, its time and cost);
# `fits`: does it run / start; `count`: how many cards; `memory`: how much memory it takes; `time`, `cost`: how
# long / how much for a job; `price`: a catalog price; `concurrency`, `throughput`, `latency`: serving figures;
# `cause`, `fix`: why an observation happened / how to fix it; `winner`: which of the options; `savings`: what a
# change saves; `capacity`: the largest model / context / batch some hardware takes; `fact`: a catalog or
# product fact; `howto`: a how-to or a concept; `host`: the CPU cores, RAM, data disk or checkpoint size a job
# needs; `greeting`: a greeting or thanks, nothing asked; `other`: none of ours (out of scope).
Asked = Literal["plan", "fits", "count", "memory", "time", "cost", "price", "concurrency", "throughput",
                "latency", "cause", "fix", "winner", "savings", "capacity", "fact", "howto", "host", "greeting",
                "other"]
ASKED: tuple[str, ...] = ("plan", "fits", "count", "memory", "time", "cost", "price", "concurrency", "throughput",
                          "latency", "cause", "fix", "winner", "savings", "capacity", "fact", "howto", "host",
                          "greeting", "other")
Status = Literal["worked", "oom", "error", "slow", "unknown"]
Role = Literal["asked", "worked", "failed", "baseline", "alternative"]
# What they saw: oom (GPU out of memory), hours (time per epoch or run), memory (memory in use), util (GPU
# utilisation), host_oom (CPU RAM ran out), slow (tokens/s, TTFT or steps too slow), error (it would not start or
# failed otherwise), scaling (more GPUs or nodes were no faster, or slower)
ObservationKind = Literal["oom", "hours", "memory", "util", "host_oom", "slow", "error", "scaling"]
# The catalog or product fact asked (with asked = fact or price): a GPU's feature, a price, the billing rules, the
# regions, what a family / instance is, which instances carry a GPU, the cheapest instance meeting a need, monthly
# against on-demand (the break-even hours), spot instances, two GPUs or families side by side, what a cloud sells
Fact = Literal["supports_fp8", "supports_bf16", "supports_flash_attn", "rdma", "nvlink", "price", "billing",
               "regions", "bandwidth", "tflops", "cuda", "memory", "sells", "family", "instances", "cheapest",
               "break_even", "spot", "side_by_side"]
FACTS: tuple[str, ...] = get_args(Fact)
Target = Literal["model_size", "context", "batch"]
# What the options of a comparison differ in (asked = winner or savings)
Compared = Literal["gpu", "cloud", "method", "billing", "engine", "framework", "instance", "model", "precision",
                   "count"]
# How training spreads over the cards: single card, data-parallel replicas (DDP / torchrun / accelerate without
# sharding), DeepSpeed ZeRO, FSDP, Megatron (TP/PP), or Hugging Face device_map (layers split across cards)
Strategy = Literal["single", "ddp", "zero", "fsdp", "megatron", "device_map"]
Interconnect = Literal["nvlink", "pcie", "rdma", "ethernet"]
Arrival = Literal["burst", "poisson"]
Need = Literal["rdma", "fp8", "nvlink"]


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ModelRef(_Frozen):
    """A model as named: the catalog id when it resolves, else the name as written with the size it states."""

    name: str
    id: str | None = None  # the catalog id (knowledge/models.yaml), None when unknown
    params_b: float | None = None  # the size the name or the text states
    weights: str | None = None  # the release's weight dtype from its suffix (-AWQ, -GPTQ-Int4, -FP8, -GGUF)
    estimated: bool = False  # unknown to the catalog: sized by its stated size with a generic architecture


class Hardware(_Frozen):
    gpu: str | None = None  # catalog GPU id (with its memory variant), or the name as written
    gpu_memory_gb: float | None = None  # a card's memory said with it or instead of it ("24G显存")
    gpu_count: int | None = None  # cards in all
    gpus_per_node: int | None = None
    nodes: int | None = None
    cloud: str | None = None
    instance: str | None = None
    host_ram_gb: float | None = None  # the machine's CPU RAM ("128G内存")
    vcpus: int | None = None
    interconnect: Interconnect | None = None  # between the cards or nodes, as said ("10GbE", "没有NVLink", "IB")
    network_gbps: float | None = None  # the link between nodes ("10G网络" = 10)


class Knobs(_Frozen):
    """The engine and its flags, training and serving alike."""

    engine: str | None = None  # vllm | sglang | trtllm | lmdeploy | ollama | llamacpp | tgi | mindie | hf
    framework: str | None = None  # llamafactory | deepspeed | fsdp | megatron | torchtune | swift | unsloth ...
    tp: int | None = None
    pp: int | None = None
    ep: int | None = None
    max_model_len: int | None = None
    gpu_memory_utilization: float | None = None
    zero_stage: int | None = None
    offload: bool | None = None  # optimizer / parameters offloaded to CPU or NVMe (ZeRO-Offload, cpu-offload-gb)
    seq_len: int | None = None
    micro_batch: int | None = None
    grad_accum: int | None = None
    checkpointing: bool | None = None
    precision: PrecisionName | None = None  # amp-bf16 | pure-bf16 | fp16 | fp8 (training)
    optimizer: OptimizerName | None = None
    attention: AttentionName | None = None
    loss: LossName | None = None
    strategy: Strategy | None = None
    weights: str | None = None  # serving weight dtype: bf16 | fp16 | fp8 | int8 | int4
    kv_dtype: str | None = None
    lora_rank: int | None = None
    quant_bits: int | None = None  # QLoRA's base-weight bits
    max_num_seqs: int | None = None  # serving scheduler limits
    max_num_batched_tokens: int | None = None
    num_generations: int | None = None  # RL (GRPO/PPO): completions per prompt
    completion_len: int | None = None  # RL: the longest completion, tokens
    max_pixels: int | None = None  # vision: the image budget per image, pixels
    image_slices: int | None = None  # vision: tiles per image (max_num / max_dynamic_patch)
    video_frames: int | None = None


class Outcome(_Frozen):
    """What happened when they ran the setup, with the figures they saw."""

    status: Status = "unknown"
    kind: ObservationKind | None = None
    where: Literal["startup", "load", "train", "inference"] | None = None
    memory_gb: float | None = None  # memory they saw in use (per card, or the host's for host_oom)
    hours: float | None = None
    tokens_per_s: float | None = None
    util_pct: float | None = None
    ttft_ms: float | None = None
    step_s: float | None = None  # seconds per training step / iteration
    # A pasted CUDA OOM error's figures: "Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.65 GiB of
    # which 1.2 GiB is free. Process 1234 has 22.4 GiB memory in use ... this process has 20.1 GiB"
    allocate_gb: float | None = None
    card_gb: float | None = None
    free_gb: float | None = None
    process_gb: float | None = None  # this process's memory in use
    other_gb: float | None = None  # other processes' memory on the same card

    @property
    def seen_running(self) -> bool:
        """They saw it run: it worked, a speed or TTFT was measured, or it ran out of memory mid-run."""
        return (self.status == "worked" or self.where == "inference" or self.tokens_per_s is not None
                or self.ttft_ms is not None)


class Setup(_Frozen):
    role: Role = "asked"
    models: tuple[ModelRef, ...] = ()
    method: str | None = None  # full | lora | qlora | freeze | pretrain
    objective: str | None = None  # sft | dpo | orpo | kto | ppo | grpo | simpo | rm
    knobs: Knobs = Field(default_factory=Knobs)
    hardware: Hardware = Field(default_factory=Hardware)
    outcome: Outcome | None = None

    @property
    def model(self) -> ModelRef | None:
        return self.models[0] if self.models else None


class Load(_Frozen):
    concurrency: int | None = None
    request_rate: float | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    ttft_ms: float | None = None
    tpot_ms: float | None = None
    arrival: Arrival | None = None  # burst: all requests at once; poisson: arriving at request_rate
    scale: float | None = None  # a change to the previous question's load: '并发翻倍呢' = 2, 'half the traffic' = 0.5

    @property
    def stated(self) -> bool:
        return any(v is not None for v in self.model_dump().values())


class Data(_Frozen):
    samples: int | None = None
    tokens: float | None = None
    avg_tokens_per_sample: int | None = None
    dataset_gb: float | None = None
    epochs: float | None = None
    avg_chars_per_sample: int | None = None  # a sample's length said in characters ("每条约800字")


class Constraints(_Frozen):
    budget_cny: float | None = None
    budget_period: Literal["month", "total"] | None = None
    deadline_hours: float | None = None
    clouds: tuple[str, ...] = ()
    billing: str | None = None
    objective: str | None = None  # cheapest | fastest | balanced
    gpu_include: tuple[str, ...] = ()
    gpu_exclude: tuple[str, ...] = ()
    user_price_cny_per_gpu_hour: float | None = None  # "每卡每小时只要8元": the user's own price
    usage_hours_per_month: float | None = None  # "每月只用100小时": how many hours a month they run
    needs: tuple[Need, ...] = ()  # instance features asked for ("要RDMA", "支持FP8的")


class Ambiguity(_Frozen):
    """A span with two readings ('24GB': the card or the data) that the question's needs decide."""

    span: str
    readings: tuple[str, ...]
    chosen: str | None = None


class Frame(_Frozen):
    task: Task = "none"
    asked: Asked = "other"
    # The message continues the last question (it changes some of its fields: '那两张呢', 'and on JD Cloud?');
    # False: it asks a new question, read on its own from defaults
    continues: bool = False
    setups: tuple[Setup, ...] = ()
    asked_setup: int = 0  # which setup the question is about
    data: Data = Field(default_factory=Data)
    load: Load = Field(default_factory=Load)
    constraints: Constraints = Field(default_factory=Constraints)
    unknowns: tuple[str, ...] = ()
    ambiguities: tuple[Ambiguity, ...] = ()
    documents: tuple[str, ...] = ()  # request_document, launch_bundle
    fact: Fact | None = None  # the catalog/product fact asked, when one is
    target: Target | None = None  # capacity: model_size | context | batch
    compared: Compared | None = None  # what the options of a comparison differ in
    options: tuple[str, ...] = ()  # the options compared, as the catalog names them (GPU ids, clouds, methods ...)
    names: tuple[str, ...] = ()  # catalog instance types or families the message names ("GT4", "HCCPNV4h")
    region: str | None = None  # a region or city named ("广州", "ap-beijing")
    other_clouds: tuple[str, ...] = ()  # clouds outside ours that the message names (阿里云, AWS)
    query: str = ""  # the words to search the guide with (a how-to's question as asked)
    language: Literal["zh", "en"] = "zh"
    notes: tuple[str, ...] = ()  # recognised but not usable, said in the answer

    @property
    def setup(self) -> Setup:
        """The setup the question is about (an empty one when the post names none)."""
        return self.setups[self.asked_setup] if self.setups else Setup()

    @property
    def observation(self) -> Outcome | None:
        """The outcome of the asked setup, or of any setup the post reports (what a diagnosis explains)."""
        for s in (self.setup, *self.setups):
            if s.outcome is not None and s.outcome.kind is not None:
                return s.outcome
        return None


def asked_observation(frame: Frame) -> Outcome | None:
    """What the user saw of the setup the question is about: its own outcome, or (one setup, or none marked as
    the change) the outcome the post reports. A measured baseline beside an untried alternative is not it."""
    own = frame.setup.outcome
    if own is not None and own.kind is not None:
        return own
    if frame.setup.role == "alternative" or any(s.role == "alternative" for s in frame.setups):
        return None
    return frame.observation


def measured_baseline(frame: Frame) -> bool:
    """A run they measured (hours, tokens/s) and another setup they ask about: '4 张 A10 训了 30 小时，换 2 张 A100
    要多久'."""
    if len(frame.setups) < 2 or frame.setup.outcome is not None:
        return False
    return any(s.outcome is not None and bool(s.outcome.hours or s.outcome.tokens_per_s or s.outcome.step_s)
               for i, s in enumerate(frame.setups) if i != frame.asked_setup)


def has_model(frame: Frame) -> bool:
    return any(s.models for s in frame.setups)

