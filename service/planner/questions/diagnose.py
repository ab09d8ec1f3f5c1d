"""Diagnose: the user reports what a run did (OOM on N x GPU at length L, T hours an epoch, X GB used, low GPU
utilisation, host RAM overflow) and asks whether it is expected. The engine sizes the same setup, compares, and
tests the usual causes by re-sizing the setup with each one changed; a cause is named only when the re-sized
figure explains the observation. Every figure is the estimate's (`service.planner.estimate`).

The artifact carries codes and numbers; the renderer writes the words (prompts/answer.<lang>.yaml).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from service.catalog.loader import Catalog
from service.planner.estimate import EstimateRequest, estimate
from service.planner.questions.fit import gpu_for, short_name, usable_gib
from service.planner.resolve import run_epochs
from service.workload import DEFAULT_SEQ_LEN, Workload

Artifact = dict[str, Any]
Kind = Literal["oom", "memory", "hours", "util", "host_oom", "slow"]
# An observed time within this factor of the estimate is what the setup should take (the estimate's own error
# on measured runs is ~10-20 %, and data loading, evaluation and saving add to a real epoch).
HOURS_BAND = (0.5, 1.6)
MEMORY_BAND = (0.7, 1.35)  # nvidia-smi shows reserved memory: the caching allocator holds more than is in use
LOW_UTIL_PCT = 70.0
NODE_GPUS = 8
SHOULD_SCALE = 1.3  # N cards the engine rates at least this much faster than one: 'slower than one card' is not expected


class Observation(BaseModel):
    """What the user saw. Figures are as the user stated them (GB as written)."""

    kind: Kind
    memory_gb: float | None = Field(default=None, gt=0, le=1e5)
    hours: float | None = Field(default=None, gt=0, le=1e6, description="hours per epoch")
    util_pct: float | None = Field(default=None, ge=0, le=100)
    tokens_per_s: float | None = Field(default=None, gt=0, le=1e9)
    whole_run: bool = Field(default=False, description="the hours are the whole run's (all epochs), not one epoch's")


def _sized(cat: Catalog, w: Workload, gpu: str, n: int, offload: str = "none") -> Artifact:
    if n > 1 and w.zero_stage is None and w.method in ("full", "pretrain", "freeze"):
        w = w.model_copy(update={"zero_stage": 3})
    return estimate(EstimateRequest(w, gpu, n, offload), cat)  # type: ignore[arg-type]


def _fig(out: Artifact) -> Artifact:
    return {"per_gpu_gib": out["memory"]["per_gpu_gib"], "fits": out["fits"], "training_hours": out["training_hours"],
            "strategy": out["strategy"]}


TERMS = ("weights_gib", "gradients_gib", "optimizer_gib", "activations_gib", "overhead_gib")  # parts, not totals


def _dominant(mem: dict[str, float]) -> str:
    terms = {k: mem[k] for k in TERMS if k in mem}
    return max(terms, key=lambda k: terms[k]).removesuffix("_gib")


def _memory_causes(cat: Catalog, w: Workload, gpu: str, n: int) -> list[Artifact]:
    """Settings that, changed from the assumed setup, would make this run OOM: each a likely cause."""
    tries: list[tuple[str, Workload]] = []
    if w.grad_ckpt is not False:
        tries.append(("no_checkpointing", w.model_copy(update={"grad_ckpt": False})))
    if n > 1 and (w.zero_stage or 3) >= 2:
        tries.append(("no_zero3", w.model_copy(update={"zero_stage": 0})))
    for batch in (4, 8, 16):
        if batch > (w.micro_batch or 1):
            tries.append((f"micro_batch_{batch}", w.model_copy(update={"micro_batch": batch})))
    seq = w.seq_len or DEFAULT_SEQ_LEN
    tries.append(("longer_padding", w.model_copy(update={"seq_len": seq * 2})))
    out = []
    for code, changed in tries:
        sized = _sized(cat, changed, gpu, n)
        if not sized["fits"]:
            out.append({"code": code, **_fig(sized)})
    return out


def _memory_fixes(cat: Catalog, w: Workload, gpu: str, n: int, kind: str) -> list[Artifact]:
    """Changes that make the stated setup fit, in the order people try them."""
    tries: list[tuple[str, Workload, int, str]] = []
    if w.grad_ckpt is False:
        tries.append(("checkpointing", w.model_copy(update={"grad_ckpt": True}), n, "none"))
    if (w.micro_batch or 1) > 1:
        tries.append(("micro_batch_1", w.model_copy(update={"micro_batch": 1}), n, "none"))
    if n > 1 and w.zero_stage is not None and w.zero_stage < 3:
        tries.append(("zero3", w.model_copy(update={"zero_stage": 3}), n, "none"))
    seq = w.seq_len or DEFAULT_SEQ_LEN
    if kind == "decoder" and seq >= 1024:
        tries.append(("seq_len", w.model_copy(update={"seq_len": seq // 2}), n, "none"))
    if kind == "decoder" and w.method in ("lora", "full", "freeze"):
        tries.append(("qlora", w.model_copy(update={"method": "qlora", "quant_bits": 4}), n, "none"))
    if w.method in ("full", "pretrain", "freeze"):
        tries.append(("lora", w.model_copy(update={"method": "lora", "quant_bits": None}), n, "none"))
        tries.append(("offload", w, n, "optimizer"))
    for more in (2 * n, 4 * n, 8 * n):
        tries.append((f"gpus_{more}", w, more, "none"))
    out = []
    for code, changed, count, offload in tries:
        sized = _sized(cat, changed, gpu, count, offload)
        if sized["fits"]:
            out.append({"code": code, "gpu_count": count, "seq_len": sized["strategy"]["seq_len"], **_fig(sized)})
    return out[:4]


def _oom(cat: Catalog, w: Workload, gpu: str, n: int, base: Artifact) -> Artifact:
    kind = str(base["model"]["kind"])
    if not base["fits"]:
        return {"expected": True, "causes": [{"code": f"dominant_{_dominant(base['memory'])}"}],
                "fixes": _memory_fixes(cat, w, gpu, n, kind)}
    return {"expected": False, "causes": _memory_causes(cat, w, gpu, n), "fixes": []}


def _hours(obs: Observation, w: Workload, base: Artifact, ref_gpus: int = 0, ref: Artifact | None = None) -> Artifact:
    epochs = run_epochs(w, w.method)  # the epochs the estimate's hours cover (3 assumed when none are stated)
    per_epoch = base["training_hours"] / max(epochs, 1e-9)
    out: Artifact = {"estimated_hours_per_epoch": round(per_epoch, 2), "tokens_per_s": base["throughput_tokens_per_s"]}
    if obs.hours is None and ref is not None and ref["fits"] and ref["throughput_tokens_per_s"]:
        # '双卡比单卡慢一倍': the engine's rate on these N cards against `ref_gpus` cards'. Where N cards should be
        # clearly faster, slower is not the setup's doing (no P2P / NVLink / RDMA, a changed per-GPU batch, data)
        speedup = base["throughput_tokens_per_s"] / ref["throughput_tokens_per_s"]
        across_nodes = ref_gpus >= NODE_GPUS
        out["speedup_vs_reference"] = round(speedup, 2)
        out["reference_gpus"] = ref_gpus
        if speedup >= SHOULD_SCALE and base["strategy"].get("offload") in (None, "none"):
            return {**out, "expected": False, "causes": [
                {"code": "should_scale", "speedup": round(speedup, 1), "gpus": base["gpus"], "ref": ref_gpus},
                {"code": "no_rdma" if across_nodes else "no_p2p"}, {"code": "batch_changed"}, {"code": "dataloader"}],
                "fixes": [{"code": "check_rdma" if across_nodes else "check_p2p"}]}
    if obs.hours is None and obs.tokens_per_s:
        # '~900 tok/s training throughput, expected?': the rate seen against the engine's for the same setup
        ratio = base["throughput_tokens_per_s"] / obs.tokens_per_s  # how many times slower than the estimate
        lo, hi = HOURS_BAND
        out.update({"ratio": round(ratio, 2), "observed_tokens_per_s": obs.tokens_per_s})
        if lo <= ratio <= hi:
            return {**out, "expected": True, "causes": [], "fixes": []}
        if ratio < lo:
            return {**out, "expected": False, "causes": [{"code": "faster_than_estimate"}], "fixes": []}
        return {**out, "expected": False, "causes": _slow_causes(w, base), "fixes": []}
    if obs.hours is None or per_epoch <= 0:
        # 'slower on two nodes than on one', 'zero3 is slow': a structural cause makes it expected
        structural = [c for c in _slow_causes(w, base) if c["code"] in ("offload", "communication")]
        return {**out, "expected": True if structural else None, "causes": structural or _slow_causes(w, base),
                "fixes": []}
    whole = obs.whole_run and epochs > 1  # 'took 88 hours' for 10 epochs: compare with the whole run
    if whole:
        out.update({"whole_run": True, "estimated_hours_run": round(base["training_hours"], 2), "epochs": epochs})
    ratio = obs.hours / (base["training_hours"] if whole else per_epoch)
    out["ratio"] = round(ratio, 2)
    tokens_per_s = base["throughput_tokens_per_s"]
    out["tokens_per_s"] = tokens_per_s
    out["tokens_in_observed_time"] = round(tokens_per_s * obs.hours * 3600)
    if not (w.samples or w.tokens or w.dataset_gb):
        # no data size: the estimate's hours rest on a default dataset, so only the work the time buys is said
        return {**out, "expected": None, "data_unknown": True, "causes": [], "fixes": []}
    lo, hi = HOURS_BAND
    if ratio <= hi and ratio >= lo:
        return {**out, "expected": True, "causes": [], "fixes": []}
    if ratio < lo:
        return {**out, "expected": False, "causes": [{"code": "faster_than_estimate"}], "fixes": []}
    return {**out, "expected": False, "causes": _slow_causes(w, base), "fixes": []}


def _slow_causes(w: Workload, base: Artifact) -> list[Artifact]:
    s = base["strategy"]
    causes: list[Artifact] = []
    if s.get("offload") not in (None, "none"):
        causes.append({"code": "offload"})
    if base["gpus"] > 1:
        causes.append({"code": "communication"})
    if w.seq_len and w.avg_tokens_per_sample and w.avg_tokens_per_sample < 0.6 * w.seq_len:
        causes.append({"code": "padding"})
    else:
        causes.append({"code": "padding_unknown"})
    causes += [{"code": "small_batch"}, {"code": "dataloader"}, {"code": "no_flash_attention"}]
    return causes


def _util(obs: Observation, w: Workload, base: Artifact) -> Artifact:
    low = obs.util_pct is None or obs.util_pct < LOW_UTIL_PCT
    causes = _slow_causes(w, base)
    expected = bool(low and base["strategy"].get("offload") not in (None, "none"))
    return {"expected": expected if low else True, "causes": causes if low else [], "fixes": [], "util_high": not low}


def _memory(obs: Observation, base: Artifact) -> Artifact:
    est = base["memory"]["per_gpu_gib"]
    if obs.memory_gb is None:
        return {"expected": None, "causes": [], "fixes": []}
    seen_gib = obs.memory_gb * (1e9 / 2**30) if obs.memory_gb > 0 else 0.0
    ratio = obs.memory_gb / est if est else 0.0  # GB as nvidia-smi and people write it vs GiB: within the band
    lo, hi = MEMORY_BAND
    causes = [] if lo <= ratio <= hi else [{"code": "allocator_cache" if ratio > hi else "smaller_than_estimate"}]
    return {"expected": lo <= ratio <= hi, "ratio": round(ratio, 2), "observed_gib": round(seen_gib, 1),
            "causes": causes, "fixes": []}


def _host(cat: Catalog, w: Workload, gpu: str, n: int, base: Artifact, obs: Observation,
          offload_plausible: bool = True) -> Artifact:
    """Host RAM killed: n processes each loading the whole model on the CPU first (n x the weights), or ZeRO
    offload's optimizer states. The copies lead when they are larger or offload is not plausible (LoRA, no ZeRO
    stage), with the RAM the post states when it states it."""
    off = _sized(cat, w, gpu, n, "optimizer")
    need = off["host_ram_needed_gib"]
    full = float(base["memory"].get("weights_gib") or 0.0) * (n if base["strategy"].get("zero_stage") == 3 else 1)
    copies = round(n * full, 1) if n > 1 else 0.0
    seen = obs.memory_gb  # as the post writes it ('948G RAM')
    causes: list[Artifact] = [{"code": "offload_host_ram", "host_ram_gib": need}, {"code": "cpu_model_copies"}]
    out: Artifact = {"expected": True, "host_ram_needed_gib": need, "fixes": [{"code": "zero_init"},
                                                                          {"code": "no_param_offload"}]}
    if copies and (copies > need or not offload_plausible):
        causes = [{"code": "cpu_model_copies", "host_ram_gib": copies, "ranks": n}, causes[0]]
        out.update({"host_copies_gib": copies, "ranks": n, "host_ram_seen_gb": seen,
                    "fixes": [{"code": "zero_init"}, {"code": "rank0_load"}]})
    return {**out, "causes": causes}


SERVING_ENGINES = ("vllm", "sglang", "lmdeploy", "trtllm", "tgi")
ENGINE_MEMORY_FRACTION = {"vllm": 0.9, "sglang": 0.88, "lmdeploy": 0.8, "trtllm": 0.9, "tgi": 0.9}  # defaults


def rule(cat: Catalog, gpu: str, obs: Observation, engine: str | None, mentions_bf16: bool) -> Artifact | None:
    """Observations a catalog fact explains without sizing the model:
    - an inference engine 'using almost all memory': vLLM (gpu_memory_utilization 0.9), SGLang
      (mem_fraction_static), LMDeploy (cache_max_entry_count 0.8 of what is free) take that share of every GPU up
      front for the KV cache, whatever the model, so each GPU of a tensor-parallel group shows it;
    - bf16 on a GPU without bf16 (V100, T4, P40): emulated, several times slower than fp16."""
    g, _ = gpu_for(cat, gpu)
    if obs.kind == "memory" and engine in SERVING_ENGINES:
        frac = ENGINE_MEMORY_FRACTION[engine]
        return {"expected": True, "rule": "engine_prealloc", "causes": [
            {"code": "engine_prealloc", "fraction": frac, "reserved_gib": round(frac * g.memory_gib, 1)}],
            "fixes": [{"code": "lower_fraction"}]}
    if obs.kind in ("slow", "util", "hours") and mentions_bf16 and not g.supports_bf16:
        return {"expected": True, "rule": "no_bf16", "causes": [{"code": "no_bf16"}], "fixes": [{"code": "use_fp16"}]}
    return None


def diagnose(cat: Catalog, w: Workload | None, gpu: str, count: int, obs: Observation, engine: str | None = None,
             mentions_bf16: bool = False) -> Artifact:
    """Is the observation what this setup should give? The engine's figure, the verdict, causes and fixes.
    Without a workload (`w` None) only the catalog rules answer (`rule`)."""
    g, said = gpu_for(cat, gpu)
    head = {"kind": "diagnose", "observation": obs.model_dump(exclude_none=True), "gpu": g.id,
            "gpu_name": short_name(g.id), "gpu_count": count, "gpu_memory_gib": g.memory_gib,
            "usable_gib": usable_gib(g)}
    found_rule = rule(cat, gpu, obs, engine, mentions_bf16)
    if found_rule is not None or w is None:
        return {**head, "sized": False, **(found_rule or {"expected": None, "causes": [], "fixes": []}),
                "workload": None if w is None else w.model_dump(),
                "assumptions": [said[0]] if said else [], "assumptions_zh": [said[1]] if said else []}
    base = _sized(cat, w, g.id, count)
    if obs.kind == "oom":
        found = _oom(cat, w, g.id, count, base)
    elif obs.kind in ("hours", "slow"):
        # the setup it is slower than: one node for a multi-node run ('两台比一台还慢'), else one card
        ref = (NODE_GPUS if count > NODE_GPUS else 1) if count > 1 and obs.hours is None else 0
        found = _hours(obs, w, base, ref, _sized(cat, w, g.id, ref) if ref else None)
    elif obs.kind == "util":
        found = _util(obs, w, base)
    elif obs.kind == "memory":
        found = _memory(obs, base)
    else:
        plausible = w.zero_stage is not None or w.method in ("full", "pretrain")
        found = _host(cat, w, g.id, count, base, obs, offload_plausible=plausible)
    return {
        **head, "sized": True, "per_gpu_gib": base["memory"]["per_gpu_gib"],
        "fits": base["fits"], "memory": base["memory"], "strategy": base["strategy"], "model": base["model"],
        "training_hours": base["training_hours"], "throughput_tokens_per_s": base["throughput_tokens_per_s"],
        **found, "workload": w.model_dump(),
        "assumptions": list(base["assumptions"]) + ([said[0]] if said else []),
        "assumptions_zh": [said[1]] if said else [],
    }
