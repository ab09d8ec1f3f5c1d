"""What the routes read of a frame, in the engine's terms: the model (a catalog id, a name sized by its stated size,
or a name to ask the size of), the subject GPU (a catalog id, or a card given by its memory: '24G'), the count, the
training job's workload fields and the serving workload's. Pure functions of the frame: no message text.
"""

from __future__ import annotations

from collections.abc import Callable

from service.catalog.name_sizes import guess_from_name
from service.frame import Frame, ModelRef, Setup
from service.questions.base import Missing
from service.workload import Workload

MEMORY_CLASS_SUFFIX = "G"  # a card named by its memory alone: '24G' (service/planner/questions/fit.py gpu_for)


def model_ref(frame: Frame) -> ModelRef | None:
    """The model of the setup asked about, else the first one the post names."""
    if frame.setup.models:
        return frame.setup.models[0]
    return next((m for s in frame.setups for m in s.models), None)


def model_fields(frame: Frame) -> tuple[str | None, float | None]:
    """(model, params_b) as the workload takes them: a catalog id, a name the engine sizes by the size in it
    ('FooBar-9B'), or a bare size ('a 7B model')."""
    ref = model_ref(frame)
    if ref is None:
        return None, None
    if ref.id:
        return ref.id, None
    if ref.estimated and ref.params_b and (not ref.name or ref.name == f"{ref.params_b:g}B"):
        return None, ref.params_b
    return ref.name, ref.params_b if ref.estimated else None


def unsized_model(frame: Frame) -> str | None:
    """A model named without any size the engine can use ('Hunyuan-Large'): the name to ask the size of."""
    ref = model_ref(frame)
    if ref is None or ref.id or ref.params_b:
        return None
    guess = guess_from_name(ref.name)
    return None if guess is not None and guess.params_b else ref.name


def memory_class(gb: float) -> str:
    return f"{gb:g}{MEMORY_CLASS_SUFFIX}"


def is_memory_class(gpu: str | None) -> bool:
    return gpu is not None and gpu.endswith(MEMORY_CLASS_SUFFIX) and gpu[:-1].replace(".", "").isdigit()


def setup_gpu(s: Setup) -> str | None:
    """A setup's card: the GPU named, else a card of the memory said ('24G显存' -> '24G')."""
    if s.hardware.gpu:
        return s.hardware.gpu
    if s.hardware.gpu_memory_gb:
        return memory_class(s.hardware.gpu_memory_gb)
    return None


def subject_gpu(frame: Frame) -> str | None:
    """The GPU the question is about: the asked setup's, else any setup's, else the one GPU the filter names."""
    own = setup_gpu(frame.setup)
    if own is not None:
        return own
    for s in frame.setups:
        if (g := setup_gpu(s)) is not None:
            return g
    include = frame.constraints.gpu_include
    return include[0] if len(include) == 1 else None


def subject_count(frame: Frame) -> int | None:
    """The cards of the setup asked about: their count, else nodes x cards per node ('2 台 H100*8': 16)."""
    if frame.setup.hardware.gpu_count:
        return frame.setup.hardware.gpu_count
    n = next((s.hardware.gpu_count for s in frame.setups if s.hardware.gpu_count), None)
    hw = frame.setup.hardware
    return n if n is not None or not (hw.nodes and hw.gpus_per_node) else hw.nodes * hw.gpus_per_node


def gpus_named(frame: Frame) -> list[str]:
    """Every setup's GPU (the asked one first), each once."""
    out = [g for g in (setup_gpu(frame.setup), *(setup_gpu(s) for s in frame.setups)) if g]
    return list(dict.fromkeys(out))


_CKPT = {True: "full", False: "none"}


def workload_fields(frame: Frame, setup: Setup | None = None) -> dict[str, object]:
    """The training workload the frame states (the Workload's fields, unset ones left out)."""
    s = setup or frame.setup
    model, params_b = model_fields(frame)
    k, d, c = s.knobs, frame.data, frame.constraints
    sharding = "fsdp" if k.strategy == "fsdp" else ("deepspeed" if k.strategy == "zero" else None)
    out: dict[str, object] = {
        "model": model, "params_b": params_b, "method": s.method, "stage": s.objective, "quant_bits": k.quant_bits,
        "samples": d.samples, "tokens": d.tokens, "epochs": d.epochs, "avg_tokens_per_sample": d.avg_tokens_per_sample,
        "dataset_gb": d.dataset_gb, "seq_len": k.seq_len or k.max_model_len, "micro_batch": k.micro_batch,
        "zero_stage": k.zero_stage, "lora_rank": k.lora_rank, "budget_cny": c.budget_cny,
        "budget_period": c.budget_period, "deadline_hours": c.deadline_hours, "clouds": list(c.clouds),
        "billing": c.billing, "objective": c.objective, "gpu_include": list(c.gpu_include),
        "gpu_exclude": list(c.gpu_exclude), "precision": k.precision, "optimizer": k.optimizer,
        "attention": k.attention, "loss": k.loss, "sharding": sharding,
        "activation_checkpointing": _CKPT.get(k.checkpointing) if k.checkpointing is not None else None}
    if out["method"] != "qlora" and out["quant_bits"]:
        out["method"] = "qlora" if out["method"] in (None, "lora") else out["method"]
        if out["method"] != "qlora":
            out["quant_bits"] = None
    return {key: v for key, v in out.items() if v is not None and v != [] and key in Workload.model_fields}


def serving_fields(frame: Frame) -> dict[str, object]:
    """The serving workload the frame states (ServingWorkload's fields, unset ones left out)."""
    s = frame.setup
    model, params_b = model_fields(frame)
    k, load, c = s.knobs, frame.load, frame.constraints
    weights = k.weights or ("int4" if s.method == "qlora" or k.quant_bits == 4 else None)
    out: dict[str, object] = {
        "model": model, "params_b": params_b, "weights": weights, "kv_dtype": k.kv_dtype,
        "max_model_len": k.max_model_len or k.seq_len, "input_tokens": load.input_tokens,
        "output_tokens": load.output_tokens, "concurrency": load.concurrency, "request_rate": load.request_rate,
        "ttft_ms": load.ttft_ms, "tpot_ms": load.tpot_ms, "clouds": list(c.clouds), "billing": c.billing,
        "objective": c.objective, "budget_cny": c.budget_cny, "mem_fraction": k.gpu_memory_utilization}
    return {key: v for key, v in out.items() if v is not None and v != []}


def frame_of(w: Workload) -> Frame:
    """The question a structured workload asks (a plan of it), so a follow-up in words continues it."""
    from service.frame import Constraints, Data, Hardware, Knobs

    ref = (ModelRef(name=w.model, id=w.model),) if w.model else (
        (ModelRef(name=f"{w.params_b:g}B", params_b=w.params_b, estimated=True),) if w.params_b else ())
    knobs = Knobs(seq_len=w.seq_len, micro_batch=w.micro_batch, zero_stage=w.zero_stage, lora_rank=w.lora_rank,
                  quant_bits=w.quant_bits, precision=w.precision, optimizer=w.optimizer, attention=w.attention,
                  loss=w.loss)
    setup = Setup(models=ref, method=w.method, objective=w.stage, knobs=knobs, hardware=Hardware(gpu_count=w.gpu_count))
    data = Data(samples=w.samples, tokens=w.tokens, epochs=w.epochs, avg_tokens_per_sample=w.avg_tokens_per_sample,
                dataset_gb=w.dataset_gb)
    constraints = Constraints(budget_cny=w.budget_cny, budget_period=w.budget_period if w.budget_cny else None,
                              deadline_hours=w.deadline_hours, clouds=tuple(w.clouds), billing=w.billing,
                              objective=w.objective, gpu_include=tuple(w.gpu_include), gpu_exclude=tuple(w.gpu_exclude))
    return Frame(task="train", asked="plan", setups=(setup,), data=data, constraints=constraints)


def job_fields(frame: Frame, read: Callable[[Frame], dict[str, object]] = workload_fields
               ) -> dict[str, object] | Missing:
    """The job's fields as `read` gives them, or the one slot that is missing: a model named without a size the
    engine can use is asked about by name, no model at all is asked for."""
    if (name := unsized_model(frame)) is not None:
        return Missing("model_size", name)
    fields = read(frame)
    if not fields.get("model") and not fields.get("params_b"):
        return Missing("model")
    return fields
