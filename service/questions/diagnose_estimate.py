"""The engine's figure for a diagnosed setup, in words: the verdict line of the training estimate (memory, hours,
tokens/s, utilisation, host RAM) and the rule lines (an engine's reservation, bf16 on a card without it). The
diagnose answer puts these after the cause model's first lines (service/questions/diagnose_render.py), or first
when no cause applies."""

from __future__ import annotations

from typing import Any

from service.questions.base import Phrases
from service.questions.texts import memory_line, method_name


def _verdict_key(art: dict[str, Any]) -> str:
    kind = art["observation"]["kind"]
    if kind in ("hours", "slow"):
        ratio = art.get("ratio")
        if art.get("data_unknown"):
            return "dia_hours_data"
        if art.get("observed_tokens_per_s") is not None and ratio is not None:
            return "dia_tps_ok" if art["expected"] else ("dia_tps_fast" if ratio < 1 else "dia_tps_slow")
        if ratio is None:
            if art.get("speedup_vs_reference") is not None and art["expected"] is False:
                return "dia_slow_unscaled"
            return "dia_slow_structural" if art["expected"] else "dia_hours_unknown"
        return "dia_hours_ok" if art["expected"] else ("dia_hours_fast" if ratio < 1 else "dia_hours_slow")
    if kind == "oom":
        return "dia_oom_expected" if art["expected"] else "dia_oom_unexpected"
    if kind == "memory":
        if art["observation"].get("memory_gb") is None:
            return "dia_memory_unstated"
        return "dia_memory_ok" if art["expected"] else "dia_memory_off"
    if kind == "util":
        if art.get("util_high"):
            return "dia_util_high"
        if art["expected"]:
            return "dia_util_expected"
        return "dia_util_low" if art["observation"].get("util_pct") is not None else "dia_util_low_unstated"
    return "dia_host_copies" if art.get("host_copies_gib") else "dia_host"


def _cause(c: dict[str, Any], ph: Phrases) -> str:
    text = str(ph["dia_causes"].get(c["code"], c["code"]))
    if "per_gpu_gib" in c:
        text += str(ph["dia_cause_fig"]).format(need=c["per_gpu_gib"])
    return text.format(host=c.get("host_ram_gib", ""), speedup=c.get("speedup", ""), gpus=c.get("gpus", ""),
                       ref=c.get("ref", 1))


def _fix(f: dict[str, Any], ph: Phrases) -> str:
    code = str(f["code"])
    name = ph["dia_fixes"].get(code.split("_")[0] if code.startswith("gpus_") else code, code)
    text = str(name).format(count=f.get("gpu_count"), seq=f.get("seq_len"))
    if "per_gpu_gib" in f:
        text += str(ph["dia_fix_fig"]).format(need=f["per_gpu_gib"], count=f["gpu_count"])
    return text


def _tokens(n: Any, ph: Phrases) -> str:
    if not isinstance(n, (int, float)):
        return ""
    if ph["hours_unit"] == "小时":
        return f"{n / 1e8:.2f} 亿" if n >= 1e8 else f"{n / 1e4:,.0f} 万"
    return f"{n / 1e9:.2f}B" if n >= 1e9 else f"{n / 1e6:,.0f}M"


def _num(x: Any) -> str:
    return "" if x is None else f"{x:g}" if isinstance(x, float) else str(x)


def estimate_text(art: dict[str, Any], ph: Phrases) -> str:
    """The old diagnosis text of a training setup from its answer's JSON (`art`)."""
    if not art.get("sized", True):
        return _render_rule(art, ph)
    obs = art["observation"]
    whole = bool(art.get("whole_run"))
    span = str(ph["dia_span_run" if whole else "dia_span_epoch"]).format(epochs=_num(art.get("epochs")))
    first = str(ph[_verdict_key(art)]).format(
        count=art["gpu_count"], gpu=art["gpu_name"], model=art["model"]["name"], method=method_name(art, ph),
        seq=art["strategy"]["seq_len"], need=art["per_gpu_gib"], usable=art["usable_gib"], span=span,
        hours=obs.get("hours", ""), ratio=art.get("ratio", ""),
        est=art.get("estimated_hours_run" if whole else "estimated_hours_per_epoch", ""),
        tps=art.get("tokens_per_s", ""), seen=obs.get("memory_gb", ""), util=obs.get("util_pct", ""),
        host=art.get("host_ram_needed_gib", ""), speedup=art.get("speedup_vs_reference", ""),
        ranks=art.get("ranks", ""), copies=f"{art.get('host_copies_gib') or 0:,.0f}",
        ram=str(ph["dia_host_ram"]).format(seen=f"{art['host_ram_seen_gb']:,.0f}")
        if art.get("host_ram_seen_gb") and (art.get("host_copies_gib") or 0) * 2**30 / 1e9 > art["host_ram_seen_gb"]
        else "",
        ref=art.get("reference_gpus", 1), tokens=_tokens(art.get("tokens_in_observed_time"), ph),
        data=ph["dia_data_run" if obs.get("whole_run") else "dia_data_epoch"],
        seen_tps=_num(obs.get("tokens_per_s")))
    lines = [first, memory_line(art, ph)]
    items = (art.get("assumptions_zh") if ph["hours_unit"] == "小时" else None) or []
    lines += [f"> {x}" for x in items if "按 " in x and "估算" in x] if items else []
    if art.get("causes"):
        lines += ["", str(ph["dia_cause_title"]), *[f"- {_cause(c, ph)}" for c in art["causes"]]]
    if art.get("fixes"):
        lines += ["", str(ph["dia_fix_title"]), *[f"- {_fix(f, ph)}" for f in art["fixes"]]]
    return "\n".join(lines)


def _render_rule(art: dict[str, Any], ph: Phrases) -> str:
    if art.get("rule") is None:
        return str(ph["ask"]["model"])
    c = art["causes"][0]
    first = str(ph[f"dia_rule_{art['rule']}"]).format(gpu=art["gpu_name"], pct=round(100 * c.get("fraction", 0)),
                                                      reserved=c.get("reserved_gib", ""))
    lines = [first, "", str(ph["dia_fix_title"]), *[f"- {ph['dia_fixes'][f['code']]}" for f in art["fixes"]]]
    items = (art.get("assumptions_zh") if ph["hours_unit"] == "小时" else None) or art.get("assumptions") or []
    return "\n".join(lines + ([""] + [f"> {x}" for x in items] if items else []))


