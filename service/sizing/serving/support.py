"""Whether an engine runs a dtype on a GPU at all, before any memory is sized (compute capability rules).

- vLLM needs compute capability 7.0 (Volta) or newer (docs "GPU installation": "compute capability 7.0 or
  higher"); its AWQ / GPTQ kernels need 7.5 for AWQ and Marlin 8.0 (quantization "supported hardware" table),
  FP8 weights 8.0 (weight-only Marlin) with W8A8 compute from 8.9, INT8 W8A8 7.5, MXFP4 8.0, an FP8 KV cache 8.0.
- SGLang and TensorRT-LLM target 7.5+ (FlashInfer / TensorRT-LLM kernels); LMDeploy TurboMind 7.0+.
- bf16 on a GPU without bf16 (V100, T4) runs as fp16: the same bytes, so no rule here.
"""

from __future__ import annotations

from service.catalog.schema import GpuSpec
from service.sizing.serving.types import Engine

_ENGINE_MIN = {"vllm": (7, 0), "sglang": (7, 5), "trtllm": (7, 5), "lmdeploy": (7, 0)}
_WEIGHTS_MIN = {"int4": (7, 5), "int8": (7, 5), "fp8": (8, 0), "mxfp4": (8, 0)}
_NAMES = {"vllm": "vLLM", "sglang": "SGLang", "trtllm": "TensorRT-LLM", "lmdeploy": "LMDeploy"}


def capability(gpu: GpuSpec) -> tuple[int, int]:
    """The CUDA compute capability; a non-NVIDIA accelerator (Ascend, Instinct) has none and runs the engines'
    vendor builds (vllm-ascend, ROCm), taken here as able to run every dtype."""
    if gpu.compute_capability is None:
        return (9, 0)
    major, _, minor = gpu.compute_capability.partition(".")
    return int(major), int(minor or 0)


def unsupported(engine: Engine, gpu: GpuSpec, weights: str, kv_dtype: str) -> str | None:
    """Why `engine` cannot serve `weights` / `kv_dtype` on `gpu`, or None when it can."""
    cc = capability(gpu)
    need = _ENGINE_MIN[engine]
    if cc < need:
        return (f"{_NAMES[engine]} needs compute capability {need[0]}.{need[1]}+; {gpu.name} is "
                f"{gpu.compute_capability}")
    need = _WEIGHTS_MIN.get(weights, (0, 0))
    if cc < need:
        return (f"{weights} weights need compute capability {need[0]}.{need[1]}+ kernels; {gpu.name} is "
                f"{gpu.compute_capability}: serve bf16/fp16 or pick a newer GPU")
    if kv_dtype == "fp8" and cc < (8, 0):
        return f"an fp8 KV cache needs compute capability 8.0+; {gpu.name} is {gpu.compute_capability}"
    return None
