"""Turn a workload into engine inputs: the model architecture, tokens, sequence length, with assumptions."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

from service.catalog.hf_config import convert, split_config
from service.catalog.queries import parse_param_count, resolve_model
from service.catalog.schema import ModelSpec
from service.errors import InvalidInputError, UnknownModelError
from service.planner.generic import estimate_from_name, generic_decoder
from service.sizing.params import count_params
from service.workload import DEFAULT_AVG_TOKENS, DEFAULT_EPOCHS, DEFAULT_SEQ_LEN, Workload

BYTES_PER_TOKEN = 3.0  # assumed for JSONL text (Chinese ~1.5-2 B/token, English ~4 B/token + JSON keys)
BYTES_PER_IMAGE = 110e3  # ImageNet: 1.28M JPEGs in ~140 GB
DEFAULT_SAMPLES = 10_000


@dataclass(frozen=True)
class Job:
    """A workload resolved against the catalog: what the engine sizes and times."""

    model: ModelSpec
    method: str
    quant_bits: int | None
    seq_len: int
    tokens_per_epoch: float
    epochs: float
    samples_per_epoch: float
    assumptions: tuple[str, ...] = field(default=())
    assumptions_zh: tuple[str, ...] = field(default=())
    seq_len_stated: bool = False  # the user gave --seq-len: sequences are that long (packed to the cutoff)
    stage: str = "sft"  # the training objective (knowledge/lexicon.yaml stages)
    seqs: int = 1  # sequences a sample runs per step: 2 for preference pairs (chosen + rejected)
    frozen_copies: int = 0  # frozen models beside the policy: the reference (full fine-tune), reward, value
    # how the data size was known: "tokens" / "samples" (stated), "dataset_gb" (converted at BYTES_PER_TOKEN), or
    # "assumed" (nothing stated: the hours and cost are a rate's illustration, never the job's: see rate_per_1e8)
    data_basis: str = "samples"
    data_note: tuple[str, str] = ("", "")  # the dataset the figures assume, said first when it is not the user's

    @property
    def tokens_total(self) -> float:
        return self.tokens_per_epoch * self.epochs

    @property
    def samples_total(self) -> float:
        return self.samples_per_epoch * self.epochs

    @property
    def avg_seq_len(self) -> int:
        """Tokens per sequence for the attention FLOPs: the stated --seq-len (samples packed to it), else the mean
        sample (samples shorter than the cutoff are not padded)."""
        if self.seq_len_stated:
            return self.seq_len
        if self.samples_per_epoch > 0 and self.model.kind in ("decoder", "encoder"):
            return max(16, min(self.seq_len, round(self.tokens_per_epoch / self.samples_per_epoch)))
        return self.seq_len


def model_from_hf_config(path: Path) -> ModelSpec:
    """Size a private model from its Hugging Face config.json (service/catalog/hf_config.py reads it)."""
    try:
        cfg: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InvalidInputError(f"Cannot read {path} as a Hugging Face config.json: {exc}",
                                "Pass the model's config.json (with hidden_size, num_hidden_layers ...).") from exc
    if not isinstance(cfg, dict):
        raise InvalidInputError(f"{path} is not a config.json object.", "Pass the model's config.json.")
    try:
        converted = convert(cfg)
    except InvalidInputError as exc:
        raise InvalidInputError(f"{path}: {exc.message}", exc.fix, message_zh=exc.message_zh and f"{path}：{exc.message_zh}",
                                fix_zh=exc.fix_zh) from exc
    text, _ = split_config(cfg)
    name = str(cfg.get("_name_or_path") or text.get("model_type") or path.parent.name)
    spec = ModelSpec(**converted.fields, id=f"config:{path.name}", name=name,
                     family=str(text.get("model_type", "custom")), params_published_b=1.0, source=str(path),
                     as_of=date.today(), template="default")
    counts = count_params(spec)
    return spec.model_copy(update={"params_published_b": counts.total / 1e9,
                                   "active_params_b": counts.active / 1e9 if spec.moe else None})


def resolve_named(name: str, models: tuple[ModelSpec, ...]) -> tuple[ModelSpec, list[tuple[str, str]]]:
    """The catalog row a name means; else, when the name states a decoder's size ('xxx-9b'), a generic decoder of
    that size labelled estimated (service/planner/generic.py), the same on every surface; else the catalog's
    UnknownModelError with its suggestions."""
    try:
        return resolve_model(name, models), []
    except UnknownModelError as exc:
        estimated = estimate_from_name(name, models, exc.suggestions)
        if estimated is None:
            raise
        return estimated[0], [estimated[1]]


def resolve_model_for(w: Workload, models: tuple[ModelSpec, ...]) -> tuple[ModelSpec, list[tuple[str, str]]]:
    notes: list[tuple[str, str]] = []
    if w.model:
        path = Path(w.model)
        if w.model.endswith(".json") and path.is_file():
            spec = model_from_hf_config(path)
            notes.append((f"Sized from {path}: {spec.params_published_b:.2f}B parameters counted from the config.",
                          f"按 {path} 计算：配置中统计得到 {spec.params_published_b:.2f}B 参数。"))
            return spec, notes
        size = parse_param_count(w.model)
        if size is None:
            spec, said = resolve_named(w.model, models)
            return spec, notes + said
        params_b = size
    else:
        assert w.params_b is not None  # the Workload validator guarantees one of the two
        params_b = w.params_b
    spec = generic_decoder(params_b, models)
    like = spec.source.split(" of ")[-1]
    notes.append((f"No model name given: sized a {params_b:g}B decoder with the layout of {like}.",
                  f"未给出模型名：按 {like} 的结构估算 {params_b:g}B 参数的解码器模型。"))
    return spec, notes


def run_epochs(w: Workload, method: str) -> float:
    """The epochs the engine sizes: the stated ones, else one for pretraining or a stated token count (the whole
    run), else DEFAULT_EPOCHS."""
    return w.epochs or (1.0 if method == "pretrain" or w.tokens else DEFAULT_EPOCHS)


def resolve_job(w: Workload, models: tuple[ModelSpec, ...]) -> Job:
    model, notes = resolve_model_for(w, models)
    if w.method == "qlora" and model.kind != "decoder":
        raise InvalidInputError(f"QLoRA applies to LLM decoders, not {model.name}.",
                                "Use method full or lora for this model.")
    method = w.method
    if model.kind == "cnn" and method == "lora":
        method = "full"  # LoRA adapts linear layers of transformers; a CNN trains its weights
        notes.append((f"{model.name} is a CNN: planned as full training (LoRA applies to transformers).",
                      f"{model.name} 是卷积网络：按全量训练规划（LoRA 适用于 Transformer）。"))
    elif model.kind in ("encoder", "vision_transformer") and method == "lora" and "method" not in w.model_fields_set:
        method = "full"  # BERT / ViT fine-tuning is usually full; the default (LoRA) is for LLMs
        notes.append((f"No method given: {model.name} planned as a full fine-tune (usual for encoders).",
                      f"未指定训练方式：{model.name} 按全量微调规划（编码器模型的常见做法）。"))
    default_seq = {"decoder": DEFAULT_SEQ_LEN, "encoder": 512}.get(model.kind, model.max_position_embeddings or 1)
    seq = w.seq_len or default_seq
    avg = w.avg_tokens_per_sample
    if w.seq_len is None and avg is not None and avg > seq and model.kind == "decoder":
        seq = avg  # a stated sample length raises the cutoff instead of truncating every sample
        notes.append((f"Cutoff raised to the stated sample length, {seq} tokens.",
                      f"序列长度（cutoff_len）提高到所给的样本长度 {seq} tokens。"))
    if model.kind == "vision_transformer":
        seq = model.max_position_embeddings or 197
    elif model.max_position_embeddings and seq > model.max_position_embeddings:
        notes.append((f"seq_len {seq} exceeds {model.name}'s context {model.max_position_embeddings}; "
                      "it needs RoPE scaling (the estimate keeps your length).",
                      f"序列长度 {seq} 超过 {model.name} 的上下文 {model.max_position_embeddings}，需要 RoPE 扩展（估算按你的长度）。"))
    if w.seq_len is None and model.kind in ("decoder", "encoder") and seq == default_seq:
        notes.append((f"Sequence length (cutoff) assumed {seq} tokens.", f"序列长度（cutoff_len）假设为 {seq} tokens。"))
    epochs = run_epochs(w, method)
    if w.epochs is None and w.tokens and method != "pretrain":
        notes.append(("A token count is read as the whole run: one epoch (give epochs to repeat it).",
                      "给出的 token 数按整个训练量计：1 轮（如需多轮请注明轮数）。"))
    elif w.epochs is None:
        notes.append((f"Epochs assumed {epochs:g}.", f"训练轮数假设为 {epochs:g} 轮。"))
    samples, tokens = _dataset(w, model, seq, notes)
    stage, seqs, copies = _stage(w, method, notes)
    basis = "tokens" if w.tokens else "samples" if w.samples else "dataset_gb" if w.dataset_gb else "assumed"
    data_note = ("", "")
    if basis == "assumed":
        data_note = (f"No data size given: the hours and cost below are for an assumed {samples:,.0f} samples x "
                     f"{epochs:g} epoch(s) ({tokens * seqs * epochs / 1e6:,.1f}M tokens); the rate per 1e8 tokens is "
                     "what scales to your data.",
                     f"未给出数据量：下面的时长和费用按假设的 {samples:,.0f} 条 × {epochs:g} 轮（约 "
                     f"{tokens * seqs * epochs / 1e6:,.1f}M tokens）计算；按每 1 亿 token 的速率换算到你的数据量。")
    elif basis == "dataset_gb":
        data_note = (f"{w.dataset_gb:g} GB of text read as ~{tokens / 1e9:.2f}B tokens at {BYTES_PER_TOKEN:g} bytes "
                     "per token (assumed): the hours and cost follow that count.",
                     f"{w.dataset_gb:g} GB 文本按每 token {BYTES_PER_TOKEN:g} 字节（假设）折算约 {tokens / 1e9:.2f}B "
                     "tokens：时长和费用按此计算。")
    return Job(model, method, w.effective_quant_bits, seq, tokens * seqs, epochs, samples,
               tuple(en for en, _ in notes), tuple(zh for _, zh in notes),
               seq_len_stated=w.seq_len is not None and model.kind == "decoder", stage=stage, seqs=seqs,
               frozen_copies=copies, data_basis=basis, data_note=data_note)


def _stage(w: Workload, method: str, notes: list[tuple[str, str]]) -> tuple[str, int, int]:
    """The objective's memory model (knowledge/lexicon.yaml): preference stages (DPO, ORPO, SimPO, a reward model)
    run the chosen and the rejected answer of each pair in one step (TRL's concatenated forward), so a sample is
    two sequences; DPO, KTO, PPO and GRPO keep a frozen reference model — a second copy of the weights for a full
    fine-tune, the base with the adapter switched off for LoRA; PPO also holds reward and value models."""
    from service.lexicon import lexicon

    stage = w.stage or "sft"
    spec = lexicon().stages[stage]
    full = method in ("full", "freeze", "pretrain")
    copies = (1 if spec.ref_model and full else 0) + spec.models
    if stage != "sft":
        parts_en = [f"{spec.en}: {spec.seqs} sequence(s) per sample"]
        parts_zh = [f"{spec.zh}：每条样本 {spec.seqs} 条序列"]
        if copies:
            parts_en.append(f"{copies} frozen model(s) beside the policy (reference / reward / value)")
            parts_zh.append(f"另有 {copies} 个冻结模型（参考 / 奖励 / 价值模型）")
        elif spec.ref_model:
            parts_en.append("the reference is the base model with the adapter off (no second copy)")
            parts_zh.append("参考模型即关闭 adapter 的基座（不另占一份权重）")
        notes.append(("; ".join(parts_en) + ".", "；".join(parts_zh) + "。"))
    return stage, spec.seqs, copies


def _dataset(w: Workload, model: ModelSpec, seq: int, notes: list[tuple[str, str]]) -> tuple[float, float]:
    """(samples per epoch, tokens per epoch) with the assumptions stated."""
    if model.kind in ("cnn", "diffusion", "vision_transformer"):
        if w.samples:
            samples = float(w.samples)
        elif w.dataset_gb:
            samples = w.dataset_gb * 1e9 / BYTES_PER_IMAGE
            notes.append((f"{w.dataset_gb:g} GB of images read as ~{samples:,.0f} images (110 KB each, ImageNet-like).",
                          f"{w.dataset_gb:g} GB 图片按每张 110 KB（类 ImageNet）折算约 {samples:,.0f} 张。"))
        else:
            samples = float(DEFAULT_SAMPLES * 10)
            notes.append((f"Dataset size not given: assumed {samples:,.0f} images per epoch.",
                          f"未给出数据量：假设每轮 {samples:,.0f} 张图片。"))
        return samples, samples * seq
    avg = w.avg_tokens_per_sample
    if w.tokens:
        tokens = w.tokens
        samples = float(w.samples) if w.samples else tokens / min(avg or seq, seq)
    elif w.samples:
        if avg is None:
            avg = DEFAULT_AVG_TOKENS
            notes.append((f"Mean length assumed {avg} tokens per sample (question + answer); give it for a "
                          "tighter estimate.", f"平均每条样本假设 {avg} tokens（问题+回答）；提供实际长度可使估算更准。"))
        tokens, samples = w.samples * min(avg, seq), float(w.samples)
        if avg > seq:
            notes.append((f"Samples of {avg} tokens are cut to the {seq}-token cutoff.",
                          f"每条 {avg} tokens 的样本会被截断到 {seq} tokens。"))
    elif w.dataset_gb:
        tokens = w.dataset_gb * 1e9 / BYTES_PER_TOKEN
        samples = tokens / min(avg or DEFAULT_AVG_TOKENS, seq)
        notes.append((f"{w.dataset_gb:g} GB of text read as ~{tokens / 1e9:.2f}B tokens (3 bytes per token assumed).",
                      f"{w.dataset_gb:g} GB 文本按每 token 3 字节折算约 {tokens / 1e9:.2f}B tokens。"))
    else:
        samples = float(DEFAULT_SAMPLES)
        tokens = samples * min(avg or DEFAULT_AVG_TOKENS, seq)
        n_tok = min(avg or DEFAULT_AVG_TOKENS, seq)
        notes.append((f"Dataset size not given: assumed {DEFAULT_SAMPLES:,} samples of {n_tok} tokens.",
                      f"未给出数据量：假设 {DEFAULT_SAMPLES:,} 条、每条 {n_tok} tokens。"))
    return samples, tokens
