"""The words of a diagnosis from the cause model (service/planner/causes): the verdict and the top cause with its
number first, the fix that removes it with the figure after it, the one setting that would settle it, the
engine's figure beside the user's, the other causes that apply. Every sentence from the phrase table
(prompts/questions/diagnose.yaml, `dx`); every number the engine's."""

from __future__ import annotations

from collections.abc import Mapping

from service.planner.causes.types import Cause, Diagnosis, Fix
from service.questions.base import Phrases

FLAGS = {"vllm": "gpu_memory_utilization", "sglang": "mem_fraction_static", "lmdeploy": "cache_max_entry_count",
         "trtllm": "free_gpu_memory_fraction"}
GB_PER_GIB = 2**30 / 1e9


def num(x: float) -> str:
    """A figure as an answer writes it: 152,064; 59.1; 1.5; 0.25."""
    if abs(x) >= 100:
        return f"{x:,.0f}"
    if float(x).is_integer():
        return f"{int(x)}"
    return f"{x:.1f}" if abs(x) >= 10 else f"{x:.2f}".rstrip("0").rstrip(".")


def _clauses(c: Cause, p: Phrases, values: dict[str, str]) -> dict[str, str]:
    d = c.detail
    cl = p["clause"]
    v = c.explains.value if c.explains is not None else 0.0
    ram = d.get("ram_gb", 0.0)
    return {
        "shards_clause": str(cl["shards"]).format(**values) if d.get("shards", 1) > 1 else "",
        "all_clause": str(cl["all"]) if d.get("all") else "",
        "p2p_clause": str(cl["p2p"]) if d.get("no_p2p") else "",
        "ram_clause": str(cl["ram"]).format(**values) if ram and v * GB_PER_GIB >= 0.8 * ram else "",
        "gqa_clause": str(cl["gqa"]).format(**values) if d.get("no_gqa") else "",
        "load_clause": "" if not d.get("at_load_tps") else str(cl["load"]).format(**values) if d.get("concurrency")
        else str(cl["load_rate"]).format(**values),
    }


def cause_text(c: Cause, ph: Phrases, names: dict[str, str]) -> str:
    p = ph["dx"]
    values = {k: num(v) for k, v in c.detail.items()}
    values.update(names)
    values["v"] = num(c.explains.value) if c.explains is not None else ""
    values["ram"] = num(c.detail.get("ram_gb", 0.0))
    values["cpu_pct"] = num(100 * c.detail.get("cpu_share", 0.0))
    values["idle"] = num(100 - c.detail.get("util", 100.0))
    values["flag"] = FLAGS.get(names.get("engine_code", ""), "gpu_memory_utilization")
    values.update(_clauses(c, p, values))
    return str(p["cause"].get(c.code, c.code)).format(**values)


def fix_text(f: Fix, ph: Phrases, line: bool = True) -> str:
    p = ph["dx"]
    name = str(p["fix"].get(f.code, f.code))
    setting = str(p["setting"]).format(setting=f.setting) if f.setting else ""
    fixed = ""
    if f.fixed is not None:
        key = f.fixed.unit if f.fixed.unit != "GiB" or f.fits is None else ("GiB_fits" if f.fits else "GiB_over")
        fixed = str(p["fixed"].get(key, "")).format(v=num(f.fixed.value))
    if not line:
        return str(p["other_fix"]).format(fix=name, setting=setting)
    return str(p["fix_line"]).format(fix=name, setting=setting, fixed=fixed)


def _verdict(d: Diagnosis, ph: Phrases) -> str:
    if d.verdict is None:
        return ""
    kind = "serve_runtime" if d.top is not None and d.top.code == "runtime_headroom" else d.observed_kind
    return str(ph["dx"]["verdict"].get(f"{kind}_{'yes' if d.verdict else 'no'}", ""))


def impossible_text(d: Diagnosis, ph: Phrases, card_gib: float) -> str:
    imp = d.impossible
    if imp is None:
        return ""
    return str(ph["dx"]["impossible"][imp.misreading]).format(
        seen=num(imp.seen.value), card=num(card_gib), gib=num(imp.seen.value / 1024))


def head_lines(d: Diagnosis, ph: Phrases, names: dict[str, str], figures: dict[str, str]) -> list[str]:
    """The answer's first lines: an impossible figure said first; the verdict and the top cause with its number;
    the fix with the figure after it; the one setting that settles it."""
    p = ph["dx"]
    lines: list[str] = []
    if d.impossible is not None:
        lines.append(impossible_text(d, ph, float(figures.get("card_raw", "0") or 0)))
    top = d.top
    if top is not None:
        head = ("" if d.impossible is not None else _verdict(d, ph)) + cause_text(top, ph, names)
        if d.observed_kind == "train_oom" and d.verdict is False:
            head += str(p["oom_no_tail"]).format(**figures)
        elif d.observed_kind.endswith("_slow") and d.verdict is False and d.observed and d.expected and \
                d.observed.unit == d.expected.unit and top.code in ("decode_bandwidth",):
            pct = 100 * d.observed.value / max(1e-9, d.expected.value)
            head += str(p["slow_tail"]).format(seen=num(d.observed.value), pct=num(pct))
        lines.append(head + str(p["end"]))
        if top.fix is not None:
            lines.append(fix_text(top.fix, ph))
        if top.detail.get("wide_tp"):  # the pool is a sliver: a shorter context serves one request at a time
            lines.append(str(p["wider"]).format(**{k: num(v) for k, v in top.detail.items()}))
    if d.ask:
        lines.append(ask_line(d, ph))
    return lines


def ask_line(d: Diagnosis, ph: Phrases) -> str:
    """The one setting that would settle it, asked."""
    p = ph["dx"]
    return str(p["ask_line"]).format(question=p["ask"].get(d.ask or "", d.ask))


def other_lines(d: Diagnosis, ph: Phrases, names: dict[str, str], start: int = 1) -> list[str]:
    """The causes after the first `start` (the top one is said first), each with its number and fix."""
    rest = d.causes[start:]
    if not rest:
        return []
    out = ["", str(ph["dx"]["others"])]
    for c in rest:
        fix = fix_text(c.fix, ph, line=False) if c.fix is not None else ""
        out.append(f"- {cause_text(c, ph, names)}{fix}")
    return out


def figure_line(d: Diagnosis, ph: Phrases, figures: Mapping[str, object]) -> str:
    """The engine's figure beside the user's."""
    fig = ph["dx"]["figure"]
    kind = d.observed_kind
    values = dict(figures)
    if d.expected is not None:
        values["need"] = num(d.expected.value)
    values["seen"] = num(d.observed.value) if d.observed is not None else ""
    if kind in ("train_slow", "serve_slow"):
        if d.observed is not None and d.observed.unit == "ms":
            return str(fig["serve_ttft"]).format(**values)
        seen_key = f"{kind}_seen"
        values["seen_clause"] = str(fig[seen_key]).format(**values) if d.observed is not None else ""
        if kind == "train_slow":
            values["tps"] = values.get("need", "")
    if kind == "scaling":
        values["one"] = num(d.reference.value) if d.reference is not None else ""
        values["ref"] = str(d.reference_gpus or values.get("ref", 1))
    if kind == "train_slow" and values.get("est") and values.get("hours"):
        return str(fig["train_hours"]).format(**values)
    if kind in ("train_memory", "serve_memory") and d.observed is None:
        return ""
    if kind == "host_oom":
        ram = d.observed.value if d.observed is not None else 0.0
        values["ram_clause"] = str(ph["dx"]["clause"]["ram"]).format(ram=num(ram)) if ram else ""
    if kind == "serve_oom" or d.expected is None:
        return ""
    return str(fig.get(kind, "")).format(**values)
