"""The engine's activation and state terms against fake-tensor traces of the real model code (evals/traces/*.json).

The traces (scripts/trace_memory.py) run one training step of the transformers model, cut to a few layers at full
width, under PyTorch's FakeTensorMode and MemTracker. Here each trace becomes the same setup for the engine, on the
same cut-down model, and the figures are compared term by term:

- `layer`: what one decoder layer keeps for the backward: the growth of the stored activations across the last
  traced layer (the first keeps less where the embedding is frozen: nothing upstream needs a gradient), less its
  16-bit output, which the next layer frees (its norm keeps an fp32 copy); under checkpointing, or with an fp32
  residual stream, the output is what the next layer keeps and stays. Autocast's cache holds the bf16 casts of
  the fp32 weights that train (fp32 full fine-tuning, LoRA's adapters) through the forward: counted on both sides;
- `activations`: the step's transient peak (everything but parameters, gradients and optimizer states) against the
  engine's activations plus its transient buffers (QLoRA's dequantised weight);
- `peak`: the step's allocated peak (forward, backward or the optimizer step) in a later step with gradients held
  across micro-batches, which is what the engine's allocated sizes (weights + gradients + optimizer states +
  activations + buffers);
- `weights`, `gradients`, `optimizer`: the persistent states.

Pure: reads JSON, imports no torch.
"""

from __future__ import annotations

import json
import statistics
from collections import defaultdict
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

from service.catalog.schema import ModelSpec
from service.sizing.activations import (
    activation_gib,
    checkpointed_layer_bytes,
    decoder_layer_act_bytes,
    residual_bytes,
)
from service.sizing.buffers import autocast_copy_bytes
from service.sizing.memory import dequant_buffer_bytes, estimate_memory
from service.sizing.params import count_params
from service.sizing.types import GIB, TrainSetup

TRACES_DIR = Path(__file__).resolve().parents[2] / "evals" / "traces"
# model_type, the models.yaml row whose dimensions are traced
ARCHS: dict[str, tuple[str, str]] = {
    "llama2": ("llama", "Llama-2-7B"),  # MHA
    "llama3": ("llama", "Llama-3.1-8B"),  # GQA, 128k vocabulary
    "qwen2": ("qwen2", "Qwen2.5-7B"),  # qkv bias
    "qwen3": ("qwen3", "Qwen3-8B"),  # q/k norm
    "qwen3_moe": ("qwen3_moe", "Qwen3-30B-A3B"),
    "mistral": ("mistral", "Mistral-7B"),
    "mixtral": ("mixtral", "Mixtral-8x7B"),
    "gemma2": ("gemma2", "Gemma-2-9B"),
    "gemma3": ("gemma3_text", "Gemma-3-12B"),
    "phi3": ("phi3", "Phi-3-mini"),  # fused qkv_proj and gate_up_proj
    "glm4": ("glm", "GLM-4-9B"),
    "deepseek_v3": ("deepseek_v3", "DeepSeek-V3"),  # MLA + 256 experts
    "gpt_oss": ("gpt_oss", "gpt-oss-20b"),
}
# Families in knowledge/models.yaml that transformers cannot build from a config alone (remote code) or whose
# text backbone is traced under another name
NOT_TRACED = {
    "internlm2": "remote code only (trust_remote_code)",
    "baichuan2": "remote code only (trust_remote_code)",
    "minicpmv": "remote code only; its LLM is Qwen2",
    "qwen2_vl": "vision-language; the language model is Qwen2 (traced as qwen2)",
    "yi": "Llama architecture (traced as llama2 / llama3)",
    "deepseek_r1_distill": "Qwen2 / Llama architectures (traced as qwen2 / llama3)",
    "deepseek_v2": "MLA + MoE as DeepSeek-V3 (traced as deepseek_v3)",
    "phi4": "Phi-3 architecture (traced as phi3)",
}

TERMS = ("layer", "activations", "peak", "weights", "gradients", "optimizer")


@dataclass(frozen=True)
class Comparison:
    arch: str
    trace: dict[str, Any]
    engine: dict[str, float]  # bytes per term
    traced: dict[str, float]
    excluded: str = ""  # why the trace does not stand for a GPU run ("" = it does)

    def error(self, term: str) -> float | None:
        t = self.traced.get(term)
        if not t:
            return None
        return (self.engine[term] - t) / t


def load(directory: Path = TRACES_DIR) -> list[tuple[dict[str, Any], list[dict[str, Any]]]]:
    out = []
    for path in sorted(directory.glob("*.json")):
        if path.name == "check.json":
            continue
        doc = json.loads(path.read_text(encoding="utf-8"))
        out.append((doc["meta"], doc["traces"]))
    return out


def model_spec(spec: dict[str, Any], layers: int) -> ModelSpec:
    fields = {k: v for k, v in spec.items() if k not in ("num_layers",)}
    return ModelSpec(**fields, num_layers=layers, name=spec["id"], source="evals/traces", as_of=date(2026, 1, 1))


_TARGETS = {"lora-qv": "qv", "lora-attn": "attn", "lora-all": "all_linear", "qlora": "all_linear",
            "qlora-kbit": "all_linear"}


def train_setup(t: dict[str, Any]) -> TrainSetup:
    method = t["method"]
    common: dict[str, Any] = dict(seq_len=t["seq"], micro_batch=t["batch"], grad_ckpt=t["ckpt"] == "full",
                                  ckpt_mode="full", attention=t["attention"], loss="full_logits", n_gpus=1)
    if method == "full-bf16":
        return TrainSetup(method="full", precision="pure_bf16", **common)
    if method == "full-fp32":
        return TrainSetup(method="full", precision="bf16", fp32_weights=True, **common)
    if method.startswith("qlora"):
        return TrainSetup(method="qlora", quant_bits=4, kbit_upcast=method == "qlora-kbit", lora_rank=8,
                          lora_targets="all_linear", **common)
    return TrainSetup(method="lora", lora_rank=8, lora_targets=_TARGETS[method], **common)  # type: ignore[arg-type]


def excluded(meta: dict[str, Any], t: dict[str, Any]) -> str:
    if "error" in t:
        return str(t["error"])
    if "math (composite)" in t.get("kernels", []):
        return "SDPA fell back to the math composite on the CPU (a GPU runs a fused kernel)"
    if meta["spec"].get("moe") and t["method"].startswith("lora-all"):
        return "PEFT's all-linear adapts transformers 5's fused 3-D experts (ParamWrapper): not the per-expert Linear"
    return ""


def compare(meta: dict[str, Any], t: dict[str, Any]) -> Comparison:
    why = excluded(meta, t)
    if "error" in t:
        return Comparison(meta["arch"], t, {}, {}, why)
    m = model_spec({**meta["spec"], **({"vocab_size": t["vocab"]} if t.get("vocab") else {})}, t["layers"])
    s = train_setup(t)
    mem = estimate_memory(m, s)
    c = count_params(m)
    layer = checkpointed_layer_bytes(m, s) if s.grad_ckpt else decoder_layer_act_bytes(m, s)
    if s.fp32_weights and s.method == "full":
        layer += 2.0 * c.linear / max(1, m.num_layers or 1)  # autocast's bf16 casts of the layer's weights
    if s.method in ("lora", "qlora"):
        layer += 2.0 * mem.trainable_params / max(1, m.num_layers or 1)  # and of the layer's fp32 adapters
    tokens = s.seq_len * s.micro_batch
    output = 2.0 * tokens * (m.hidden_size or 0) if not s.grad_ckpt and residual_bytes(s) == 2 else 0.0
    # one GPU: autocast's bf16 weight casts, QLoRA's dequantised weight (the optimizer step's temporaries are not
    # activations)
    transient = autocast_copy_bytes(m, c, s) + dequant_buffer_bytes(m, c, s)
    engine = {
        "layer": layer,
        "activations": activation_gib(m, s) * GIB + transient,
        "peak": mem.allocated_gib * GIB,
        "weights": mem.weights_gib * GIB,
        "gradients": mem.gradients_gib * GIB,
        "optimizer": mem.optimizer_gib * GIB,
    }
    traced = {
        "layer": float(t["layer_act"][-1]) - output,
        "activations": float(t["transient_peak"]),
        # a later step, gradients held across micro-batches (gradient accumulation), as the engine sizes it: the
        # optimizer states exist from the first step on
        "peak": float(max(t["peak_forward"] + t["optim_bytes"] + t["grad_bytes"],
                          t["peak_backward"] + t["optim_bytes"] + t["grad_bytes"] - t["backward_grad_at_peak"],
                          t["peak_step"])),
        "weights": float(t["param_bytes"]),
        "gradients": float(t["grad_bytes"]),
        "optimizer": float(t["optim_bytes"]),
    }
    return Comparison(meta["arch"], t, engine, traced, why)


def comparisons(directory: Path = TRACES_DIR) -> list[Comparison]:
    return [compare(meta, t) for meta, rows in load(directory) for t in rows]


def summary(rows: list[Comparison]) -> dict[str, dict[str, tuple[int, float, float]]]:
    """Per architecture and term: (traces, mean |error| %, worst |error| %), excluded traces left out."""
    by: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for c in rows:
        if c.excluded:
            continue
        for term in TERMS:
            e = c.error(term)
            if e is not None:
                by[c.arch][term].append(abs(e) * 100)
                by["all"][term].append(abs(e) * 100)
    return {arch: {term: (len(v), statistics.mean(v), max(v)) for term, v in terms.items()}
            for arch, terms in by.items()}
