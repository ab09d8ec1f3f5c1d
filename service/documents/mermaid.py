"""The decision path as a Mermaid flowchart: model → method → memory vs GPU → strategy → pick → billing → budget.

Labels are quoted and characters Mermaid treats as syntax are written as entity codes (#quot; #91; ...).
"""

from __future__ import annotations

from service.documents import fmt
from service.documents.fmt import BILLING, CLOUD, METHOD, label, tr
from service.documents.plan_view import CandidateView, Lang, PlanInput, PlanView, read_plan
from service.documents.rationale import SAMPLE_KINDS

_ENTITIES = {'"': "#quot;", "#": "#35;", "[": "#91;", "]": "#93;", "{": "#123;", "}": "#125;",
             "(": "#40;", ")": "#41;", "<": "#lt;", ">": "#gt;", "|": "#124;", "`": "#96;"}


def escape_label(text: str) -> str:
    """Text safe inside a quoted Mermaid label; newlines become <br/>."""
    lines = text.splitlines() or [""]
    return "<br/>".join("".join(_ENTITIES.get(ch, ch) for ch in line) for line in lines)


def _node(node_id: str, text: str, shape: str = "box") -> str:
    body = f'"{escape_label(text)}"'
    return f"{node_id}{{{body}}}" if shape == "decision" else f"{node_id}[{body}]"


def _method(view: PlanView, lang: Lang) -> str:
    job = view.job
    text = label(METHOD, job.method, lang)
    if job.quant_bits:
        text += f" {job.quant_bits}-bit"
    if view.model.kind in SAMPLE_KINDS:
        data = tr(lang, f"每轮 {fmt.count(job.samples_per_epoch)} 样本 × {fmt.ratio(job.epochs)} 轮",
                  f"{fmt.count(job.samples_per_epoch)} samples × {fmt.ratio(job.epochs)} epochs")
    else:
        data = tr(lang, f"序列长度 {job.seq_len}，{fmt.count(job.tokens_total)} tokens",
                  f"seq len {job.seq_len}, {fmt.count(job.tokens_total)} tokens")
    return tr(lang, f"方法：{text}\n{data}", f"Method: {text}\n{data}")


def _branch(i: int, c: CandidateView, view: PlanView, lang: Lang) -> list[str]:
    p = f"c{i}"
    fits = tr(lang, f"每卡需 {fmt.gib(c.memory.per_gpu_gib)} GiB\nvs {c.gpu_name} {fmt.num(c.gpu_memory_gib)} GiB",
              f"needs {fmt.gib(c.memory.per_gpu_gib)} GiB per GPU\nvs {c.gpu_name} {fmt.num(c.gpu_memory_gib)} GiB")
    pick = tr(lang, f"{label(CLOUD, c.cloud, lang)}：{c.instance_type}\n{fmt.gpus(c, lang)}",
              f"{label(CLOUD, c.cloud, lang)}: {c.instance_type}\n{fmt.gpus(c, lang)}")
    billing = tr(lang, f"{label(BILLING, c.billing, lang)}\n总费用 {fmt.cny(c.total_cost_cny)}，约 {fmt.num(c.training_hours)} 小时",
                 f"{label(BILLING, c.billing, lang)}\ntotal {fmt.cny(c.total_cost_cny)}, ~{fmt.num(c.training_hours)} h")
    budget = fmt.budget_text(c, view.workload.budget_cny, view.workload.budget_period, lang)
    return [
        f"    method --> {_node(p + 'm', fits, 'decision')}",
        f"    {p}m --> {_node(p + 's', c.strategy.label)}",
        f"    {p}s --> {_node(p + 'i', pick)}",
        f"    {p}i --> {_node(p + 'b', billing)}",
        f"    {p}b --> {_node(p + 'v', budget, 'decision')}",
    ]


def render_decision_mermaid(plan: PlanInput, lang: Lang) -> str:
    """Mermaid `flowchart TD` source (no code fence) for the plan's per-cloud picks."""
    view = read_plan(plan, lang)
    m = view.model
    model = tr(lang, f"模型：{m.name}\n{fmt.ratio(m.params_b)}B 参数", f"Model: {m.name}\n{fmt.ratio(m.params_b)}B params")
    lines = ["flowchart TD", f"    {_node('model', model)} --> {_node('method', _method(view, lang))}"]
    picks = view.cloud_picks()
    if not picks:
        reason = view.infeasible or tr(lang, "没有可行方案", "no feasible option")
        lines.append(f"    method --> {_node('none', tr(lang, '不可行：', 'Infeasible: ') + reason)}")
    for i, c in enumerate(picks):
        lines += _branch(i, c, view, lang)
    return "\n".join(lines) + "\n"
