"""The launch bundle: train.yaml, DeepSpeed JSON (ZeRO plans only), data/, launch.sh, monitor.sh, README.md."""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from service.catalog.loader import Catalog
from service.catalog.schema import GpuSpec, ModelSpec
from service.documents import fmt, safe
from service.documents.deepspeed import ds_config
from service.documents.fmt import BILLING, label, tr
from service.documents.launch_scripts import extra_packages, launch_sh, model_dir, monitor_sh
from service.documents.llamafactory import (
    DATA_DIR,
    TrainSettings,
    dataset_info,
    example_jsonl,
    train_settings,
    train_yaml,
)
from service.documents.mainland import MainlandRoute, mainland_route, route_bullets
from service.documents.plan_view import CandidateView, Lang, PlanInput, PlanView, read_plan
from service.documents.templates import render_template

EXECUTABLE = ("launch.sh", "monitor.sh")
ZIP_DATE = (2025, 1, 1, 0, 0, 0)  # fixed timestamps: the same bundle gives the same zip bytes


@dataclass(frozen=True)
class LaunchBundle:
    files: dict[str, str]  # relative path -> text
    summary: str
    cloud: str
    instance_type: str
    deepspeed_file: str | None = None


def _model(view: PlanView, catalog: Catalog) -> ModelSpec | None:
    return next((m for m in catalog.models if m.id == view.model.id), None)


def _gpu(c: CandidateView, catalog: Catalog) -> GpuSpec | None:
    try:
        return catalog.gpu(c.gpu)
    except KeyError:
        return None


def _summary(view: PlanView, c: CandidateView, t: TrainSettings, lang: Lang) -> str:
    prec = t.precision or "fp32"
    ds = f"ZeRO-{c.strategy.zero_stage}" if t.deepspeed_file else tr(lang, "无 DeepSpeed", "no DeepSpeed")
    return tr(lang,
              f"{view.model.name} {c.strategy.label}，{fmt.instance(c, lang)}：{fmt.gpus(c, lang)}，{prec}，"
              f"{t.flash_attn}，{ds}；预计 {fmt.num(c.training_hours)} 小时，{label(BILLING, c.billing, lang)} "
              f"{fmt.cny(c.total_cost_cny)}",
              f"{view.model.name} {c.strategy.label} on {fmt.instance(c, lang)}: {fmt.gpus(c, lang)}, {prec}, "
              f"{t.flash_attn}, {ds}; est. {fmt.num(c.training_hours)} h, {label(BILLING, c.billing, lang)} "
              f"{fmt.cny(c.total_cost_cny)}")


def _run_block(c: CandidateView) -> str:
    if c.nodes == 1:
        return "```bash\nbash launch.sh\n```"
    lines = [f"NODE_RANK={r} MASTER_ADDR=<master-private-ip> bash launch.sh" + ("   # master" if r == 0 else "")
             for r in range(min(c.nodes, 3))]
    if c.nodes > 3:
        lines.append(f"# ... up to NODE_RANK={c.nodes - 1}")
    return "```bash\n" + "\n".join(lines) + "\n```"


def _notes(c: CandidateView, t: TrainSettings, lang: Lang) -> str:
    notes = []
    if not t.model_known:
        notes.append(tr(lang, "`train.yaml` 的 model_name_or_path 是占位符，launch.sh 会拒绝运行，请先填写。",
                        "`train.yaml` has a model_name_or_path placeholder; launch.sh refuses to run until you set it."))
    notes.append(tr(lang, f"全局 batch = {t.global_batch} 条序列（每卡 {t.micro_batch} × {t.total_gpus} 卡 × "
                          f"梯度累积 {t.grad_accum}）；学习率 {t.learning_rate:g} 是常用起点，请按验证集调整。",
                    f"Global batch = {t.global_batch} sequences ({t.micro_batch} per GPU x {t.total_gpus} GPUs x "
                    f"{t.grad_accum} accumulation steps); learning rate {t.learning_rate:g} is a common start, tune it."))
    notes += [w.text(lang) for w in c.warnings if w.severity == "warning"]
    if c.billing == "spot":
        notes.append(tr(lang, "竞价实例可能被回收：检查点每 save_steps 步保存一次，回收后用 resume_from_checkpoint 续训。",
                        "Spot instances can be reclaimed: checkpoints are saved every save_steps; resume with "
                        "resume_from_checkpoint."))
    elif "spot" in c.cost_cny:
        notes.append(tr(lang, "如改用竞价实例降本：实例可能被回收，请调小 save_steps，回收后用 resume_from_checkpoint 续训。",
                        "If you switch to spot to save money: instances can be reclaimed; lower save_steps and resume "
                        "with resume_from_checkpoint."))
    return fmt.bullets(notes)


def _file_list(files: Mapping[str, str], lang: Lang) -> str:
    what = {
        "train.yaml": tr(lang, "LLaMA-Factory 训练配置", "LLaMA-Factory training config"),
        "launch.sh": tr(lang, "环境检查 + 启动训练", "environment checks, then training"),
        "monitor.sh": tr(lang, "GPU 与训练日志监控", "GPU and trainer-log monitoring"),
        "README.md": tr(lang, "本说明", "this file"),
        f"{DATA_DIR}/dataset_info.json": tr(lang, "数据集声明", "dataset declaration"),
    }
    rows = []
    for name in sorted(files):
        desc = what.get(name) or (tr(lang, "DeepSpeed 配置", "DeepSpeed config") if name.startswith("ds_z") else
                                  tr(lang, "数据格式示例", "data format example"))
        rows.append(f"`{name}`：{desc}" if lang == "zh" else f"`{name}`: {desc}")
    return fmt.bullets(rows)


def _readme(view: PlanView, c: CandidateView, t: TrainSettings, files: Mapping[str, str], lang: Lang,
            route: MainlandRoute) -> str:
    packages = [route.mirrors.llamafactory.pip, *extra_packages(c, t)]
    install_note = ("   `pip install flash-attn --no-build-isolation` "
                    + tr(lang, "（train.yaml 使用 flash_attn: fa2）", "(train.yaml uses flash_attn: fa2)")
                    ) if t.flash_attn == "fa2" else ""
    plan_rows = [[tr(lang, "实例", "Instance"), fmt.instance(c, lang)], ["GPU", fmt.gpus(c, lang)],
                 [tr(lang, "策略", "Strategy"), safe.md(c.strategy.label)],
                 [tr(lang, "每卡显存", "Memory per GPU"), f"{fmt.gib(c.memory.per_gpu_gib)} / {fmt.num(c.gpu_memory_gib)} GiB"],
                 [tr(lang, "预计时长", "Estimated time"), f"{fmt.num(c.training_hours)} h"],
                 [tr(lang, "费用", "Cost"), f"{label(BILLING, c.billing, lang)} {fmt.cny(c.total_cost_cny)}"]]
    values = {
        "title": safe.md(f"{view.model.name} · {c.strategy.label}"),
        "summary": safe.md(_summary(view, c, t, lang)),
        "plan_table": fmt.table([tr(lang, "项目", "Item"), tr(lang, "内容", "Value")], plan_rows),
        "file_list": _file_list({**files, "README.md": ""}, lang),
        "instance": fmt.instance(c, lang),
        "copy_hint": tr(lang, f"{c.nodes} 个节点每个都要一份，路径相同", f"every one of the {c.nodes} nodes needs a copy "
                        "at the same path") if c.nodes > 1 else "scp -r",
        "install_what": "、".join(f"`{p}`" for p in packages) if lang == "zh" else
        ", ".join(f"`{p}`" for p in packages),
        "pip_packages": " ".join(packages),
        "install_note": install_note,
        "mainland": fmt.bullets(route_bullets(route, c.cloud, t.model_path if t.model_known else "", lang,
                                              model_dir(t))),
        "dataset_file": t.dataset_file,
        "example_file": t.example_file,
        "run_block": _run_block(c),
        "notes": _notes(c, t, lang),
    }
    return render_template(f"bundle_readme.{lang}.md", values)


def build_launch_bundle(plan: PlanInput, catalog: Catalog, lang: Lang,
                        candidate_index: int = 0, knowledge_dir: Path | None = None) -> LaunchBundle:
    """Files to train the plan's candidate `candidate_index` (0 = recommended) with LLaMA-Factory; the download
    route comes from `knowledge_dir` (default: the settings')."""
    view = read_plan(plan, lang)
    c = view.chosen(candidate_index)
    gpu = _gpu(c, catalog)
    t = train_settings(view, c, _model(view, catalog), gpu)
    route = mainland_route(knowledge_dir)
    files: dict[str, str] = {
        "train.yaml": train_yaml(view, c, t, lang),
        f"{DATA_DIR}/dataset_info.json": json.dumps(dataset_info(c.strategy.method), indent=2, ensure_ascii=False) + "\n",
        t.example_file: example_jsonl(c.strategy.method, lang),
        "launch.sh": launch_sh(c, t, gpu, route),
        "monitor.sh": monitor_sh(c, t),
    }
    if t.deepspeed_file:
        files[t.deepspeed_file] = json.dumps(ds_config(c.strategy.zero_stage, c.strategy.offload,
                                                       c.strategy.precision in ("pure-bf16", "pure_bf16")), indent=2) + "\n"
    files["README.md"] = _readme(view, c, t, files, lang, route)
    return LaunchBundle(files=files, summary=_summary(view, c, t, lang), cloud=c.cloud,
                        instance_type=c.instance_type, deepspeed_file=t.deepspeed_file)


def bundle_as_zip(bundle: LaunchBundle, root: str = "") -> bytes:
    """The bundle as a zip (scripts executable, fixed timestamps); `root` nests the files in a folder."""
    return files_as_zip(bundle.files, root)


def files_as_zip(files: Mapping[str, str], root: str = "") -> bytes:
    """{path: text} as a zip: the shell scripts executable, fixed timestamps (the same files, the same bytes)."""
    buf = io.BytesIO()
    prefix = f"{root.strip('/')}/" if root.strip("/") else ""
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name in sorted(files):
            info = zipfile.ZipInfo(prefix + name, date_time=ZIP_DATE)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = (0o755 if name in EXECUTABLE else 0o644) << 16
            zf.writestr(info, files[name])
    return buf.getvalue()
