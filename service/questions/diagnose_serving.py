"""The `diagnose` question type for a server ('lmdeploy tp=4 llama2-70B 显存缓慢增长 OOM', 'tp4能跑，tp8就oom',
'HF能跑 vllm OOM', 'TP8 vs TP4', 'why does FP8 run on A100', '9 tokens/s 正常吗'): what routes a question here
(an engine named or serving words, no training words), the setups read from its words, and the answer's words.
The engine function is service/planner/questions/serve_diagnose.py; the figures are its."""

from __future__ import annotations

import re
from typing import Any

from service.planner.questions.serve_diagnose import ServeCase, ServeDiagnosis
from service.questions.base import Ask, Phrases
from service.questions.routing import subject_count, subject_gpu
from service.reader.cues import CUES
from service.reader.serve_setups import ServeRead, read_serve

_SERVED, _TRAINED = CUES["serve"], CUES["train"]
SERVER_ENGINES = frozenset({"vllm", "sglang", "lmdeploy", "trtllm", "tgi", "ollama", "llamacpp", "mindie",
                            "ktransformers", "xinference"})
DEFAULT_GPU = "A100-80G-SXM"
# An NPU post that names no card ('vllm-ascend', 'PYTORCH_NPU_ALLOC_CONF', 'MindIE'): the Ascend card people rent
_NPU = re.compile(r"ascend|(?<![A-Za-z])npu|mindie|昇腾|910b", re.IGNORECASE)
ASCEND_DEFAULT = "ASCEND-910B2"
_QUOTED = re.compile(r"\"([^\"]{12,})\"")


def _gpu_positions(a: Ask) -> tuple[tuple[int, str], ...]:
    """Where each GPU the subject names sits in the text (the spans the name finder matched)."""
    spans = [s for s in a.extra.get("mentioned") or [] if isinstance(s, str)]
    ids = list(a.read.parsed.subject.gpus)
    low = a.text.lower()
    found = sorted((low.find(s.lower()), s) for s in spans if low.find(s.lower()) >= 0)
    return tuple((pos, gpu) for (pos, _), gpu in zip(found, ids, strict=False))


_TP_WORDS = re.compile(r"(?<![A-Za-z])(?:tp\s*[=:]?\s*\d|tensor[-_ ]parallel)", re.IGNORECASE)
# What only a server's post says when it names no engine: its launcher and flags ('text-generation-launcher',
# 'max batch total tokens', '--max-model-len', 'build engine'), a released inference checkpoint being run
# ('running Meta-Llama-3.1-405B-Instruct-fp8 on 8xH100'), an NPU's allocator, a latency or a load test.
_SERVER_HINTS = re.compile(
    r"首字|首token|压测|(?<![A-Za-z])(?:launcher|max[-_ ]batch[-_ ](?:total|prefill)[-_ ]tokens|max[-_ ]total[-_ ]tokens|"
    r"max[-_ ]model[-_ ]len|gpu[-_ ]memory[-_ ]utilization|max[-_ ]num[-_ ]seqs|build(?:ing)? (?:the )?engine|"
    r"tp[-_ ]size|world[-_ ]size\s*\d|PYTORCH_NPU_ALLOC_CONF|ttft|tpot|qps|"
    r"(?:running|run|launch(?:ing)?|load(?:ing)?|serv(?:e|ing))\s+\S*(?:instruct|chat)[-_]?(?:fp8|awq|gptq|int4|int8|gguf)?"
    r"(?![A-Za-z]))", re.IGNORECASE)


def is_server(a: Ask, hints: bool = True) -> bool:
    """A post about a server: an engine named, serving words or a tensor-parallel degree (or, with `hints`, a
    server's launcher, flags or released checkpoint being run), and no training words."""
    if _TRAINED.search(a.text):
        return False
    engine = a.read.slots.get("engine")
    return (engine in SERVER_ENGINES or _SERVED.search(a.text) is not None or _TP_WORDS.search(a.text) is not None
            or (hints and _SERVER_HINTS.search(a.text) is not None))


def server_question(a: Ask, hints: bool = True) -> ServeRead | None:
    """The setups and the question, when the post asks to explain what a server did (None: not a diagnosis).
    Without `hints` only an engine, serving words or a TP degree make it a server's (a serving question that
    mentions a flag stays a serving question)."""
    if not is_server(a, hints) or not (a.slots.get("model") or a.slots.get("params_b")):
        return None
    r = read_serve(a.text, _gpu_positions(a))
    observed = (a.read.slots.get("observed") or {}).get("kind")
    if observed == "host_oom" and a.read.slots.get("engine") not in SERVER_ENGINES:
        return None  # host RAM killed while loading ('8 ranks via torchrun', device_map): the host rule answers
    if observed == "memory" and r.asked not in ("oom", "growth"):
        return None  # memory seen on a server: the engine's reservation rule answers
    if r.asked == "slow" and r.tokens_per_s is None and observed not in ("slow",):
        return None
    return r if r.asked else None


_ASKS_WHY = re.compile(r"正常吗|正常么|正常嘛|正常不|是否正常|正不正常|为什么|为啥|怎么回事|是.{0,8}问题还是|"
                       r"(?<![A-Za-z])(?:expected|normal|why|misconfig\w*|is (?:this|it|that) (?:normal|expected))"
                       r"(?![A-Za-z])", re.IGNORECASE)


def explains_observation(a: Ask) -> bool:
    """A serving question that states what a server did (memory in use, a TTFT, a speed, an OOM) and asks
    whether it is normal or why: a diagnosis, not a new deployment ('vllm起个qwen2.5 1.5b 单卡a10 显存直接吃到21g
    正常吗', 'TTFT ~4s at 8 QPS. Expected or misconfig?')."""
    observed = a.read.slots.get("observed")
    return bool(observed) and _ASKS_WHY.search(a.text) is not None and not _TRAINED.search(a.text)


def wants_serving_diagnosis(a: Ask) -> bool:
    """A question typed as serving / compare / capacity that explains a server's run (an OOM, a speed, FP8 on
    a card, two TP degrees compared): answered by `diagnose`, never sized as a new deployment. Two layouts
    compared by a serving question ('tp2x4副本 还是 tp4x2副本 吞吐哪个高') stay a serving plan."""
    r = server_question(a, hints=False)
    if r is None or (r.asked == "slow" and r.tokens_per_s is None):
        return False
    return r.asked != "compare" or a.read.type in ("compare", "diagnose", "knowledge")


def serving_args(a: Ask, r: ServeRead) -> dict[str, Any]:
    """The ServeCase of the post, and what was assumed (the GPU, the engine)."""
    slots = a.read.slots
    gpu = subject_gpu(a)
    default_gpu = ASCEND_DEFAULT if _NPU.search(a.text) else DEFAULT_GPU
    count = subject_count(a, None)
    if r.gpus and r.gpus > (count or 0):  # '2*8*80G': two nodes of eight
        count = r.gpus
    engine = slots.get("engine")
    engine = "hf" if engine == "transformers" else engine
    named_engine = engine or next((s.engine for s in r.setups if s.engine), None)
    setups = []
    for s in r.setups:
        tp = s.tp or (r.setups[0].tp if len(r.setups) == 1 else None)
        n = (tp or 1) * (r.pp or 1)
        setups.append({
            "engine": s.engine or engine or "vllm", "gpu": s.gpu or gpu or default_gpu,
            "gpus": max(n, count or 1) if s.tp is None and len(r.setups) == 1 else n,
            "tp": tp, "pp": r.pp, "weights": slots.get("weights"), "kv_dtype": slots.get("kv_dtype") or "auto",
            "max_model_len": slots.get("max_model_len"), "mem_fraction": r.mem_fraction,
            "enforce_eager": r.enforce_eager, "outcome": s.outcome,
            "gpus_assumed": count is None and tp is None and r.pp is None,
            "tokens_per_s": r.tokens_per_s if r.asked == "slow" else None, "concurrency": slots.get("concurrency")})
    if r.asked in ("oom", "growth") and not any(s["outcome"] == "oom" for s in setups):
        setups[-1]["outcome"] = "oom"
    model = a.slots.get("model") or f"{a.slots.get('params_b'):g}B"
    case = ServeCase(model=str(model), setups=setups, asked=r.asked,
                     input_tokens=slots.get("input_tokens"), output_tokens=slots.get("output_tokens"))
    keep = {k: v for k, v in a.slots.items() if k in ("model", "params_b")}
    return {**keep, "serving": case.model_dump(), "gpu": setups[0]["gpu"], "gpu_count": setups[0]["gpus"],
            "gpu_assumed": gpu is None, "engine_assumed": named_engine is None, "engine": named_engine or "vllm"}


# --- the answer ---------------------------------------------------------------------------------------------------


def _label(f: dict[str, Any], ph: Phrases) -> str:
    engine = ph["engine_names"].get(f["engine"], f["engine"])
    shape = f"TP{f['tp']}" + (f" x PP{f['pp']}" if f["pp"] > 1 else "")
    where = f"{f['gpus']} x {f['gpu_name']}"
    return f"{engine} {shape}, {where}" if f["engine"] not in ("hf", "ollama", "llamacpp") else f"{engine}, {where}"


def _num(x: Any, digits: int = 1) -> str:
    return "—" if x is None else f"{x:,.{digits}f}"


def _state(f: dict[str, Any], ph: Phrases) -> str:
    p = ph["sdia"]
    if f.get("gpu_share") is not None and f["engine"] in ("ollama", "llamacpp"):
        return str(p["state_local"]).format(share=round(100 * f["gpu_share"]), tps=_num(f.get("tokens_per_s_single")))
    if not f["starts"]:
        return str(p["state_fails"])
    if f.get("tokens_per_s_at_load"):
        return str(p["state_starts_load"]).format(tps=_num(f.get("tokens_per_s_single")),
                                                   load=_num(f["tokens_per_s_at_load"], 0),
                                                   conc=f"{f.get('concurrency') or 0:g}")
    return str(p["state_starts"]).format(tps=_num(f.get("tokens_per_s_single")))


def _cause(code: str, d: dict[str, Any], f: dict[str, Any], ph: Phrases) -> str:
    text = str(ph["sdia"]["causes"].get(code, code))
    setups = d["setups"]
    fast = setups[d["faster"]] if d.get("faster") is not None else f
    slow = setups[1 - d["faster"]] if d.get("faster") is not None and len(setups) == 2 else f
    est = f.get("tokens_per_s_at_load") or f.get("tokens_per_s_single")
    zh = ph["hours_unit"] == "小时"
    reason = str(f.get("reason_zh")) if zh and f.get("reason_zh") else _QUOTED.sub(r"\1", str(f.get("reason", "")))
    return text.format(
        gpus=f["gpus"], tp=f["tp"], model=d["model_name"], w=_num(f["weights_gib_per_gpu"]),
        act=_num(f.get("activation_peak_gib")), frac=f"{f.get('mem_fraction') or 0.9:g}",
        kv=_num(f["kv_cache_gib_per_gpu"]), fits=f"{f['max_model_len_fits']:,}", ctx=f"{f['max_model_len']:,}",
        graph=_num(f.get("graph_gib")), reason=reason, pct=round(100 * (f.get("mem_fraction") or 0.8)),
        label=_label(f, ph), gpu=f["gpu_name"], est=_num(est), seen=_num(f.get("observed_tokens_per_s")),
        ratio=d.get("ratio") if d.get("ratio") is not None else "—",
        cpu=round(100 * (1 - (f.get("gpu_share") or 1.0))),
        a=fast["tp"], b=slow["tp"], share=f"1/{max(1, fast['tp'] // max(1, slow['tp']))}",
        fast=_num(fast.get("tokens_per_s_single")), slow=_num(slow.get("tokens_per_s_single")),
        link=str(ph["sdia"]["causes"]["link_nvlink" if fast.get("nvlink", True) else "link_pcie"]).format(
            gpu=fast["gpu_name"]))


def _focus(d: dict[str, Any]) -> dict[str, Any]:
    """The setup the verdict is about: the failing one, else the first."""
    setups: list[dict[str, Any]] = d["setups"]
    failing = [f for f in setups if f.get("outcome") == "oom"]
    if d["asked"] in ("oom", "growth") and failing:
        return failing[0]
    faster: int | None = d.get("faster")
    return setups[faster] if faster is not None else setups[0]


def render_serving(d: ServeDiagnosis, ph: Phrases) -> list[str]:
    """The answer's lines: the verdict and the cause first, the engine's words, each setup's figures, the fix."""
    art = d.model_dump(mode="json")
    p = ph["sdia"]
    f = _focus(art)
    zh = ph["hours_unit"] == "小时"
    if d.asked == "compare" and d.expected is None and d.faster is not None:
        opener = str(p["compare_open"]).format(faster=_label(art["setups"][d.faster], ph))
    else:
        opener = str(p["expected"] if d.expected else p["unexpected"]) if d.expected is not None else ""
    lines = [opener + _cause(d.cause, art, f, ph) + ("。" if zh else ".")]
    quoted = _QUOTED.search(str(f.get("reason", "")))
    if quoted and d.asked != "why_runs":
        lines.append(str(p["message"]).format(message=quoted.group(1)))
    lines.append(str(p["engine"]).format(engine=d.engine_assumed_zh if zh else d.engine_assumed))
    lines += [""] + [str(p["setup"]).format(label=_label(x, ph), w=_num(x["weights_gib_per_gpu"]),
                                            kv=_num(x["kv_cache_gib_per_gpu"]), tokens=f"{x['kv_capacity_tokens']:,}",
                                            ctx=f"{x['max_model_len']:,}", state=_state(x, ph))
                     for x in art["setups"]]
    if d.fix and d.asked != "compare":
        lines += ["", str(p["fix_title"])]
        fixed = art.get("fixed")
        if fixed and fixed["starts"]:
            lines.append(str(p["fixed"]).format(fix=d.fix, kv=_num(fixed["kv_cache_gib_per_gpu"]),
                                                tokens=f"{fixed['kv_capacity_tokens']:,}",
                                                ctx=f"{fixed['max_model_len']:,}"))
        elif fixed:
            lines.append(str(p["fixed_still"]).format(fix=d.fix, reason=(zh and fixed.get("reason_zh")) or fixed["reason"]))
        else:
            lines.append(str(p["fix"]).format(fix=d.fix))
    if d.causes:
        lines += ["", str(p["more_title"]), *[f"- {_cause(c, art, f, ph)}" for c in d.causes]]
    return lines
