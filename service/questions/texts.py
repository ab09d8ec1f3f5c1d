"""What the question types' answers write alike, from their typed parts with the phrases in
prompts/answer.<lang>.yaml: the method, the memory arithmetic, where a GPU is rented, the assumptions, an option of
a comparison, what a follow-up carried over. Each type's own answer (its first line first) is its module's render;
nothing is computed here but formatting."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from service.frame import Frame
from service.questions.parts import MemoryTerms, PlanRow, Rental, StrategyEcho
from service.questions.phrases import Phrases
from service.questions.plan_text import error_band


def n1(x: float | None, digits: int = 1) -> str:
    """A figure as the answers write it (one decimal unless asked), or '—'."""
    return "—" if x is None else f"{x:,.{digits}f}"


def method_label(strategy: StrategyEcho, ph: Phrases) -> str:
    """The method as the reader's language names it ('LoRA', '全参微调')."""
    return ph.name("method_names", strategy.method)


def _strategy(strategy: StrategyEcho, model_kind: str | None, ph: Phrases) -> str:
    s = strategy
    bits = f" {s.quant_bits}-bit" if s.quant_bits else ""
    parts = [f"{method_label(s, ph)}{bits}", f"ZeRO-{s.zero_stage}", str(s.precision).replace("_", " ").upper()]
    if model_kind in ("decoder", "encoder"):
        parts.append(ph.text("seq_part", seq=s.seq_len))
    return ("，" if ph.zh else ", ").join(parts)


def memory_terms_line(memory: MemoryTerms, strategy: StrategyEcho, model_kind: str | None, ph: Phrases) -> str:
    """'权重 14.2 + 梯度 … = 每卡 30.1 GiB（LoRA，ZeRO-0，…）', with the estimate's expected error when known."""
    m = memory
    line = ph.text("feas_memory", weights=m.weights_gib, gradients=m.gradients_gib, optimizer=m.optimizer_gib,
                   activations=m.activations_gib, overhead=m.overhead_gib, total=m.per_gpu_gib,
                   strategy=_strategy(strategy, model_kind, ph))
    band = error_band(m.expected_error_pct, m.expected_error_rows, ph)
    return line[:-1] + band + line[-1] if band and line[-1] in "。." else line + band


def method_name(art: Mapping[str, Any], ph: Phrases) -> str:
    """method_label of an answer's JSON (the diagnosis's renderer, until it reads its typed answer)."""
    return method_label(StrategyEcho.model_validate(art["strategy"]), ph)


def memory_line(art: Mapping[str, Any], ph: Phrases) -> str:
    """memory_terms_line of an answer's JSON (the diagnosis's renderer, until it reads its typed answer)."""
    model = art.get("model") or {}
    return memory_terms_line(MemoryTerms.model_validate(art["memory"]), StrategyEcho.model_validate(art["strategy"]),
                             model.get("kind"), ph)


def rent_lines(rent: Sequence[Rental], gpu_name: str | None, vendor: str, form_factor: str, ph: Phrases,
          pick: PlanRow | None) -> list[str]:
    out = [ph.text("rent_title")]
    by_cloud: dict[str, list[str]] = {}
    for r in rent:
        by_cloud.setdefault(r.cloud, []).append(f"{r.instance_type} ({r.gpu_count:g})")
    for cloud, names in by_cloud.items():
        out.append(ph.text("rent_line", cloud=ph.name("cloud_names", cloud), instances=", ".join(names)))
    if not by_cloud:
        vendor = vendor or "nvidia"
        why = (ph.name("rent_why_vendor", vendor, ph.text("rent_why_other")) if vendor != "nvidia"
               else ph.text("rent_why_consumer") if form_factor == "consumer" else ph.text("rent_why_other"))
        out.append(ph.text("rent_none", gpu=gpu_name, why=why))
    if pick is not None and pick.priced:
        out.append(ph.text(
            "rent_pick", cloud=ph.name("cloud_names", pick.cloud), instance=pick.instance_type,
            gpus=f"{pick.gpu_count:g} × {pick.gpu}", hours=n1(pick.hours), cost=n1(pick.cost_cny, 0),
            strategy=(pick.strategy_zh if ph.zh else None) or pick.strategy))
    return out


def assumption_lines(en: Sequence[str], zh: Sequence[str], ph: Phrases) -> list[str]:
    items = (zh if ph.zh else None) or en or []
    return ["", ph.text("assume_title"), *[f"- {a}" for a in items]] if items else []


_OPTION_NAMES = {"cloud": "cloud_names", "method": "method_names", "billing": "billing_names"}


def option_name(kind: str, option: str, ph: Phrases) -> str:
    table = _OPTION_NAMES.get(kind)
    return ph.name(table, option) if table else option


def config_line(r: PlanRow, ph: Phrases) -> str:
    if r.gpu is None:
        return ph.text("cmp_no_fit")
    where = f"{ph.name('cloud_names', r.cloud)} {r.instance_type}, " if r.instance_type else ""
    return f"{where}{r.gpu_count:g} × {r.gpu}"


def carried_line(frame: Frame, carried: tuple[str, ...], ph: Phrases, lang: str) -> str:
    """What a follow-up took from the question before it, said once: "按上文：Qwen2-7B、预算 ¥5,000/月、只用京东云"."""
    c, s = frame.constraints, frame.setup
    sep = "、" if lang == "zh" else ", "
    parts: list[str] = []
    for key in carried:
        if key == "model" and s.models:
            parts.append(s.models[0].name)
        elif key == "method" and s.method:
            parts.append(ph.name("method_names", s.method))
        elif key in ("gpu", "gpu_count") and (s.hardware.gpu or s.hardware.gpu_memory_gb):
            card = s.hardware.gpu or f"{s.hardware.gpu_memory_gb:g}G"
            part = f"{s.hardware.gpu_count} × {card}" if s.hardware.gpu_count else card
            if part not in parts:
                parts.append(part)
        elif key == "budget" and c.budget_cny:
            parts.append(ph.group("carried_budget").text(c.budget_period or "month", amount=f"{c.budget_cny:,.0f}"))
        elif key == "clouds" and c.clouds:
            parts.append(ph.text("carried_clouds", clouds=sep.join(ph.name("cloud_names", x) for x in c.clouds)))
        elif key == "billing" and c.billing:
            parts.append(ph.name("billing_names", c.billing))
        elif key == "deadline" and c.deadline_hours:
            parts.append(ph.text("carried_deadline", hours=f"{c.deadline_hours:g}"))
        elif key == "data" and (frame.data.samples or frame.data.tokens):
            d = frame.data
            parts.append(ph.text("carried_samples", n=f"{d.samples:,}") if d.samples
                         else ph.text("carried_tokens", n=f"{d.tokens:,.0f}"))
        elif key == "gpu_filter" and c.gpu_include:
            parts.append(ph.text("carried_only", gpus=sep.join(c.gpu_include)))
    return ph.text("carried", items=sep.join(parts)) if parts else ""
