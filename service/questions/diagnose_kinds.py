"""What a run's frame says about the run, read by the diagnosis's route and its server part alike: whether it is a
server's run, what a server's post asks about, the kind of what was seen, the default card."""

from __future__ import annotations

from service.frame import Frame, Outcome, Setup

DEFAULT_GPU = "A100-80G-SXM"  # a run's GPU when the post names none, said in the answer
SERVER_ENGINES = frozenset({"vllm", "sglang", "lmdeploy", "trtllm", "tgi", "ollama", "llamacpp", "mindie",
                            "ktransformers", "xinference"})
CARD_SIZES = (8, 11, 12, 16, 20, 24, 32, 40, 48, 64, 80, 96, 141, 192)  # a card by the total its OOM message states
# The frame's observation kinds as the training engine (service/planner/questions/diagnose.py) groups them
_TRAIN_KIND = {"oom": "oom", "error": "oom", "memory": "memory", "hours": "hours", "util": "util",
               "host_oom": "host_oom", "slow": "slow", "scaling": "slow"}
_STATUS_KIND = {"oom": "oom", "error": "oom", "slow": "slow"}


def card_of(s: Setup, o: Outcome | None = None) -> str | None:
    """The GPU as named, or a card of the memory the post (or its OOM message) states ('单卡24G显存', '23.65 GiB
    total capacity': a 24G card), never an assumed one."""
    hw = s.hardware
    if hw.gpu:
        return hw.gpu
    said = hw.gpu_memory_gb or (o.card_gb / 0.96 if o is not None and o.card_gb else None)
    if said:
        return f"{min(CARD_SIZES, key=lambda c: abs(c - said)):g}G"
    return None


def _outcome(f: Frame) -> Outcome | None:
    """What was seen: the asked setup's outcome, else any setup's."""
    for s in (f.setup, *f.setups):
        o = s.outcome
        if o is not None and (o.kind is not None or o.status != "unknown"):
            return o
    return None


def kind_of(o: Outcome | None) -> str | None:
    if o is None:
        return None
    return o.kind or _STATUS_KIND.get(o.status)


TRAINED = frozenset({"full", "lora", "freeze", "pretrain"})


def is_server(f: Frame) -> bool:
    """A server's run: the task is serving (or an engine serves it, or a released quantised checkpoint is run:
    'Qwen2-57B-A14B-Instruct-GPTQ-Int4 生成很慢') and no training method is named."""
    engine = next((s.knobs.engine for s in f.setups if s.knobs.engine), None)
    released = any(m.weights for s in f.setups for m in s.models)
    if f.task == "train" and not (released and f.setup.method in (None, "qlora") and not f.setup.objective):
        return False
    if engine not in SERVER_ENGINES and (f.setup.method in TRAINED or f.setup.objective):
        return False  # 'full ft on a100 x8': a training run, whatever the task reads
    return f.task == "serve" or engine in SERVER_ENGINES or released


def serve_asked(f: Frame) -> str | None:
    """What a server's post asks about (None: nothing observed)."""
    statuses = [s.outcome.status if s.outcome is not None else "unknown" for s in f.setups]
    if len(f.setups) >= 2 and any(st in ("oom", "error") for st in statuses):
        return "oom"
    tps = [s.knobs.tp for s in f.setups]
    if len(f.setups) >= 2 and None not in tps and len(set(tps)) > 1:
        return "compare"  # TP8 against TP4
    o = _outcome(f)
    kind = kind_of(o)
    if o is None:
        return None
    if o.where == "inference" and kind in ("oom", "memory"):
        return "growth"
    if kind in ("oom", "error"):
        return "oom"
    if kind in ("slow", "scaling", "hours", "util") or o.tokens_per_s is not None or o.ttft_ms is not None:
        return "slow"
    if kind == "memory":
        return "memory"
    if o.status == "worked" and f.setup.knobs.weights == "fp8":
        return "why_runs"  # 'why does FP8 run on A100'
    return None
