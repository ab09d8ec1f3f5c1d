"""Trace one training step of the real model code under fake tensors: the measured side of the activation terms.

Each trace builds the Hugging Face transformers model from its config (the dimensions of a row of
knowledge/models.yaml, depth cut to a few layers, full width), runs forward + backward + one AdamW step under
PyTorch's FakeTensorMode on the CPU (no memory is allocated, no weights are downloaded) and records what
torch.distributed._tools.mem_tracker.MemTracker attributes: parameters, gradients, optimizer states, activations and
the backward's temporaries, apart. This is how torchtitan's memory estimator sizes a step (torchtitan
scripts/estimate/estimation.py: FakeTensorMode + MemTracker, the model built on fake tensors).

What a trace stands for (the settings a framework leaves unset, noted in every file's `meta`):
- Hugging Face Trainer, `bf16=True`: the step runs under torch.autocast(bfloat16). On the CPU autocast casts the same
  matmul-type ops as on CUDA; the casts that differ between CPU and CUDA (softmax, log_softmax, the norms) are made
  explicitly in fp32 by the transformers code traced here, so the bytes match a CUDA step.
- `full-bf16`: weights loaded in bf16, torch AdamW keeps bf16 moments (Trainer with a bf16 model; ms-swift).
  `full-fp32`: weights upcast to fp32, bf16 compute (LLaMA-Factory upcasts trainable parameters; fp32 moments).
- `lora-*`: PEFT LoRA rank 8, alpha 16, dropout 0 (LLaMA-Factory's defaults), adapters in fp32 (PEFT's
  autocast_adapter_dtype), on q+v (PEFT's default targets for Llama-style models, the Trainer path), all attention
  projections, or every linear (LLaMA-Factory's `all`). transformers 5 stores MoE experts as 3-D tensors, not
  nn.Linear: PEFT's all-linear leaves them out (the router and shared experts are Linear and are adapted).
- `qlora` / `qlora-kbit`: bitsandbytes is absent on this machine, so every decoder-layer linear is replaced by a 4-bit
  stand-in with bitsandbytes' storage (uint8 packed weight, 0.5 B per parameter, + 8-bit absmax per 64 and an fp32
  absmax per 256 of those: NF4 with double quantisation) and MatMul4Bit's autograd (bitsandbytes
  autograd/_functions.py: forward dequantises the weight to the compute dtype for one F.linear and saves only the
  packed weight, never the input; backward dequantises it again for grad_input). The dequantised bf16 weight is a
  real allocation in the trace. `qlora-kbit` first applies PEFT's prepare_model_for_kbit_training (embeddings,
  norms and head in fp32). MoE experts (3-D tensors) are not quantised: no QLoRA trace for MoE models.
- Attention: `eager` (transformers' eager_attention_forward) and `sdpa`. FlashAttention-2 is not available on the CPU.
  On the CPU, SDPA runs its flash kernel (_scaled_dot_product_flash_attention_for_cpu), which saves what
  FlashAttention-2 saves (q, k, v, output and the fp32 logsumexp), so `sdpa` traces stand for `flash` too; the
  kernel each trace ran is recorded.
  Where SDPA's flash kernel does not take the shapes (DeepSeek's MLA: q/k head dim 192, v 128) the CPU falls back
  to the math composite, which keeps the s x s scores (recorded as "math (composite)"); CUDA's memory-efficient
  kernel takes them, so those traces do not stand for a GPU run. Gemma-2 and gpt-oss have no SDPA path in
  transformers 5 (soft-capping, attention sinks): eager only.
- MoE LoRA: PEFT 0.21's all-linear also adapts transformers 5's 3-D expert tensors (ParamWrapper), which
  materialises each expert tensor plus its LoRA delta in the forward and keeps it for the backward.
- Checkpointing `full`: transformers' activation_checkpointing_enable (torch.utils.checkpoint, use_reentrant=False).
- Loss: the model's own (labels passed in: fp32 logits, cross-entropy), the output object dropped before backward as
  the Trainer's compute_loss does. Optimizer: torch AdamW, foreach (the step-time temporaries are recorded apart).

Usage:
    python scripts/trace_memory.py                   # every architecture (tens of minutes on 2 cores)
    python scripts/trace_memory.py --arch llama3 --arch qwen3
    python scripts/trace_memory.py --check           # retrace the tiny check config; exit 1 if it differs
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path
from typing import Any

import torch
import yaml
from torch import nn
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.distributed._tools.mem_tracker import _TOTAL_KEY, MemTracker, _MemRefType
from torch.utils._python_dispatch import TorchDispatchMode

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from service.evals.traces import ARCHS  # noqa: E402  (the traced architectures: one list, no torch)

OUT_DIR = REPO / "evals" / "traces"
CHECK_FILE = OUT_DIR / "check.json"
LAYERS = 2  # traced depth; per-layer figures scale (one 4-layer trace per architecture shows it)

# transformers 5 has no SDPA path for these (Gemma-2's attention soft-capping, gpt-oss's attention sinks): eager only
EAGER_ONLY = {"gemma2", "gpt_oss"}
METHODS = ("full-bf16", "full-fp32", "lora-qv", "lora-attn", "lora-all", "qlora", "qlora-kbit")
ATTENTION = ("eager", "sdpa")
CKPT = ("none", "full")
SHAPES = ((512, 1), (2048, 1), (8192, 1), (2048, 4))  # (sequence length, micro-batch)
LORA_TARGETS = {
    "lora-qv": ["q_proj", "v_proj", "q_b_proj", "kv_b_proj", "qkv_proj", "query_key_value"],
    "lora-attn": ["q_proj", "k_proj", "v_proj", "o_proj", "q_a_proj", "q_b_proj", "kv_a_proj_with_mqa", "kv_b_proj",
                  "qkv_proj"],
    "lora-all": "all-linear",
}
LORA_RANK = 8
PROBE_VOCAB = 512


# ------------------------------------------------------------------------------------------------ configs


def load_specs() -> dict[str, dict[str, Any]]:
    rows = yaml.safe_load((REPO / "knowledge" / "models.yaml").read_text(encoding="utf-8"))
    return {r["id"]: r for r in rows}


def reduced_spec(row: dict[str, Any], layers: int) -> dict[str, Any]:
    """The models.yaml row cut to `layers` decoder layers (MoE: one leading dense layer kept where it has any)."""
    keep = ("id", "family", "kind", "num_layers", "hidden_size", "num_heads", "num_kv_heads", "head_dim",
            "intermediate_size", "vocab_size", "max_position_embeddings", "tie_word_embeddings", "qkv_bias", "qk_norm",
            "mlp", "moe", "mla", "sliding_window", "sliding_window_layers", "params_published_b")
    spec = {k: row[k] for k in keep if k in row}
    spec["num_layers"] = layers
    if spec.get("moe"):
        moe = dict(spec["moe"])
        moe["first_k_dense"] = min(1, int(moe.get("first_k_dense") or 0))
        spec["moe"] = moe
    if spec.get("sliding_window_layers") is not None:
        spec["sliding_window_layers"] = layers // 2 if spec["family"] != "gemma3" else layers - 1
    return spec


def hf_config(model_type: str, spec: dict[str, Any]) -> Any:
    from transformers import AutoConfig

    h, heads = spec["hidden_size"], spec["num_heads"]
    kw: dict[str, Any] = dict(hidden_size=h, num_hidden_layers=spec["num_layers"], num_attention_heads=heads,
                              num_key_value_heads=spec.get("num_kv_heads") or heads,
                              intermediate_size=spec["intermediate_size"], vocab_size=spec["vocab_size"],
                              max_position_embeddings=8192, tie_word_embeddings=bool(spec.get("tie_word_embeddings")))
    if spec.get("head_dim"):
        kw["head_dim"] = spec["head_dim"]
    moe, mla = spec.get("moe"), spec.get("mla")
    layers = spec["num_layers"]
    if model_type == "qwen3_moe":
        kw.update(num_experts=moe["num_experts"], num_experts_per_tok=moe["top_k"],
                  moe_intermediate_size=moe["moe_intermediate_size"], decoder_sparse_step=1, mlp_only_layers=[])
    elif model_type == "mixtral":
        kw.update(num_local_experts=moe["num_experts"], num_experts_per_tok=moe["top_k"])
    elif model_type == "gpt_oss":
        kw.update(num_local_experts=moe["num_experts"], num_experts_per_tok=moe["top_k"],
                  sliding_window=spec.get("sliding_window"),
                  layer_types=["sliding_attention" if i % 2 == 0 else "full_attention" for i in range(layers)])
    elif model_type == "deepseek_v3":
        kw.update(n_routed_experts=moe["num_experts"], num_experts_per_tok=moe["top_k"],
                  moe_intermediate_size=moe["moe_intermediate_size"], n_shared_experts=moe.get("shared_experts", 1),
                  first_k_dense_replace=moe["first_k_dense"], n_group=8, topk_group=4, **mla)
    elif model_type == "gemma2":
        kw.update(sliding_window=spec.get("sliding_window"),
                  layer_types=["sliding_attention" if i % 2 == 0 else "full_attention" for i in range(layers)])
    elif model_type == "gemma3_text":
        kw.update(sliding_window=spec.get("sliding_window"),
                  layer_types=["full_attention" if (i + 1) % 6 == 0 or i == layers - 1 else "sliding_attention"
                               for i in range(layers)])
    elif model_type == "glm":
        kw.update(attention_bias=True)
    elif model_type == "mistral":
        kw.update(sliding_window=None)
    return AutoConfig.for_model(model_type, **kw)


# ------------------------------------------------------------------------------------------------ QLoRA stand-in


class _MatMul4Bit(torch.autograd.Function):
    """bitsandbytes' MatMul4Bit (autograd/_functions.py): dequantise, one F.linear, save only the packed weight."""

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, packed: torch.Tensor, shape: tuple[int, int]) -> torch.Tensor:
        ctx.save_for_backward(packed)
        ctx.shape = shape
        w = torch.empty(shape, dtype=x.dtype, device=x.device)  # F.dequantize_4bit(B, quant_state).to(A.dtype)
        return nn.functional.linear(x, w)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[torch.Tensor, None, None]:
        w = torch.empty(ctx.shape, dtype=grad.dtype, device=grad.device)  # dequantised again
        return grad @ w, None, None


class Linear4bit(nn.Module):
    """Storage of bitsandbytes' Linear4bit with NF4 + double quantisation; compute dtype bf16."""

    def __init__(self, d_in: int, d_out: int, bias: bool) -> None:
        super().__init__()
        self.in_features, self.out_features = d_in, d_out
        n = d_in * d_out
        self.weight = nn.Parameter(torch.empty((n // 2, 1), dtype=torch.uint8), requires_grad=False)
        self.register_buffer("absmax", torch.empty(max(1, n // 64), dtype=torch.uint8))  # 8-bit absmax per block
        self.register_buffer("absmax2", torch.empty(max(1, n // (64 * 256)), dtype=torch.float32))
        self.bias = nn.Parameter(torch.empty(d_out, dtype=torch.bfloat16), requires_grad=False) if bias else None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = _MatMul4Bit.apply(x.to(torch.bfloat16), self.weight, (self.out_features, self.in_features))
        return out + self.bias if self.bias is not None else out


def quantise_linears(model: nn.Module) -> int:
    """Swap every decoder-layer nn.Linear (LoRA's base layers included) for the 4-bit stand-in; returns how many."""
    count = 0
    for name, mod in list(model.named_modules()):
        if ".layers." not in f".{name}" or "lora_" in name:
            continue
        for child_name, child in list(mod.named_children()):
            if type(child) is nn.Linear and "lora_" not in child_name:
                setattr(mod, child_name, Linear4bit(child.in_features, child.out_features, child.bias is not None))
                count += 1
    return count


# ------------------------------------------------------------------------------------------------ tracing


class StepTracker(MemTracker):
    """MemTracker that also keeps, per phase (forward, backward, optimizer step), the peak of the whole and of the
    transient part (activations + the backward's temporaries: everything but parameters, buffers, gradients and
    optimizer states)."""

    def __init__(self) -> None:
        super().__init__()
        self.phase = "setup"
        self.peaks: dict[str, dict[str, int]] = {}

    def _track_module_params_and_buffers(self, module: nn.Module, install_grad_hooks: bool = True
                                         ) -> tuple[int, int]:
        # MemTracker hooks every parameter's gradient; a frozen one (LoRA's base) has none to hook
        frozen = [p for p in module.parameters() if not p.requires_grad]
        if not install_grad_hooks or not frozen:
            return super()._track_module_params_and_buffers(module, install_grad_hooks)
        param_mem = 0
        for p in frozen:
            param_mem += sum(w.mem_consumed for w in self._update_and_maybe_create_winfos(p, _MemRefType.PARAM))
        holder = nn.Module()
        for i, p in enumerate(q for q in module.parameters() if q.requires_grad):
            holder.register_parameter(f"p{i}", p)
        trained, _ = super()._track_module_params_and_buffers(holder, True)
        buffer_mem = 0
        for b in module.buffers():
            buffer_mem += sum(w.mem_consumed for w in self._update_and_maybe_create_winfos(b, _MemRefType.BUFFER))
        return param_mem + trained, buffer_mem

    def _update_snap(self, *args: Any, **kwargs: Any) -> None:
        super()._update_snap(*args, **kwargs)
        for snap in self._curr_mem_snap.values():
            total = snap[_TOTAL_KEY]
            transient = snap[_MemRefType.ACT] + snap[_MemRefType.TEMP] + snap[_MemRefType.OTH]
            p = self.peaks.setdefault(self.phase, {"total": 0, "transient": 0})
            if total > p["total"]:
                p.update(total=total, **{f"at_total_{k.name.lower()}": v for k, v in snap.items()
                                         if isinstance(k, _MemRefType)})
            p["transient"] = max(p["transient"], transient)


class OpLog(TorchDispatchMode):
    """Names of the attention kernels the step ran."""

    def __init__(self) -> None:
        super().__init__()
        self.kernels: set[str] = set()

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        name = str(func.overloadpacket.__name__)
        if "scaled_dot_product" in name or "grouped_mm" in name:
            self.kernels.add(name)
        return func(*args, **(kwargs or {}))


@dataclass(frozen=True)
class Case:
    arch: str
    method: str
    ckpt: str
    attention: str
    seq: int
    batch: int
    layers: int = LAYERS
    vocab: int | None = None  # a small-vocabulary probe: the loss no longer hides the layers' backward peak


def _categories(snap: dict[Any, int]) -> dict[str, int]:
    return {k.name.lower(): v for k, v in snap.items() if isinstance(k, _MemRefType)}


def build_model(model_type: str, spec: dict[str, Any], case: Case) -> tuple[nn.Module, dict[str, Any]]:
    from transformers import AutoModelForCausalLM

    cfg = hf_config(model_type, spec)
    dtype = torch.float32 if case.method == "full-fp32" else torch.bfloat16
    with torch.device("meta"):  # built on meta (PEFT's adapter moves cannot swap fake parameters), faked below
        model = AutoModelForCausalLM.from_config(cfg, dtype=dtype, attn_implementation=case.attention)
        model, info = _adapt(model, case)
    if case.ckpt == "full":
        model.activation_checkpointing_enable()
    model.train()
    return model, info


def _materialise(model: nn.Module) -> None:
    """Meta parameters and buffers become fake CPU tensors of the same dtype (tied weights stay tied)."""
    memo: dict[int, torch.Tensor] = {}
    for mod in model.modules():
        for name, p in list(mod._parameters.items()):
            if p is not None:
                if id(p) not in memo:
                    memo[id(p)] = nn.Parameter(torch.empty(p.shape, dtype=p.dtype), requires_grad=p.requires_grad)
                mod._parameters[name] = memo[id(p)]  # type: ignore[assignment]
        for name, b in list(mod._buffers.items()):
            if b is not None:
                if id(b) not in memo:
                    memo[id(b)] = torch.empty(b.shape, dtype=b.dtype)
                mod._buffers[name] = memo[id(b)]


def _adapt(model: nn.Module, case: Case) -> tuple[nn.Module, dict[str, Any]]:
    info: dict[str, Any] = {}
    if case.method.startswith(("lora", "qlora")):
        from peft import LoraConfig, get_peft_model

        model.requires_grad_(False)
        if case.method == "qlora-kbit":  # prepare_model_for_kbit_training: the 16-bit parameters go to fp32
            for p in model.parameters():
                p.data = p.data.float()
        targets = LORA_TARGETS.get(case.method, "all-linear")
        present = {n.rsplit(".", 1)[-1] for n, m in model.named_modules() if isinstance(m, nn.Linear)}
        if isinstance(targets, list):
            targets = sorted(set(targets) & present)
        model = get_peft_model(model, LoraConfig(r=LORA_RANK, lora_alpha=16, lora_dropout=0.0,
                                                 target_modules=targets, task_type="CAUSAL_LM"))
        info["lora_targets"] = targets
        if case.method.startswith("qlora"):
            info["quantised_linears"] = quantise_linears(model)
    return model, info


def trace(case: Case, specs: dict[str, dict[str, Any]]) -> dict[str, Any]:
    model_type, model_id = ARCHS[case.arch]
    spec = reduced_spec(specs[model_id], case.layers)
    if case.vocab:
        spec["vocab_size"] = case.vocab
    torch.manual_seed(0)
    model, info = build_model(model_type, spec, case)
    with FakeTensorMode():
        _materialise(model)
        params = [p for p in model.parameters() if p.requires_grad]
        opt = torch.optim.AdamW(params, lr=1e-4, foreach=True)
        ids = torch.randint(0, spec["vocab_size"], (case.batch, case.seq))
        tracker, oplog = StepTracker(), OpLog()
        tracker.track_external(model, opt)
        layer_act: list[int] = []
        hooks = _layer_hooks(model, tracker, layer_act)
        with tracker, oplog:
            tracker.phase = "forward"
            with torch.autocast("cpu", dtype=torch.bfloat16):
                out = model(input_ids=ids, labels=ids)
            loss = out.loss
            del out  # the Trainer's compute_loss returns the loss only
            after_fwd = _categories(tracker.get_tracker_snapshot()[torch.device("cpu")])
            tracker.phase = "backward"
            loss.backward()
            del loss
            tracker.phase = "step"
            opt.step()
            after_step = _categories(tracker.get_tracker_snapshot()[torch.device("cpu")])
            opt.zero_grad(set_to_none=True)
        for h in hooks:
            h.remove()
    n_train = sum(p.numel() for p in params)
    n_total = sum(p.numel() for p in model.parameters())
    peaks = tracker.peaks
    phase_total = {k: v["total"] for k, v in peaks.items() if k != "setup"}
    return {
        "arch": case.arch, "method": case.method, "ckpt": case.ckpt, "attention": case.attention,
        "seq": case.seq, "batch": case.batch, "layers": case.layers, **({"vocab": case.vocab} if case.vocab else {}),
        "kernels": _kernels(oplog.kernels, case.attention), "trainable_params": n_train, "params": n_total, **info,
        # persistent: parameters (+ buffers), gradients and optimizer states after the step
        "param_bytes": after_fwd["param"] + after_fwd["buffer"], "grad_bytes": after_step["grad"],
        "optim_bytes": after_step["opt"],
        # stored activations when the loss is computed, and what each decoder layer added to them
        "act_after_forward": after_fwd["act"] + after_fwd["temp"], "layer_act": layer_act,
        # the peak of everything but parameters, gradients and optimizer states (forward and backward)
        "transient_peak": max(peaks["forward"]["transient"], peaks["backward"]["transient"]),
        "backward_grad_at_peak": peaks["backward"].get("at_total_grad", 0),
        "peak_forward": phase_total.get("forward", 0), "peak_backward": phase_total.get("backward", 0),
        "peak_step": phase_total.get("step", 0),
    }


def _kernels(seen: set[str], attention: str) -> list[str]:
    if attention == "sdpa" and not any("scaled_dot_product" in k for k in seen):
        seen = seen | {"math (composite)"}  # SDPA decomposed into matmul + softmax: the scores are kept
    return sorted(seen)


def _layer_hooks(model: nn.Module, tracker: StepTracker, out: list[int]) -> list[Any]:
    """Bytes each decoder layer adds to the stored activations during the forward (its saved tensors and output)."""
    hooks = []
    state: dict[int, int] = {}

    def current() -> int:
        snap = tracker._curr_mem_snap.get(torch.device("cpu"), {})
        return int(sum(v for k, v in snap.items() if k in (_MemRefType.ACT, _MemRefType.TEMP)))

    def pre(mod: nn.Module, args: Any) -> None:
        if tracker.phase == "forward":
            state[id(mod)] = current()

    def post(mod: nn.Module, args: Any, output: Any) -> None:
        if tracker.phase == "forward" and id(mod) in state:
            out.append(current() - state.pop(id(mod)))

    for name, mod in model.named_modules():
        parts = name.split(".")
        if len(parts) >= 2 and parts[-2] == "layers" and parts[-1].isdigit():
            hooks += [mod.register_forward_pre_hook(pre), mod.register_forward_hook(post)]
    return hooks


# ------------------------------------------------------------------------------------------------ the matrix


def cases_for(arch: str) -> list[Case]:
    moe = ARCHS[arch][0] in ("qwen3_moe", "mixtral", "deepseek_v3", "gpt_oss")
    out = []
    for method in METHODS:
        if moe and method.startswith("qlora"):
            continue  # 3-D expert tensors are not quantised (see the module docstring)
        for ckpt in CKPT:
            for attention in ("eager",) if arch in EAGER_ONLY else ATTENTION:
                for seq, batch in SHAPES:
                    out.append(Case(arch, method, ckpt, attention, seq, batch))
    attention = "eager" if arch in EAGER_ONLY else "sdpa"
    out.append(Case(arch, "lora-all", "none", attention, 2048, 1, layers=4))  # per-layer scaling
    out.append(Case(arch, "full-bf16", "none", attention, 2048, 1, layers=4))
    for method in ("full-bf16", "lora-all"):  # the layers' own backward peak, below the logits at full vocabulary
        for ckpt in CKPT:
            for attn in ("eager",) if arch in EAGER_ONLY else ATTENTION:
                out.append(Case(arch, method, ckpt, attn, 2048, 1, vocab=PROBE_VOCAB))
    return out


def meta() -> dict[str, Any]:
    return {
        "generated_by": "scripts/trace_memory.py (do not edit by hand)",
        "torch": torch.__version__, "transformers": version("transformers"), "peft": version("peft"),
        "device": "cpu, FakeTensorMode", "lora": {"rank": LORA_RANK, "alpha": 16, "dropout": 0.0},
        "frameworks": {
            "hf-trainer": "bf16 autocast; checkpointing off; sdpa; PEFT default targets (lora-qv); QLoRA through "
                          "prepare_model_for_kbit_training (qlora-kbit)",
            "llamafactory": "bf16 autocast; checkpointing full; sdpa; lora_target all (lora-all), adapters and full "
                            "fine-tuning weights upcast to fp32 (full-fp32); QLoRA without kbit preparation (qlora)",
        },
        "flash": "not available on the CPU: sdpa runs the CPU flash kernel, whose saved tensors are FlashAttention-2's",
    }


def run(arches: list[str], out_dir: Path) -> None:
    specs = load_specs()
    out_dir.mkdir(parents=True, exist_ok=True)
    for arch in arches:
        t0 = time.time()
        rows = []
        for case in cases_for(arch):
            rows.append(_traced(case, specs))
        doc = {"meta": {**meta(), "arch": arch, "model_type": ARCHS[arch][0], "model": ARCHS[arch][1],
                        "spec": reduced_spec(specs[ARCHS[arch][1]], LAYERS)}, "traces": rows}
        (out_dir / f"{arch}.json").write_text(_dump(doc), encoding="utf-8")
        print(f"{arch}: {len(rows)} traces in {time.time() - t0:.0f} s", flush=True)


def _traced(case: Case, specs: dict[str, dict[str, Any]]) -> dict[str, Any]:
    try:
        return trace(case, specs)
    except Exception as e:  # a kernel or model that fake tensors cannot run: recorded, never skipped silently
        return {"arch": case.arch, "method": case.method, "ckpt": case.ckpt, "attention": case.attention,
                "seq": case.seq, "batch": case.batch, "layers": case.layers, "error": f"{type(e).__name__}: {e}"[:300]}


def _dump(doc: dict[str, Any]) -> str:
    """One trace per line: small diffs when a trace changes."""
    head = json.dumps(doc["meta"], ensure_ascii=False, sort_keys=True)
    rows = ",\n".join("  " + json.dumps(r, sort_keys=True) for r in doc["traces"])
    return f'{{"meta": {head},\n "traces": [\n{rows}\n]}}\n'


# ------------------------------------------------------------------------------------------------ --check

TINY = {"id": "tiny-llama", "family": "llama3", "kind": "decoder", "num_layers": 2, "hidden_size": 256,
        "num_heads": 4, "num_kv_heads": 2, "intermediate_size": 688, "vocab_size": 1000,
        "max_position_embeddings": 4096, "tie_word_embeddings": False, "mlp": "swiglu", "params_published_b": 0.001}
CHECK_CASES = [Case("tiny", m, c, a, 128, 2) for m in ("full-bf16", "lora-all", "qlora")
               for c in CKPT for a in ATTENTION]


def check_traces() -> list[dict[str, Any]]:
    ARCHS["tiny"] = ("llama", "tiny-llama")
    specs = {"tiny-llama": TINY}
    try:
        return [trace(c, specs) for c in CHECK_CASES]
    finally:
        del ARCHS["tiny"]


def check() -> int:
    fresh = check_traces()
    stored = json.loads(CHECK_FILE.read_text(encoding="utf-8"))["traces"] if CHECK_FILE.exists() else []
    bad = [f"{a['method']}/{a['ckpt']}/{a['attention']}" for a, b in zip(fresh, stored, strict=False) if a != b]
    if len(fresh) != len(stored) or bad:
        print(f"{CHECK_FILE.relative_to(REPO)} differs from a fresh trace ({', '.join(bad) or 'count'}): the traced "
              "code or the libraries changed; rerun python scripts/trace_memory.py", file=sys.stderr)
        return 1
    for path in sorted(OUT_DIR.glob("*.json")):
        doc = json.loads(path.read_text(encoding="utf-8"))
        if doc["meta"].get("transformers") != version("transformers") or doc["meta"].get("torch") != torch.__version__:
            print(f"{path.name}: traced with torch {doc['meta'].get('torch')} / transformers "
                  f"{doc['meta'].get('transformers')}, installed {torch.__version__} / {version('transformers')}",
                  file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arch", action="append", choices=sorted(ARCHS), help="default: every architecture")
    parser.add_argument("--check", action="store_true", help="retrace the tiny config and compare")
    parser.add_argument("--write-check", action="store_true", help="regenerate evals/traces/check.json")
    parser.add_argument("--out", type=Path, default=OUT_DIR)
    args = parser.parse_args(argv)
    if args.check:
        return check()
    if args.write_check:
        doc = {"meta": {**meta(), "arch": "tiny", "spec": TINY}, "traces": check_traces()}
        CHECK_FILE.parent.mkdir(parents=True, exist_ok=True)
        CHECK_FILE.write_text(_dump(doc), encoding="utf-8")
        print(f"wrote {CHECK_FILE.relative_to(REPO)}")
        return 0
    run(args.arch or list(ARCHS), args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

