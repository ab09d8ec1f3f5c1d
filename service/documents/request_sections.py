"""Sections of the resource request: background, task, resource list, approval. Text around the plan's figures."""

from __future__ import annotations

from collections.abc import Mapping

from service.documents import fmt, safe
from service.documents.fmt import BILLING, BLANK, CLOUD, METHOD, label, tr
from service.documents.plan_view import CandidateView, Lang, PlanView
from service.labels import host_text

OBJECTIVE = {"cheapest": ("费用最低", "cheapest"), "fastest": ("速度最快", "fastest"),
             "balanced": ("费用与时长平衡", "balanced")}


def _method(view: PlanView, lang: Lang) -> str:
    job = view.job
    text = label(METHOD, job.method, lang)
    return text + (f" {job.quant_bits}-bit" if job.quant_bits else "")


def background(view: PlanView, c: CandidateView, applicant: Mapping[str, str], lang: Lang) -> str:
    project = applicant.get("project") or BLANK
    purpose = applicant.get("background") or tr(lang, "（请补充：业务目标、数据来源与规模、预期产出与收益）",
                                                "(Fill in: business goal, data source and size, expected outcome.)")
    rank = view.candidates.index(c) + 1
    summary = tr(
        lang,
        f"拟在{label(CLOUD, c.cloud, lang)}使用 {fmt.gpus(c, lang)}（{c.instance_type}）对 {safe.md(view.model.name)} 进行 "
        f"{_method(view, lang)} 训练，预计训练 {fmt.num(c.training_hours)} 小时，费用 {fmt.cny(c.total_cost_cny)}"
        f"（{label(BILLING, c.billing, lang)}）。该配置是 GPU Advisor 规划的 {view.n_candidates} 个可行方案中"
        f"排名第 {rank} 的方案（排序目标：{label(OBJECTIVE, view.workload.objective, lang)}）。",
        f"We plan to train {safe.md(view.model.name)} with {_method(view, lang)} on {label(CLOUD, c.cloud, lang)} "
        f"{c.instance_type} ({fmt.gpus(c, lang)}), estimated at {fmt.num(c.training_hours)} hours and "
        f"{fmt.cny(c.total_cost_cny)} ({label(BILLING, c.billing, lang)}). It ranks #{rank} of the "
        f"{view.n_candidates} feasible options GPU Advisor planned (objective: "
        f"{label(OBJECTIVE, view.workload.objective, lang)}).",
    )
    why = view.why_not(c)
    if why is not None:  # the pick is not its cloud's cheapest: say why it still goes first, as the page does
        summary += tr(lang, f"它不是最便宜的方案，原因：{why.text(lang)}",
                      f" It is not the cheapest option: {why.text(lang)}")
    rows = [[tr(lang, "项目名称", "Project"), project], [tr(lang, "项目背景与目标", "Background and goal"), purpose]]
    return fmt.table([tr(lang, "项目", "Item"), tr(lang, "内容", "Details")], rows) + "\n\n" + summary


def task_table(view: PlanView, lang: Lang) -> str:
    m, job, w = view.model, view.job, view.workload
    data = tr(lang, f"每轮 {fmt.count(job.samples_per_epoch)} 条样本", f"{fmt.count(job.samples_per_epoch)} samples per epoch")
    if w.avg_tokens_per_sample:
        data += tr(lang, f"，平均 {w.avg_tokens_per_sample} tokens/条", f", {w.avg_tokens_per_sample} tokens each on average")
    if w.dataset_gb:
        data += tr(lang, f"，数据集 {fmt.num(w.dataset_gb)} GB", f", dataset {fmt.num(w.dataset_gb)} GB")
    goal = label(OBJECTIVE, w.objective, lang)
    if w.deadline_hours:
        goal += tr(lang, f"；期限 {fmt.num(w.deadline_hours)} 小时", f"; deadline {fmt.num(w.deadline_hours)} h")
    rows = [
        [tr(lang, "模型", "Model"), tr(lang, f"{safe.md(m.name)}（{fmt.ratio(m.params_b)}B 参数，{safe.md(m.family)}）",
                                       f"{safe.md(m.name)} ({fmt.ratio(m.params_b)}B parameters, {safe.md(m.family)})")],
        [tr(lang, "训练方法", "Method"), _method(view, lang)],
        [tr(lang, "训练数据", "Data"), data],
        [tr(lang, "序列长度（cutoff）", "Sequence length (cutoff)"), str(job.seq_len)],
        [tr(lang, "训练轮数", "Epochs"), fmt.ratio(job.epochs)],
        [tr(lang, "每轮 tokens", "Tokens per epoch"), fmt.count(job.tokens_per_epoch)],
        [tr(lang, "总 tokens", "Total tokens"), fmt.count(job.tokens_total)],
        [tr(lang, "选型目标", "Objective"), goal],
    ]
    return fmt.table([tr(lang, "项目", "Item"), tr(lang, "内容", "Details")], rows)


def assumptions(view: PlanView, lang: Lang) -> str:
    if not view.assumptions:
        return tr(lang, "规划未做额外假设。", "The plan made no extra assumptions.")
    head = tr(lang, "规划假设（规划引擎原文）：", "Assumptions the planner made:")
    return head + "\n\n" + fmt.bullets(view.assumptions)


def _network(c: CandidateView, lang: Lang) -> str:
    if c.nodes == 1:
        return tr(lang, "单机训练，无多机互联要求；VPC 私有网络即可", "Single node: no inter-node fabric needed; VPC network")
    if c.rdma:
        return tr(lang, f"{c.nodes} 节点，RDMA 高速互联（HCC 集群），NCCL 走 RDMA",
                  f"{c.nodes} nodes over RDMA (HCC cluster); NCCL over RDMA")
    return tr(lang, f"{c.nodes} 节点，无 RDMA，节点间走 TCP（扩展效率差，见风险）",
              f"{c.nodes} nodes without RDMA: inter-node traffic over TCP (scales poorly, see risks)")


def resource_table(view: PlanView, c: CandidateView, lang: Lang) -> str:
    storage = [n.text(lang) for n in view.notes if n.code.startswith("storage")]
    rows = [
        [tr(lang, "云厂商", "Cloud"), label(CLOUD, c.cloud, lang)],
        [tr(lang, "实例规格", "Instance type"), f"{c.instance_type}（{c.family}）" if lang == "zh" else
         f"{c.instance_type} ({c.family})"],
        ["GPU", fmt.gpus(c, lang)],
        [tr(lang, "单卡显存", "GPU memory per GPU"), f"{fmt.num(c.gpu_memory_gib)} GiB"],
        [tr(lang, "节点数", "Nodes"), str(c.nodes)],
        [tr(lang, "每节点 vCPU / 内存", "vCPU / RAM per node"), host_text(c.vcpus, c.memory_gib, lang)],
    ]
    if c.host_ram_needed_gib:
        rows.append([tr(lang, "主机内存需求（CPU offload，全部节点合计）", "Host RAM for CPU offload (all nodes)"),
                     f"{fmt.num(c.host_ram_needed_gib)} GiB"])
    rows += [
        [tr(lang, "存储", "Storage"), " ".join(storage) or tr(lang, "按数据集与检查点大小配置 SSD 云硬盘",
                                                              "SSD cloud disk sized for the dataset and checkpoints")],
        [tr(lang, "网络", "Network"), _network(c, lang)],
        [tr(lang, "计费方式", "Billing"), label(BILLING, c.billing, lang)],
        [tr(lang, "预计使用时长", "Estimated duration"), tr(lang, f"{fmt.num(c.training_hours)} 小时",
                                                           f"{fmt.num(c.training_hours)} hours")],
        [tr(lang, "规格来源", "Spec source"), f"{c.instance_source} ({c.instance_confidence})"],
    ]
    return fmt.table([tr(lang, "资源", "Resource"), tr(lang, "配置", "Configuration")], rows)


def resource_notes(view: PlanView, lang: Lang) -> str:
    notes = [n.text(lang) for n in view.notes if not n.code.startswith("storage")]
    return fmt.bullets(notes) if notes else ""


def approval(applicant: Mapping[str, str], lang: Lang) -> str:
    def val(key: str) -> str:
        return applicant.get(key) or BLANK

    rows = [
        [tr(lang, "申请人", "Applicant"), val("name")],
        [tr(lang, "所属部门", "Department"), val("department")],
        [tr(lang, "联系方式", "Contact"), val("contact")],
        [tr(lang, "申请日期", "Date of request"), val("date")],
        [tr(lang, "审批人", "Approver"), val("approver")],
        [tr(lang, "审批意见", "Decision"), tr(lang, "□ 同意　□ 不同意　□ 修改后再议", "□ Approved  □ Rejected  □ Revise")],
        [tr(lang, "审批人签字 / 日期", "Approver signature / date"), BLANK],
    ]
    return fmt.table([tr(lang, "项目", "Item"), tr(lang, "填写", "Entry")], rows)
