"""LLaMA-Factory train.yaml and dataset_info.json matched to one plan candidate.

Keys follow LLaMA-Factory's examples (examples/train_lora/llama3_lora_sft.yaml, train_qlora/*_otfq.yaml,
train_full/llama3_full_sft.yaml) and hparams (flash_attn: auto|disabled|sdpa|fa2, disable_gradient_checkpointing,
quantization_method: bnb). Settings the plan does not fix (learning rate, global batch, logging) are stated
defaults, each with a comment.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

import yaml

from service.catalog.schema import GpuSpec, ModelSpec
from service.documents import safe
from service.documents.deepspeed import ds_file_name
from service.documents.errors import DocumentInputError, TemplateError
from service.documents.fmt import tr
from service.documents.hf_repos import hf_repo
from service.documents.plan_view import CandidateView, Lang, PlanView

TARGET_GLOBAL_BATCH = 32  # sequences per optimizer step; the usual 32-64 for SFT
LEARNING_RATE = {"lora": 1e-4, "qlora": 1e-4, "freeze": 1e-5, "full": 1e-5, "pretrain": 1e-5}
PLACEHOLDER_MODEL = "REPLACE_WITH_MODEL_PATH"
DATASET = "my_qa"
DATA_DIR = "data"
TRAINABLE_KINDS = ("decoder",)
Line = tuple[str, object, str]  # key, value, comment


@dataclass(frozen=True)
class TrainSettings:
    """What train.yaml was built from; the README and the bundle summary reuse it."""

    model_path: str
    model_known: bool
    stage: str
    finetuning_type: str
    template: str
    precision: str | None  # the train.yaml flag: bf16 | fp16 | pure_bf16 | None (fp32)
    flash_attn: str
    micro_batch: int
    total_gpus: int
    grad_accum: int
    global_batch: int
    learning_rate: float
    output_dir: str
    deepspeed_file: str | None
    pref_loss: str | None = None

    @property
    def dataset_file(self) -> str:
        return f"{DATA_DIR}/{DATASET}.jsonl"

    @property
    def example_file(self) -> str:
        return f"{DATA_DIR}/{DATASET}.example.jsonl"


# The plan's objective -> LLaMA-Factory's stage and, for the preference stages, its pref_loss
LF_STAGE: dict[str, tuple[str, str | None]] = {"sft": ("sft", None), "dpo": ("dpo", "sigmoid"),
                                                "orpo": ("dpo", "orpo"), "simpo": ("dpo", "simpo"),
                                                "kto": ("kto", None), "rm": ("rm", None), "ppo": ("ppo", None)}
PAIRWISE = ("dpo", "orpo", "simpo", "rm")


def grad_accum(micro_batch: int, total_gpus: int) -> tuple[int, int]:
    """Gradient accumulation reaching at least TARGET_GLOBAL_BATCH sequences, and the global batch it gives."""
    per_step = max(1, micro_batch * total_gpus)
    steps = max(1, math.ceil(TARGET_GLOBAL_BATCH / per_step))
    return steps, per_step * steps


def _precision(c: CandidateView, gpu: GpuSpec | None) -> str | None:
    p = {"amp-bf16": "bf16", "pure-bf16": "pure_bf16"}.get(c.strategy.precision, c.strategy.precision)
    if p in ("bf16", "pure_bf16", "fp8") and gpu is not None and not gpu.supports_bf16:
        return "fp16"  # guard: the planner already picks FP16 on V100/T4
    return None if p == "fp32" else p


OPTIM = {"adamw": "adamw_torch", "adamw-8bit": "adamw_bnb_8bit", "paged-adamw-8bit": "paged_adamw_8bit",
         "adafactor": "adafactor"}  # Hugging Face TrainingArguments.optim names
FLASH_ATTN = {"flash": "fa2", "sdpa": "sdpa", "eager": "disabled"}  # LLaMA-Factory model_args.flash_attn
LORA_TARGET = {"qv": "q_proj,v_proj", "attn": "q_proj,k_proj,v_proj,o_proj", "all-linear": "all"}


def unsupported(c: CandidateView) -> list[tuple[str, str]]:
    """Settings the plan was sized with that LLaMA-Factory cannot be told to use, as (English, Chinese)."""
    s = c.strategy
    out = []
    if s.activation_checkpointing == "selective":
        out.append(("selective activation checkpointing", "选择性激活检查点"))
    if s.optimizer_in_backward:
        out.append(("the optimizer stepped inside the backward (torchtune optimizer_in_bwd)",
                    "反向传播中逐参数更新优化器（torchtune optimizer_in_bwd）"))
    if s.sharding in ("fsdp", "fsdp2") and s.zero_stage > 0:
        out.append((f"{s.sharding.upper()} sharding (this bundle drives DeepSpeed)",
                    f"{s.sharding.upper()} 分片（本启动包使用 DeepSpeed）"))
    return out


def train_settings(view: PlanView, c: CandidateView, model: ModelSpec | None, gpu: GpuSpec | None) -> TrainSettings:
    kind = model.kind if model is not None else view.model.kind
    if kind not in TRAINABLE_KINDS:
        raise DocumentInputError(f"{view.model.name} is a {kind} model; the launch bundle targets LLaMA-Factory, "
                                 "which trains decoder LLMs.",
                                 "Use the plan's instance and figures with your own training script.")
    s = c.strategy
    missing = unsupported(c)
    if missing:
        raise DocumentInputError(
            "The plan was sized with " + "; ".join(en for en, _ in missing) + ", which LLaMA-Factory's train.yaml "
            "cannot express: the bundle would not run what was estimated.",
            "Plan again with activation_checkpointing full or none, the framework's optimizer, and sharding "
            "deepspeed (or use the figures with your own launcher).")
    objective = view.workload.stage or "sft"
    if objective not in LF_STAGE:
        raise DocumentInputError(f"LLaMA-Factory has no {objective.upper()} trainer: the bundle would not run what "
                                 "was estimated.", "Use TRL (GRPOTrainer) with the plan's figures.")
    repo = hf_repo(model.id) if model is not None else None
    stage = "pt" if s.method == "pretrain" else LF_STAGE[objective][0]
    pairs = 2 if objective in PAIRWISE else 1  # the plan sized two sequences per pair: the yaml counts pairs
    ftype = {"qlora": "lora", "pretrain": "full"}.get(s.method, s.method)
    total = s.gpus_per_node * s.nodes
    ga, global_batch = grad_accum(s.micro_batch, total)
    return TrainSettings(
        model_path=repo or PLACEHOLDER_MODEL, model_known=repo is not None, stage=stage, finetuning_type=ftype,
        template=(model.template if model is not None and model.template else "default"),
        precision=_precision(c, gpu), flash_attn=_flash_attn(c, gpu),
        micro_batch=max(1, s.micro_batch // pairs), total_gpus=total, grad_accum=ga, global_batch=global_batch,
        pref_loss=LF_STAGE[objective][1],
        learning_rate=LEARNING_RATE.get(s.method, 1e-5),
        output_dir=f"saves/{view.model.id.rsplit('/', 1)[-1].lower()}/{ftype}/{stage}",
        deepspeed_file=ds_file_name(s.zero_stage, s.offload) if s.zero_stage > 0 else None,
    )


def _flash_attn(c: CandidateView, gpu: GpuSpec | None) -> str:
    wanted = FLASH_ATTN.get(c.strategy.attention or "flash", "fa2")
    if wanted == "fa2" and (gpu is None or not gpu.supports_flash_attn2):
        return "sdpa"
    return wanted


def _yaml_line(key: str, value: object, comment: str) -> str:
    """One `key: value` from the YAML emitter, and its comment on one line (nothing in it can start a key)."""
    text = yaml.safe_dump({key: value}, default_flow_style=False, allow_unicode=True, width=1_000_000).strip()
    note = safe.comment(comment)
    return f"{text}  # {note}" if note else text


class _NoDuplicates(yaml.SafeLoader):
    """A safe loader that refuses a key given twice (PyYAML keeps the last one silently)."""


def _mapping(loader: yaml.SafeLoader, node: yaml.MappingNode) -> dict[object, object]:
    keys = [loader.construct_object(k) for k, _ in node.value]
    if len(keys) != len(set(map(str, keys))):
        raise TemplateError("train.yaml would hold a key twice.", "Report this: a value escaped its line.")
    return loader.construct_mapping(node)


_NoDuplicates.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping)


def check_round_trip(text: str, meant: dict[str, object]) -> None:
    """The written train.yaml reads back as exactly the keys and values meant: no value gained a key or lost one."""
    read = yaml.load(text, Loader=_NoDuplicates)  # noqa: S506 (a SafeLoader subclass)
    if read != meant:
        raise TemplateError("train.yaml does not read back as the settings it was written from.",
                            "Report this: a value escaped its line in the YAML.")


def _sections(view: PlanView, c: CandidateView, t: TrainSettings, lang: Lang) -> list[tuple[str, list[Line]]]:
    s = c.strategy
    model: list[Line] = [
        ("model_name_or_path", t.model_path,
         tr(lang, "Hugging Face 仓库名；launch.sh 运行时改用下载到的目录（MODEL_DIR）",
            "Hugging Face repo id; launch.sh trains from the downloaded folder (MODEL_DIR) instead") if t.model_known
         else tr(lang, f"待填：{view.model.name} 的 Hugging Face 仓库名或本地路径",
                 f"TODO: Hugging Face repo id or local path of {view.model.name}")),
        ("trust_remote_code", True, ""),
    ]
    if s.method == "qlora":
        model += [("quantization_bit", s.quant_bits or view.job.quant_bits or 4, "QLoRA"),
                  ("quantization_method", "bnb", tr(lang, "bitsandbytes；旧版 LLaMA-Factory 写作 bitsandbytes",
                                                    "bitsandbytes; older LLaMA-Factory releases spell it bitsandbytes"))]
    model.append(("flash_attn", t.flash_attn, {
        "fa2": "FlashAttention-2 (Ampere+)",
        "disabled": tr(lang, "规划：eager 注意力（显存随序列平方增长）", "as planned: eager attention (s^2 memory)"),
    }.get(t.flash_attn, tr(lang, "PyTorch SDPA（与规划一致）", "PyTorch SDPA, as planned")
          if (s.attention or "") == "sdpa" else tr(lang, f"{c.gpu_name} 不支持 FlashAttention-2，用 PyTorch SDPA",
                                                   f"{c.gpu_name} has no FlashAttention-2: PyTorch SDPA"))))
    if s.loss == "chunked":
        model.append(("enable_liger_kernel", True, tr(lang, "规划：融合交叉熵，不生成完整 logits",
                                                      "as planned: fused cross-entropy, no full logits")))
    if s.method == "qlora" and s.kbit_upcast:
        model += [("upcast_layernorm", True, tr(lang, "规划：归一化层 fp32", "as planned: norms in fp32")),
                  ("upcast_lmhead_output", True, tr(lang, "规划：输出头 fp32", "as planned: head output in fp32"))]
    if not s.grad_ckpt:
        model.append(("disable_gradient_checkpointing", True, tr(lang, "规划：不开梯度检查点", "plan: no checkpointing")))
    method: list[Line] = [("stage", t.stage, ""), ("do_train", True, ""), ("finetuning_type", t.finetuning_type, "")]
    if t.pref_loss is not None:
        method.append(("pref_loss", t.pref_loss, tr(lang, "与规划的目标一致", "the planned objective")))
    if t.finetuning_type == "lora":
        target = LORA_TARGET.get(s.lora_targets or "all-linear", "all")
        method += [("lora_rank", s.lora_rank or 8, ""),
                   ("lora_target", target, "" if target == "all" else
                    tr(lang, "规划的 LoRA 目标（模块名按模型核对）", "as planned (check the module names for this model)"))]
        if s.lora_modules_to_save:
            method.append(("additional_target", ",".join(s.lora_modules_to_save),
                           tr(lang, "规划：这些模块全量训练", "as planned: trained in full")))
    if t.finetuning_type == "freeze":
        method += [("freeze_trainable_layers", 2, tr(lang, "与规划一致：末 2 层", "as planned: last 2 layers")),
                   ("freeze_trainable_modules", "all", "")]
    if t.deepspeed_file:
        method.append(("deepspeed", t.deepspeed_file, f"ZeRO-{s.zero_stage}, offload {s.offload}"))
    dataset: list[Line] = [
        ("dataset", DATASET, tr(lang, f"定义见 {DATA_DIR}/dataset_info.json", f"defined in {DATA_DIR}/dataset_info.json")),
        ("dataset_dir", DATA_DIR, ""),
        ("template", t.template, "" if t.template != "default" else
         tr(lang, "待确认：模型的对话模板", "TODO: the model's chat template")),
        ("cutoff_len", s.seq_len, tr(lang, "= 规划的序列长度", "= the plan's sequence length")),
        ("overwrite_cache", True, ""),
        ("preprocessing_num_workers", min(16, c.vcpus or 8), ""),  # vCPU not published: 8, LLaMA-Factory's usual
        ("dataloader_num_workers", min(4, max(1, (c.vcpus or 8) // max(1, s.gpus_per_node) // 2)), ""),
    ]
    output: list[Line] = [("output_dir", t.output_dir, ""), ("logging_steps", 10, ""),
                          ("save_steps", 200 if c.billing == "spot" else 500, ""), ("plot_loss", True, ""),
                          ("overwrite_output_dir", True, ""), ("save_only_model", False, ""), ("report_to", "none", "")]
    train: list[Line] = [
        ("per_device_train_batch_size", t.micro_batch, tr(lang, "= 规划的 micro batch", "= the plan's micro batch")),
        ("gradient_accumulation_steps", t.grad_accum,
         tr(lang, f"全局 batch = {t.micro_batch} × {t.total_gpus} 卡 × {t.grad_accum} = {t.global_batch} 条序列",
            f"global batch = {t.micro_batch} x {t.total_gpus} GPUs x {t.grad_accum} = {t.global_batch} sequences")),
        ("learning_rate", t.learning_rate, tr(lang, "常用起点，按验证集调整", "a common starting point; tune on validation")),
        ("num_train_epochs", float(view.job.epochs), ""),
        ("lr_scheduler_type", "cosine", ""), ("warmup_ratio", 0.1, ""),
    ]
    if t.precision == "fp8":
        train += [("bf16", True, ""), ("fp8", True, tr(lang, "规划：FP8 矩阵乘", "as planned: FP8 GEMMs"))]
    elif t.precision:
        note = {"fp16": tr(lang, f"{c.gpu_name} 不支持 BF16", f"{c.gpu_name} has no BF16") if (
                    c.strategy.precision in ("bf16", "amp-bf16")) else "",
                "pure_bf16": tr(lang, "规划：权重与优化器状态均为 bf16", "as planned: weights and Adam states in bf16")}
        train.append((t.precision, True, note.get(t.precision, "")))
    if s.optimizer != "adamw":
        train.append(("optim", OPTIM.get(s.optimizer, "adamw_torch"), tr(lang, "与规划一致", "as planned")))
    train.append(("ddp_timeout", 180000000, ""))
    return [("model", model), ("method", method), ("dataset", dataset), ("output", output), ("train", train)]


def train_yaml(view: PlanView, c: CandidateView, t: TrainSettings, lang: Lang) -> str:
    head = tr(lang, f"# LLaMA-Factory 训练配置，由 GPU Advisor 按规划生成：{c.strategy.label}\n"
                    f"# 实例：{c.cloud} {c.instance_type}（{c.gpu_count:g} × {c.gpu_name} × {c.nodes} 节点）\n"
                    "# 运行：bash launch.sh（先检查环境，再执行 llamafactory-cli train train.yaml）",
              f"# LLaMA-Factory config generated by GPU Advisor from the plan: {c.strategy.label}\n"
              f"# Instance: {c.cloud} {c.instance_type} ({c.gpu_count:g} x {c.gpu_name} x {c.nodes} node(s))\n"
              "# Run: bash launch.sh (checks the environment, then runs llamafactory-cli train train.yaml)")
    parts = ["\n".join("# " + safe.comment(line.removeprefix("# ")) for line in head.splitlines())]
    meant: dict[str, object] = {}
    for title, lines in _sections(view, c, t, lang):
        parts.append(f"\n### {title}\n" + "\n".join(_yaml_line(*line) for line in lines))
        meant.update({key: value for key, value, _ in lines})
    parts.append(tr(lang, "\n# 竞价实例被回收后续训：resume_from_checkpoint: <output_dir>/checkpoint-<step>",
                    "\n# After a spot reclaim, resume with: resume_from_checkpoint: <output_dir>/checkpoint-<step>"))
    text = "\n".join(parts) + "\n"
    check_round_trip(text, meant)
    return text


def dataset_info(method: str) -> dict[str, object]:
    """dataset_info.json: one JSONL file, alpaca columns (pre-training: a single text column)."""
    columns = {"prompt": "text"} if method == "pretrain" else {
        "prompt": "instruction", "query": "input", "response": "output"}
    return {DATASET: {"file_name": f"{DATASET}.jsonl", "columns": columns}}


def example_jsonl(method: str, lang: Lang) -> str:
    if method == "pretrain":
        rows: list[dict[str, str]] = [{"text": tr(lang, "一篇领域文档的全文……", "The full text of one domain document...")}]
    else:
        rows = [{"instruction": tr(lang, "GPU 云服务器按量计费怎么收费？", "How is on-demand GPU billing charged?"),
                 "input": "",
                 "output": tr(lang, "按实际使用时长计费，关机不释放时仍可能收取部分费用……",
                              "By the hour actually used; a stopped instance may still be billed for some parts...")},
                {"instruction": tr(lang, "把下面的句子翻译成英文。", "Translate the sentence below into Chinese."),
                 "input": tr(lang, "今天天气很好。", "The weather is nice today."),
                 "output": tr(lang, "The weather is nice today.", "今天天气很好。")}]
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
