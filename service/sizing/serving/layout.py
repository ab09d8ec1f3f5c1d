"""Whether a model splits over a tensor-parallel x pipeline-parallel layout at all, before any memory is sized:
the checks the engines run while building the model, in their own words, and the flag that fixes each.

- Attention heads: vLLM `ModelConfig.verify_with_parallel_config` raises "Total number of attention heads (64)
  must be divisible by tensor parallel size (6)." (vllm/config.py); SGLang and LMDeploy split the heads the
  same way (`divide(total_num_heads, tp_size)`), so 6 x V100 cannot run a 64-head model at TP6.
- KV heads: `QKVParallelLinear` (vllm/model_executor/layers/linear.py) splits the KV heads when tp < kv_heads
  (`divide(kv_heads, tp)`) and replicates them when tp >= kv_heads (`divide(tp, kv_heads)` copies), so tp must
  divide, or be a multiple of, the KV heads; `divide` asserts "{a} is not divisible by {b}" (vllm/distributed/
  utils.py `ensure_divisibility`). MLA caches one latent per GPU and has no KV heads to split.
- AWQ / GPTQ (int4, group 128): the row-parallel layers (o_proj, down_proj, the experts' down_proj) hold
  input_size / tp inputs, which must be a multiple of the group size, else "The input size is not aligned with
  the quantized weight shape. This can be caused by too large tensor parallel size." (vllm gptq.py / awq.py
  `create_weights`): Qwen1.5-14B's 13,696-wide MLP fails at TP2, Qwen2-72B's 29,568 at TP8.
- Block-quantised FP8 checkpoints (DeepSeek-V3/R1, 128 x 128 blocks): the same for the block size, "Weight
  input_size_per_partition = 64 is not divisible by weight quantization block_k = 128." (vllm fp8.py).
- Pipeline parallel: at most one stage per layer.
Experts need no divisibility under TP (each expert's width is split) nor under vLLM's expert parallelism (the
remainder experts go to the last ranks, `determine_expert_map`); only their down_proj's group alignment above.
"""

from __future__ import annotations

from dataclasses import dataclass

from service.catalog.schema import ModelSpec
from service.sizing.params import count_params
from service.sizing.serving.types import Engine, WeightsDtype

INT4_GROUP = 128
FP8_BLOCK = 128
_ROW_PARALLEL = ("o_proj", "down_proj", "expert_down_proj", "shared_down_proj", "fc2")
NODE_GPUS = 8  # GPUs per node a replica's tensor parallelism stays within; more GPUs add pipeline stages


@dataclass(frozen=True)
class LayoutProblem:
    code: str  # tp_heads | tp_kv_heads | quant_group | fp8_block | pp_layers
    message: str  # what the engine says
    fix: str  # the flag (or checkpoint) that fixes it
    fix_zh: str = ""  # the fix in Chinese, where its words are more than a flag


def _heads(m: ModelSpec, engine: Engine, tp: int) -> LayoutProblem | None:
    heads = m.num_heads or 1
    if heads % tp == 0:
        return None
    msg = (f"Total number of attention heads ({heads}) must be divisible by tensor parallel size ({tp})."
           if engine == "vllm" else f"{heads} is not divisible by {tp}")
    return LayoutProblem("tp_heads", msg, "")


def _kv_heads(m: ModelSpec, tp: int) -> LayoutProblem | None:
    if m.mla is not None:
        return None
    kv = m.num_kv_heads or m.num_heads or 1
    if tp >= kv and tp % kv:
        return LayoutProblem("tp_kv_heads", f"{tp} is not divisible by {kv}", "")
    if tp < kv and kv % tp:
        return LayoutProblem("tp_kv_heads", f"{kv} is not divisible by {tp}", "")
    return None


def _aligned(m: ModelSpec, tp: int, unit: int) -> int | None:
    """The first row-parallel input width per GPU that is not a multiple of `unit`, or None."""
    for x in count_params(m).linears:
        if x.name in _ROW_PARALLEL and x.d_in % tp == 0 and (x.d_in // tp) % unit:
            return x.d_in // tp
    return None


def problems(m: ModelSpec, engine: Engine, weights: WeightsDtype, tp: int, pp: int = 1) -> list[LayoutProblem]:
    """What the engine refuses about this layout (empty: it builds the model). Each problem's `fix` is filled in
    by `with_fixes`, which knows how many GPUs there are."""
    out = [p for p in (_heads(m, engine, tp), _kv_heads(m, tp)) if p is not None]
    if weights == "int4" and (width := _aligned(m, tp, INT4_GROUP)) is not None:
        out.append(LayoutProblem("quant_group", "The input size is not aligned with the quantized weight shape. "
                                 "This can be caused by too large tensor parallel size.",
                                 f"(a {width}-wide input per GPU is not a multiple of the group size {INT4_GROUP})",
                                 f"（每卡输入宽度 {width} 不是分组大小 {INT4_GROUP} 的整数倍）"))
    if weights == "fp8" and m.released_dtype == "fp8" and (width := _aligned(m, tp, FP8_BLOCK)) is not None:
        out.append(LayoutProblem("fp8_block", f"Weight input_size_per_partition = {width} is not divisible by "
                                 f"weight quantization block_k = {FP8_BLOCK}.", ""))
    if pp > (m.num_layers or 1):
        out.append(LayoutProblem("pp_layers", f"{pp} pipeline stages for {m.num_layers} layers", ""))
    return out


def layouts(gpus: int, node_gpus: int = NODE_GPUS) -> list[tuple[int, int]]:
    """(tp, pp) with tp x pp = gpus, tensor parallelism inside a node, the widest TP first."""
    out = [(tp, gpus // tp) for tp in range(min(gpus, node_gpus), 0, -1) if gpus % tp == 0]
    return out


def first_valid(m: ModelSpec, engine: Engine, weights: WeightsDtype, gpus: int,
                node_gpus: int = NODE_GPUS) -> tuple[int, int] | None:
    """The widest TP x PP over exactly `gpus` GPUs the engine accepts."""
    for tp, pp in layouts(gpus, node_gpus):
        if not problems(m, engine, weights, tp, pp):
            return tp, pp
    return None


def default_layout(gpus: int, node_gpus: int = NODE_GPUS) -> tuple[int, int]:
    """How `gpus` GPUs run one replica when the user gives only the count: TP over them within a node, nodes as
    pipeline stages (vLLM's docs: tensor parallel size = GPUs per node, pipeline parallel size = nodes)."""
    if gpus <= node_gpus:
        return gpus, 1
    return (node_gpus, gpus // node_gpus) if gpus % node_gpus == 0 else (gpus, 1)


def flags(tp: int, pp: int) -> str:
    return f"--tensor-parallel-size {tp}" + (f" --pipeline-parallel-size {pp}" if pp > 1 else "")


def with_fixes(m: ModelSpec, engine: Engine, weights: WeightsDtype, tp: int, pp: int = 1) -> list[LayoutProblem]:
    """`problems` with each fix: the widest layout over the same GPUs that works (all of them, with pipeline
    stages), else the widest TP on fewer GPUs."""
    found = problems(m, engine, weights, tp, pp)
    if not found:
        return []
    gpus = tp * pp
    same = first_valid(m, engine, weights, gpus)
    fewer = next((t for t in range(tp - 1, 0, -1) if not problems(m, engine, weights, t, pp)), 1)
    fix = flags(*same) if same is not None and same != (tp, pp) else flags(fewer, pp)
    return [LayoutProblem(p.code, p.message, f"{fix} {p.fix}".strip(), f"{fix} {p.fix_zh}".strip()) for p in found]
