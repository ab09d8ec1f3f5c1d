"""Whether an engine runs a dtype on a GPU at all, before any memory is sized (compute capability rules).

- vLLM needs compute capability 7.0 (Volta) or newer (docs "GPU installation": "compute capability 7.0 or
  higher"); its AWQ / GPTQ kernels need 7.5 for AWQ and Marlin 8.0 (quantization "supported hardware" table),
  FP8 weights 8.0 (weight-only Marlin) with W8A8 compute from 8.9, INT8 W8A8 7.5, MXFP4 8.0, an FP8 KV cache 8.0.
- SGLang and TensorRT-LLM target 7.5+ (FlashInfer / TensorRT-LLM kernels); LMDeploy TurboMind 7.0+.
- bf16 on a GPU without bf16 (V100, T4) is served as fp16 (`served_weights`): the same bytes, and vLLM refuses
  bf16 below compute capability 8.0 ("Bfloat16 is only supported on GPUs with compute capability of at least 8.0
  ... You can use float16 instead by explicitly setting the `dtype` flag in CLI, for example: --dtype=half",
  vLLM's `_check_if_gpu_supports_dtype`), so the plan sizes, names and launches FP16 there.
- Huawei Ascend runs vLLM as the vllm-ascend plugin (and SGLang and LMDeploy's PyTorch engine on CANN), never
  TensorRT-LLM; the 910B / 910C have no FP8, and quantised serving loads ModelSlim checkpoints (W8A8, W4A16 /
  W4A8: `--quantization ascend`; vllm-ascend "Quantization Guide"). AMD Instinct runs vLLM and SGLang on ROCm.
"""

from __future__ import annotations

from service.catalog.schema import GpuSpec
from service.sizing.serving.types import Engine, WeightsDtype

_ENGINE_MIN = {"vllm": (7, 0), "sglang": (7, 5), "trtllm": (7, 5), "lmdeploy": (7, 0)}
_WEIGHTS_MIN = {"int4": (7, 5), "int8": (7, 5), "fp8": (8, 0), "mxfp4": (8, 0)}
NAMES = {"vllm": "vLLM", "sglang": "SGLang", "trtllm": "TensorRT-LLM", "lmdeploy": "LMDeploy"}


def capability(gpu: GpuSpec) -> tuple[int, int]:
    """The CUDA compute capability; a non-NVIDIA accelerator (Ascend, Instinct) has none and is checked by
    `_vendor_rule` instead."""
    if gpu.compute_capability is None:
        return (9, 0)
    major, _, minor = gpu.compute_capability.partition(".")
    return int(major), int(minor or 0)


def fp8_weight_only(gpu: GpuSpec, weights: str) -> bool:
    """FP8 weights on an NVIDIA GPU without FP8 tensor cores (A100, A10, L20 has them; V100 does not start):
    vLLM and SGLang run them weight-only, W8A16 through the Marlin kernel ("Your GPU does not have native support
    for FP8 computation but FP8 quantization is being used. Weight-only FP8 compression will be used leveraging
    the Marlin kernel.")."""
    return weights == "fp8" and gpu.vendor == "nvidia" and not gpu.supports_fp8 and capability(gpu) >= (8, 0)


def served_weights(gpu: GpuSpec, weights: WeightsDtype) -> WeightsDtype:
    """The dtype the GPU serves `weights` in: BF16 on a card without BF16 (V100, T4) is FP16 (`--dtype half`)."""
    return "fp16" if weights == "bf16" and not gpu.supports_bf16 else weights


def _vendor_rule(engine: Engine, gpu: GpuSpec, weights: str, kv_dtype: str) -> tuple[str, str] | None:
    if gpu.vendor == "huawei":
        if engine == "trtllm":
            return (f"TensorRT-LLM runs on NVIDIA GPUs only; {gpu.name} serves with vllm-ascend, MindIE or SGLang",
                    f"TensorRT-LLM 只支持 NVIDIA GPU；{gpu.name} 请用 vllm-ascend、MindIE 或 SGLang 部署")
        if weights == "fp8" or kv_dtype == "fp8":
            return (f"{gpu.name} has no FP8: serve BF16, or a ModelSlim W8A8 checkpoint with --quantization ascend "
                    "(vllm-ascend)", f"{gpu.name} 不支持 FP8：请部署 BF16，或用 ModelSlim W8A8 权重加 "
                    "--quantization ascend（vllm-ascend）")
        if weights == "mxfp4":
            return (f"{gpu.name} has no MXFP4 kernels in vllm-ascend: serve BF16 or a ModelSlim W8A8 checkpoint",
                    f"vllm-ascend 没有 {gpu.name} 的 MXFP4 内核：请部署 BF16 或 ModelSlim W8A8 权重")
    if gpu.vendor == "amd" and engine in ("trtllm", "lmdeploy"):
        return (f"{NAMES[engine]} has no ROCm build for {gpu.name}: serve with vLLM or SGLang",
                f"{NAMES[engine]} 没有适用于 {gpu.name} 的 ROCm 版本：请用 vLLM 或 SGLang 部署")
    return None


def unsupported_both(engine: Engine, gpu: GpuSpec, weights: str, kv_dtype: str) -> tuple[str, str] | None:
    """Why `engine` cannot serve `weights` / `kv_dtype` on `gpu` (English, Chinese), or None when it can."""
    if gpu.vendor != "nvidia":
        return _vendor_rule(engine, gpu, weights, kv_dtype)
    cc = capability(gpu)
    need = _ENGINE_MIN[engine]
    if cc < need:
        return (f"{NAMES[engine]} needs compute capability {need[0]}.{need[1]}+; {gpu.name} is "
                f"{gpu.compute_capability}", f"{NAMES[engine]} 需要计算能力 {need[0]}.{need[1]}+；{gpu.name} 是 "
                f"{gpu.compute_capability}")
    need = _WEIGHTS_MIN.get(weights, (0, 0))
    if cc < need:
        return (f"{weights} weights need compute capability {need[0]}.{need[1]}+ kernels; {gpu.name} is "
                f"{gpu.compute_capability}: serve bf16/fp16 or pick a newer GPU",
                f"{weights.upper()} 权重需要计算能力 {need[0]}.{need[1]}+ 的内核；{gpu.name} 是 "
                f"{gpu.compute_capability}：请部署 BF16/FP16 权重或换更新的 GPU")
    if kv_dtype == "fp8" and cc < (8, 0):
        return (f"an fp8 KV cache needs compute capability 8.0+; {gpu.name} is {gpu.compute_capability}",
                f"FP8 KV 缓存需要计算能力 8.0+；{gpu.name} 是 {gpu.compute_capability}")
    return None


def unsupported(engine: Engine, gpu: GpuSpec, weights: str, kv_dtype: str) -> str | None:
    """Why `engine` cannot serve `weights` / `kv_dtype` on `gpu`, or None when it can."""
    both = unsupported_both(engine, gpu, weights, kv_dtype)
    return None if both is None else both[0]
