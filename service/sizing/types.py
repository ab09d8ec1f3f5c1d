"""Frozen value types of the sizing engine. Units are in the names."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Method = Literal["full", "lora", "qlora", "freeze", "pretrain"]
# bf16 = automatic mixed precision (fp32 master weights and Adam states, bf16 compute); pure_bf16 = weights, grads
# and optimizer states all bf16 (torchtune, LLaMA-Factory pure_bf16); fp8 = amp-bf16 states with FP8 GEMMs.
Precision = Literal["bf16", "fp16", "pure_bf16", "fp32", "fp8"]
Offload = Literal["none", "optimizer", "all"]
Optimizer = Literal["adamw", "adamw_8bit", "paged_adamw_8bit", "adafactor"]
CkptMode = Literal["full", "selective"]
Attention = Literal["flash", "sdpa", "eager"]
Loss = Literal["full_logits", "chunked"]
LoraTargets = Literal["qv", "attn", "all_linear"]
LoraExtra = Literal["lm_head", "embed_tokens"]
Sharding = Literal["deepspeed", "fsdp", "fsdp2"]  # fsdp: FSDP1 (root unsharded); fsdp2: per-parameter
# the slowest link a ring over the job's GPUs crosses (service/sizing/comm.py)
Interconnect = Literal["nvlink", "pcie", "pcie_no_p2p", "rdma", "tcp"]

ErrorKind = Literal["memory", "throughput"]

GIB = 1024**3


@dataclass(frozen=True)
class TrainSetup:
    """How one data-parallel replica trains: method, precision, sharding and batch shape."""

    method: Method
    quant_bits: int | None = None  # QLoRA 4 or 8
    n_gpus: int = 1  # GPUs that shard ZeRO state (data-parallel size)
    zero_stage: int = 0  # ZeRO stage; with sharding="fsdp", 3 = FULL_SHARD and 2 = SHARD_GRAD_OP
    offload: Offload = "none"
    optimizer: Optimizer = "adamw"
    precision: Precision = "bf16"
    seq_len: int = 2048
    micro_batch: int = 1
    grad_ckpt: bool = True
    ckpt_mode: CkptMode = "full"  # with grad_ckpt: every layer recomputed, or only its elementwise ops
    attention: Attention = "flash"  # flash / sdpa keep no s^2 scores; eager materialises them
    loss: Loss = "full_logits"  # chunked: fused / chunked cross-entropy, no full-vocabulary logits
    lora_rank: int = 8
    lora_targets: LoraTargets = "all_linear"
    lora_extra: tuple[LoraExtra, ...] = ()  # trained in full next to the adapters (modules_to_save)
    kbit_upcast: bool = False  # QLoRA: prepare_model_for_kbit_training casts norms, embeddings, head to fp32
    # amp with the weights held in fp32: the trained ones (LLaMA-Factory upcasts trainable parameters) or all of
    # them (TRL loads a model named by id in fp32): fp32 states, fp32 residual stream, autocast's bf16 weight casts
    fp32_weights: bool = False
    optimizer_in_bwd: bool = False  # the optimizer steps each parameter inside the backward: no gradient buffer
    # torch AdamW's default foreach path allocates a full-size temporary (sqrt of the second moment) at the step;
    # the fused kernel (torch fused=True, DeepSpeed FusedAdam, bitsandbytes) does not
    fused_optimizer: bool = False
    # Liger-Kernel's fused SwiGLU (LigerSiLUMulFunction) keeps only gate and up and recomputes silu(gate) * up in
    # the backward; it comes with Liger's fused cross-entropy (LLaMA-Factory / ms-swift enable_liger_kernel)
    liger_swiglu: bool = False
    fsdp_wrapped: bool = True  # False: FSDP without an auto-wrap policy holds the whole model as one unit
    activation_offload: bool = False  # saved activations go to CPU memory (torchtune enable_activation_offloading)
    sharding: Sharding = "deepspeed"
    # DeepSpeed ZeRO with bf16_master_weights_and_grads + bf16_optimizer_states (PR 7700): pure bf16 there keeps a
    # bf16 master beside the bf16 weights (10 B/param); without them its optimizer upcasts to fp32 (16 B/param)
    ds_bf16_master: bool = False
    # hybrid sharding (FSDP HYBRID_SHARD, DeepSpeed ZeRO++ hpZ / MiCS): states sharded over this many GPUs (a node)
    # and replicated across the groups; 0 = over every data-parallel GPU (n_gpus)
    shard_gpus: int = 0
    # PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True: a large late allocation grows a segment instead of mapping
    # a new one beside the cached blocks (less reserved beyond allocated)
    expandable_segments: bool = False
    freeze_trainable_layers: int = 2  # LLaMA-Factory default for method=freeze
    grad_accum: int = 1  # micro-batches per optimizer step on each GPU (DDP reduces gradients once per step)
    # frozen 16-bit models held beside the policy and run forward only: DPO/KTO's reference model for a full
    # fine-tune (LoRA reads the base with the adapter off instead), PPO's reward and value models
    frozen_copies: int = 0
    model_parallel: int = 1  # tensor x pipeline parallel degree (Megatron-style runs): each GPU holds 1/mp
    pipeline_bubble: float = 0.0  # idle share of a pipeline step, (pp - 1) / (micro-batches + pp - 1)
    interconnect: Interconnect | None = None  # None: not known (NCCL's buffers sized as on NVLink)
    # MoE experts run by transformers' per-expert Python loop (before transformers 5, or experts_implementation=
    # "eager"), not one grouped GEMM per projection (transformers 5's grouped_mm, Megatron's grouped GEMM)
    expert_loop: bool = False
    expert_parallel: int = 1  # expert-parallel degree: experts spread over this many GPUs, tokens sent all-to-all
    compiled: bool = False  # torch.compile: the elementwise work between GEMMs fused (service/sizing/throughput.py)

    @property
    def shard_n(self) -> int:
        """GPUs one copy of the sharded states spans: the shard group under hybrid sharding, else all of them."""
        n = max(1, self.n_gpus)
        return min(n, self.shard_gpus) if self.shard_gpus > 0 else n

    @property
    def fused_attention(self) -> bool:
        """FlashAttention or PyTorch SDPA (flash / memory-efficient kernel): linear memory in the sequence."""
        return self.attention != "eager"

    @property
    def checkpointing(self) -> Literal["none", "selective", "full"]:
        return self.ckpt_mode if self.grad_ckpt else "none"

    @property
    def recomputes_layers(self) -> bool:
        """Full checkpointing runs every layer's forward again in the backward (+2N FLOPs per token)."""
        return self.grad_ckpt and self.ckpt_mode == "full"


@dataclass(frozen=True)
class ExpectedError:
    """The expected relative error of a figure, from the measured runs of its class."""

    kind: ErrorKind
    klass: str  # the class the figure fell in (after falling back)
    pct: float  # mean |error|, %
    rows: int  # measured runs behind it
    held_out_pct: float | None  # mean |error| of the class's held-out runs (None: none held out)
    held_out_rows: int
    bias_pct: float  # mean signed error: + the engine reads high

    def label(self, lang: str = "en") -> str:
        """"±15 %（同类实测 23 条）" / "±15 % (23 measured runs of its class)"."""
        if lang == "zh":
            return f"±{self.pct:.0f} %（同类实测 {self.rows} 条）"
        return f"±{self.pct:.0f} % ({self.rows} measured runs of its class)"

    def as_dict(self) -> dict[str, object]:
        return {"pct": round(self.pct, 1), "rows": self.rows, "class": self.klass,
                "held_out_pct": None if self.held_out_pct is None else round(self.held_out_pct, 1),
                "held_out_rows": self.held_out_rows, "bias_pct": round(self.bias_pct, 1)}


@dataclass(frozen=True)
class MemoryBreakdown:
    """Per-GPU memory, each term reported, plus host RAM that offloading needs.

    allocated = weights + gradients + optimizer + activations + buffers (PyTorch's max_memory_allocated);
    reserved = allocated + the caching allocator's reserve (max_memory_reserved, what an OOM is measured on);
    per_gpu = reserved + runtime (CUDA context, NCCL buffers: what nvidia-smi shows and the card must hold).
    """

    weights_gib: float
    gradients_gib: float
    optimizer_gib: float
    activations_gib: float
    trainable_params: float
    buffers_gib: float = 0.0  # transient: ZeRO-3/FSDP gathers and buckets, autocast copies, dequantised weights
    allocator_gib: float = 0.0  # caching allocator: block rounding and fragmentation at the peak
    runtime_gib: float = 0.0  # outside the allocator: CUDA context, NCCL communicator buffers
    paged_gib: float = 0.0  # paged optimizer states in CUDA unified memory: evicted to CPU RAM under pressure
    host_ram_gib: float = 0.0
    notes: tuple[str, ...] = field(default=())
    # the expected error of per_gpu_gib for this class of setup, from the validation matrix (docs/validation.md)
    expected_error: ExpectedError | None = None

    @property
    def allocated_gib(self) -> float:
        return self.weights_gib + self.gradients_gib + self.optimizer_gib + self.activations_gib + self.buffers_gib

    @property
    def reserved_gib(self) -> float:
        return self.allocated_gib + self.allocator_gib

    @property
    def overhead_gib(self) -> float:
        """Everything beyond the four model terms: buffers, allocator reserve and runtime."""
        return self.buffers_gib + self.allocator_gib + self.runtime_gib

    @property
    def per_gpu_gib(self) -> float:
        return self.reserved_gib + self.runtime_gib

    def as_dict(self) -> dict[str, float | int | str | None]:
        e = self.expected_error
        return {
            "per_gpu_gib": round(self.per_gpu_gib, 2),
            "weights_gib": round(self.weights_gib, 2),
            "gradients_gib": round(self.gradients_gib, 2),
            "optimizer_gib": round(self.optimizer_gib, 2),
            "activations_gib": round(self.activations_gib, 2),
            "overhead_gib": round(self.overhead_gib, 2),
            "allocated_gib": round(self.allocated_gib, 2),
            "reserved_gib": round(self.reserved_gib, 2),
            "buffers_gib": round(self.buffers_gib, 2),
            "allocator_gib": round(self.allocator_gib, 2),
            "runtime_gib": round(self.runtime_gib, 2),
            "paged_optimizer_gib": round(self.paged_gib, 2),
            "expected_error_pct": None if e is None else round(e.pct, 1),
            "expected_error_rows": None if e is None else e.rows,
            "expected_error_class": None if e is None else e.klass,
        }


@dataclass(frozen=True)
class MfuPrior:
    value: float
    source: str


@dataclass(frozen=True)
class TimeEstimate:
    flops_total: float
    flops_per_token: float
    tokens_total: float
    throughput_tokens_per_s: float  # all GPUs together
    hours: float
    mfu: MfuPrior
    scaling_efficiency: float
    notes: tuple[str, ...] = field(default=())
    model_flops_per_token: float = 0.0  # MFU basis: no recomputation
    offload_slowdown: float = 1.0  # CPU offload factor already in `hours` and `throughput_tokens_per_s`
    # steady-state rate of the training loop (what a benchmark measures); `throughput_tokens_per_s` is the whole
    # run's, which at cluster scale is held to the published whole-run MFU (restarts, checkpoints, evaluation)
    steady_tokens_per_s: float = 0.0
    # the expected error of the rate (and so of the hours) for this class of setup, from the validation matrix
    expected_error: ExpectedError | None = None
