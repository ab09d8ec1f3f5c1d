"""Question type `diagnose`: the user reports what a run did and asks whether it is expected ('训一个epoch要20
小时正常吗', '8卡4k就OOM', 'GPU util 40%'). The engine's figure for the same setup, the verdict, the likely cause
and the change that fixes it. Engine: service/planner/questions/diagnose.py."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from service.assistant.intents.base import Artifact, Ask, Asked, Missing, Phrases, QuestionType, workload_of
from service.assistant.intents.render import memory_line, method_name
from service.assistant.intents.routing import subject_count, subject_gpu, without
from service.planner.lenient import catalog_for, with_assumptions
from service.planner.questions.diagnose import Observation, diagnose


class DiagnoseArgs(Asked):
    gpu: str = Field(description="the GPU the run used: A800, 4090, A100 80G ...")
    observation: Observation = Field(description="what the run did: kind oom | hours | memory | util | host_oom | "
                                                 "slow, with the figures the user gave")


def _run(ctx: Any, args: DiagnoseArgs) -> Artifact:
    w = workload_of(args).model_copy(update={"gpu_count": None})
    cat, said = catalog_for(ctx.catalog, w)
    return with_assumptions(diagnose(cat, w, args.gpu, args.gpu_count or 1, args.observation), said)


def _route(a: Ask) -> dict[str, Any] | Missing:
    observed = a.reading.slots.get("observed") or (a.prev.args.get("observation") if a.same_type and a.prev else None)
    if not observed:
        return Missing("observation")
    if not (a.slots.get("model") or a.slots.get("params_b")):
        return Missing("model")
    gpu = subject_gpu(a)
    if gpu is None:
        return Missing("gpu")
    return {**without(a.slots, "gpu_include", "gpu_count"), "gpu": gpu, "gpu_count": subject_count(a) or 1,
            "observation": observed}


def _verdict_key(art: Artifact) -> str:
    kind = art["observation"]["kind"]
    if kind in ("hours", "slow"):
        ratio = art.get("ratio")
        if art["expected"] is None:
            return "dia_hours_unknown"
        return "dia_hours_ok" if art["expected"] else ("dia_hours_fast" if (ratio or 1) < 1 else "dia_hours_slow")
    if kind == "oom":
        return "dia_oom_expected" if art["expected"] else "dia_oom_unexpected"
    if kind == "memory":
        return "dia_memory_ok" if art["expected"] else "dia_memory_off"
    if kind == "util":
        return "dia_util_expected" if art["expected"] else "dia_util_low"
    return "dia_host"


def _cause(c: Artifact, ph: Phrases) -> str:
    text = str(ph["dia_causes"].get(c["code"], c["code"]))
    if "per_gpu_gib" in c:
        text += str(ph["dia_cause_fig"]).format(need=c["per_gpu_gib"])
    return text.format(host=c.get("host_ram_gib", ""))


def _fix(f: Artifact, ph: Phrases) -> str:
    code = str(f["code"])
    name = ph["dia_fixes"].get(code.split("_")[0] if code.startswith("gpus_") else code, code)
    text = str(name).format(count=f.get("gpu_count"), seq=f.get("seq_len"))
    if "per_gpu_gib" in f:
        text += str(ph["dia_fix_fig"]).format(need=f["per_gpu_gib"], count=f["gpu_count"])
    return text


def _render(art: Artifact, ph: Phrases) -> str:
    obs = art["observation"]
    first = str(ph[_verdict_key(art)]).format(
        count=art["gpu_count"], gpu=art["gpu_name"], model=art["model"]["name"], method=method_name(art, ph),
        seq=art["strategy"]["seq_len"], need=art["per_gpu_gib"], usable=art["usable_gib"],
        hours=obs.get("hours", ""), est=art.get("estimated_hours_per_epoch", ""), ratio=art.get("ratio", ""),
        tps=art.get("tokens_per_s", ""), seen=obs.get("memory_gb", ""), util=obs.get("util_pct", ""),
        host=art.get("host_ram_needed_gib", ""))
    lines = [first, memory_line(art, ph)]
    if art.get("causes"):
        lines += ["", str(ph["dia_cause_title"]), *[f"- {_cause(c, ph)}" for c in art["causes"]]]
    if art.get("fixes"):
        lines += ["", str(ph["dia_fix_title"]), *[f"- {_fix(f, ph)}" for f in art["fixes"]]]
    return "\n".join(lines)


DIAGNOSE = QuestionType(
    name="diagnose", tool="diagnose_run", args=DiagnoseArgs, run=_run,
    summary=lambda o: f"expected={o['expected']}: engine {o['per_gpu_gib']} GiB per GPU on {o['gpu_count']}x "
                      f"{o['gpu']}, {o['training_hours']} h",
    route=_route, render=_render,
    result=lambda o: {"diagnose": {k: o.get(k) for k in ("observation", "expected", "gpu", "gpu_count", "per_gpu_gib",
                                                         "usable_gib", "fits", "estimated_hours_per_epoch", "ratio",
                                                         "tokens_per_s", "causes", "fixes", "host_ram_needed_gib")}},
    doc="The user reports what a training run did (OOM on N x GPU at length L, T hours an epoch, X GB used, low "
        "GPU utilisation, host RAM overflow) and asks whether it is expected: the engine's figure for that setup, "
        "the verdict, the likely cause and the change that fixes it, with numbers.")
