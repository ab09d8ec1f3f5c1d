"""`gpu-advisor calibrate`: a few real training steps on this machine's GPU, measured next to the engine's estimate.

The model is built from its config with random weights (memory and speed do not depend on the weights; nothing is
downloaded): a catalog model's dimensions become a Llama-style config (Qwen-style when it has qkv biases), a
config.json is read as it is. LoRA uses peft (all linear layers), QLoRA also bitsandbytes (4-bit NF4, only when it
is installed and a CUDA GPU is present). Without a GPU the harness shrinks the model to a tiny config and runs it
on the CPU end to end: a check that the harness works, never a calibration row.
"""

from __future__ import annotations

import importlib.util
import json
import math
import resource
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from service.catalog.schema import GpuSpec, ModelSpec
from service.errors import InvalidInputError
from service.sizing.memory import estimate_memory
from service.sizing.throughput import Cluster, training_time
from service.sizing.types import GIB, TrainSetup

TINY = {"num_layers": 2, "hidden_size": 64, "num_heads": 4, "num_kv_heads": 2, "intermediate_size": 128,
        "vocab_size": 1000, "head_dim": None}
TINY_SEQ = 64


@dataclass(frozen=True)
class Measured:
    device: str
    gpu: GpuSpec | None  # the catalog GPU this device is (None on CPU or an unknown card)
    spec: ModelSpec  # what was actually trained (the tiny config on CPU)
    setup: TrainSetup
    steps: int
    tokens_per_s: float
    max_reserved_gib: float
    max_allocated_gib: float
    host_peak_rss_gib: float
    estimate_gib: float | None
    estimate_tokens_per_s: float | None
    versions: dict[str, str]
    note: str = ""


def _lib(name: str) -> Any:
    """transformers / peft, untyped to mypy (imported when the command runs, never at import time)."""
    return importlib.import_module(name)


def _hf_config(spec: ModelSpec, config_path: Path | None) -> Any:
    transformers = _lib("transformers")

    if config_path is not None:
        cfg = json.loads(config_path.read_text(encoding="utf-8"))
        model_type = cfg.pop("model_type", "llama")
        for k in ("architectures", "_name_or_path", "transformers_version", "auto_map", "quantization_config"):
            cfg.pop(k, None)
        return transformers.AutoConfig.for_model(model_type, **cfg)
    common: dict[str, Any] = dict(hidden_size=spec.hidden_size, num_hidden_layers=spec.num_layers,
                  num_attention_heads=spec.num_heads, num_key_value_heads=spec.num_kv_heads or spec.num_heads,
                  intermediate_size=spec.intermediate_size, vocab_size=spec.vocab_size,
                  max_position_embeddings=max(spec.max_position_embeddings or 4096, 4096),
                  tie_word_embeddings=spec.tie_word_embeddings)
    if spec.head_dim:
        common["head_dim"] = spec.head_dim
    if spec.qkv_bias:
        return transformers.Qwen2Config(**common)
    return transformers.LlamaConfig(**common)


def _shrink(spec: ModelSpec) -> ModelSpec:
    return spec.model_copy(update={**TINY, "moe": None, "mla": None, "mlp": "swiglu", "id": f"tiny:{spec.id}",
                                   "name": f"tiny {spec.name} (CPU check)", "params_published_b": 1e-3})


def _versions() -> dict[str, str]:
    out: dict[str, str] = {}
    for name in ("torch", "transformers", "peft", "bitsandbytes"):
        if importlib.util.find_spec(name) is not None:
            out[name] = str(getattr(__import__(name), "__version__", "?"))
    return out


def run_harness(spec: ModelSpec, config_path: Path | None, setup: TrainSetup, steps: int, gpus: tuple[GpuSpec, ...],
                resolve: Any) -> Measured:
    """Train `steps` steps (after one warm-up) and measure; `resolve(name)` maps a CUDA device name to a GpuSpec."""
    torch: Any = _lib("torch")
    transformers = _lib("transformers")

    cuda = torch.cuda.is_available()
    note = ""
    if not cuda:
        spec, config_path = _shrink(spec), None
        setup = replace(setup, seq_len=min(setup.seq_len, TINY_SEQ), precision="fp32")
        note = "no CUDA GPU: a tiny config ran on the CPU to check the harness; not a calibration row"
    if setup.method == "qlora" and not (cuda and importlib.util.find_spec("bitsandbytes") is not None):
        raise InvalidInputError("QLoRA calibration needs bitsandbytes and a CUDA GPU.",
                                "pip install bitsandbytes on the GPU machine, or calibrate --method lora.")
    device = torch.device("cuda" if cuda else "cpu")
    dtype = torch.bfloat16 if cuda and setup.precision in ("bf16", "pure_bf16") else (
        torch.float16 if cuda else torch.float32)
    cfg = _hf_config(spec, config_path)
    cfg.use_cache = False  # training: no KV cache (and no warning under checkpointing)
    kwargs: dict[str, Any] = {"torch_dtype": dtype, "attn_implementation": "sdpa"}
    if setup.method == "qlora":
        kwargs["quantization_config"] = transformers.BitsAndBytesConfig(
            load_in_4bit=True, bnb_4bit_quant_type="nf4", bnb_4bit_use_double_quant=True, bnb_4bit_compute_dtype=dtype)
    torch.manual_seed(0)
    model = transformers.AutoModelForCausalLM.from_config(cfg, **kwargs).to(device)
    if setup.grad_ckpt:
        if hasattr(model, "activation_checkpointing_enable"):  # transformers >= 5.x
            model.activation_checkpointing_enable(activation_checkpointing_kwargs={"use_reentrant": False})
        else:
            model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    if setup.method in ("lora", "qlora"):
        peft = _lib("peft")
        model.enable_input_require_grads()
        model = peft.get_peft_model(model, peft.LoraConfig(r=setup.lora_rank, lora_alpha=2 * setup.lora_rank,
                                                           target_modules="all-linear", task_type="CAUSAL_LM"))
    elif setup.method == "freeze":
        raise InvalidInputError("calibrate supports full, lora and qlora.", "Use --method full, lora or qlora.")
    model.train()
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=1e-5, fused=cuda)
    vocab = int(cfg.vocab_size)
    ids = torch.randint(0, vocab, (setup.micro_batch, setup.seq_len), device=device)

    def step() -> None:
        loss = model(input_ids=ids, labels=ids).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    step()  # warm-up: allocator, kernels, optimizer states
    if cuda:
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
    t0 = time.perf_counter()
    for _ in range(steps):
        step()
    if cuda:
        torch.cuda.synchronize()
    elapsed = time.perf_counter() - t0
    tokens_per_s = steps * setup.micro_batch * setup.seq_len / elapsed
    reserved = torch.cuda.max_memory_reserved() / GIB if cuda else 0.0
    allocated = torch.cuda.max_memory_allocated() / GIB if cuda else 0.0
    gpu = resolve(torch.cuda.get_device_name(0)) if cuda else None
    est_gib = est_tps = None
    if gpu is not None:
        est_gib = estimate_memory(spec, setup).per_gpu_gib
        mem = estimate_memory(spec, setup)
        fraction = mem.trainable_params / max(1.0, spec.params_published_b * 1e9)
        est_tps = training_time(spec, gpu, setup, 1e9, 1, trainable_fraction=fraction,
                                cluster=Cluster(1, 1)).throughput_tokens_per_s
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / GIB  # Linux: KiB
    return Measured(str(device) if not cuda else torch.cuda.get_device_name(0), gpu, spec, setup, steps,
                    tokens_per_s, reserved, allocated, rss, est_gib, est_tps, _versions(), note)


def summary(m: Measured) -> dict[str, Any]:
    def r(x: float | None, n: int = 2) -> float | None:
        return None if x is None or math.isnan(x) else round(x, n)

    return {"device": m.device, "gpu": m.gpu.id if m.gpu else None, "model": m.spec.name,
            "method": m.setup.method, "seq_len": m.setup.seq_len, "micro_batch": m.setup.micro_batch,
            "grad_ckpt": m.setup.grad_ckpt, "steps": m.steps,
            "measured": {"tokens_per_s": r(m.tokens_per_s, 1), "max_reserved_gib": r(m.max_reserved_gib),
                         "max_allocated_gib": r(m.max_allocated_gib), "host_peak_rss_gib": r(m.host_peak_rss_gib)},
            "estimate": {"tokens_per_s": r(m.estimate_tokens_per_s, 1), "per_gpu_gib": r(m.estimate_gib)},
            "versions": m.versions, "note": m.note or None}
