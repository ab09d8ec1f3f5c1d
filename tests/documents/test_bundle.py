"""The launch bundle: parseable files, settings matched to the plan and GPU, scripts that check and launch."""

from __future__ import annotations

import io
import json
import subprocess
import zipfile
from pathlib import Path
from typing import Any

import pytest
import yaml

from service.catalog.loader import Catalog
from service.documents.bundle import LaunchBundle, build_launch_bundle, bundle_as_zip
from service.documents.errors import DocumentInputError
from service.documents.llamafactory import PLACEHOLDER_MODEL, grad_accum
from service.planner.plan import plan
from service.planner.report import plan_to_dict
from service.workload import Workload

from .conftest import TODAY, index_of

PLANS = ["qwen_lora", "llama70_full", "t4_qlora"]


def _bundle(plans: dict[str, Any], catalog: Catalog, name: str, instance: str | None = None,
            lang: str = "en") -> tuple[LaunchBundle, dict[str, Any]]:
    p = plans[name]
    i = 0 if instance is None else index_of(p, instance)
    return build_launch_bundle(p, catalog, lang, i), p["candidates"][i]  # type: ignore[arg-type]


@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize("plan_name", PLANS)
def test_every_file_parses(plan_name: str, lang: str, plans: dict[str, Any], catalog: Catalog,
                           tmp_path: Path) -> None:
    b, _ = _bundle(plans, catalog, plan_name, lang=lang)
    for name, text in b.files.items():
        if name.endswith(".yaml"):
            assert isinstance(yaml.safe_load(text), dict)
        elif name.endswith(".json"):
            json.loads(text)
        elif name.endswith(".jsonl"):
            assert all(isinstance(json.loads(line), dict) for line in text.splitlines())
        elif name.endswith(".sh"):
            script = tmp_path / name
            script.write_text(text, encoding="utf-8")
            r = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True)
            assert r.returncode == 0, r.stderr


# (plan, instance or None for the top pick, expected precision flag, flash_attn)
PRECISION = [
    ("qwen_lora", None, "bf16", "sdpa"),  # Tencent A100: LLaMA-Factory's default, SDPA (its flash kernel)
    ("qwen_lora", "p.n1v100.2xlarge", "fp16", "sdpa"),  # JD V100: no BF16, no FlashAttention-2
    ("t4_qlora", None, "fp16", "sdpa"),  # T4
]


@pytest.mark.parametrize("plan_name, instance, flag, attn", PRECISION)
def test_precision_and_attention_follow_the_gpu(plan_name: str, instance: str | None, flag: str, attn: str,
                                                plans: dict[str, Any], catalog: Catalog) -> None:
    b, c = _bundle(plans, catalog, plan_name, instance)
    cfg = yaml.safe_load(b.files["train.yaml"])
    assert cfg.get(flag) is True
    assert not cfg.get({"bf16": "fp16", "fp16": "bf16"}[flag])
    assert cfg["flash_attn"] == attn
    assert cfg["cutoff_len"] == c["strategy"]["seq_len"]
    assert cfg["per_device_train_batch_size"] == c["strategy"]["micro_batch"]
    assert ("disable_gradient_checkpointing" in cfg) == (not c["strategy"]["grad_ckpt"])


def test_v100_pins_cuda_12(plans: dict[str, Any], catalog: Catalog) -> None:
    b, _ = _bundle(plans, catalog, "qwen_lora", "p.n1v100.2xlarge")
    assert "\nMAX_CUDA_MAJOR=12 " in b.files["launch.sh"]


@pytest.mark.parametrize("plan_name", PLANS)
def test_deepspeed_config_iff_zero(plan_name: str, plans: dict[str, Any], catalog: Catalog) -> None:
    b, c = _bundle(plans, catalog, plan_name)
    cfg = yaml.safe_load(b.files["train.yaml"])
    ds_files = [n for n in b.files if n.startswith("ds_z")]
    stage, offload = c["strategy"]["zero_stage"], c["strategy"]["offload"]
    if stage > 0:
        assert ds_files == [cfg["deepspeed"]] == [b.deepspeed_file]
        ds = json.loads(b.files[cfg["deepspeed"]])["zero_optimization"]
        assert ds["stage"] == stage
        assert ("offload_optimizer" in ds) == (offload in ("optimizer", "all"))
        assert ("offload_param" in ds) == (offload == "all")
    else:
        assert not ds_files and "deepspeed" not in cfg and b.deepspeed_file is None


def test_qlora_quantizes_to_4_bits(plans: dict[str, Any], catalog: Catalog) -> None:
    b, _ = _bundle(plans, catalog, "t4_qlora")
    cfg = yaml.safe_load(b.files["train.yaml"])
    assert (cfg["quantization_bit"], cfg["quantization_method"], cfg["finetuning_type"]) == (4, "bnb", "lora")
    assert "bitsandbytes" in b.files["README.md"]


def test_lora_and_full_settings(plans: dict[str, Any], catalog: Catalog) -> None:
    lora = yaml.safe_load(_bundle(plans, catalog, "qwen_lora")[0].files["train.yaml"])
    full = yaml.safe_load(_bundle(plans, catalog, "llama70_full")[0].files["train.yaml"])
    assert (lora["model_name_or_path"], lora["template"], lora["stage"]) == ("Qwen/Qwen2-7B", "qwen", "sft")
    assert (lora["finetuning_type"], lora["lora_rank"], lora["lora_target"]) == ("lora", 8, "all")
    assert lora["learning_rate"] == pytest.approx(1e-4) and full["learning_rate"] == pytest.approx(1e-5)
    assert (full["model_name_or_path"], full["template"], full["finetuning_type"]) == (
        "meta-llama/Meta-Llama-3-70B", "llama3", "full")
    assert full["num_train_epochs"] == 3.0


@pytest.mark.parametrize("micro_batch, gpus, steps, global_batch", [
    (1, 1, 32, 32),  # one GPU accumulates to 32
    (1, 16, 2, 32),  # two 8-GPU nodes
    (4, 8, 1, 32),  # already 32 per step
    (2, 48, 1, 96),  # more than the target per step: no accumulation
])
def test_gradient_accumulation_reaches_the_target(micro_batch: int, gpus: int, steps: int, global_batch: int) -> None:
    assert grad_accum(micro_batch, gpus) == (steps, global_batch)


def test_multinode_launch_sets_torchrun_and_nccl(plans: dict[str, Any], catalog: Catalog) -> None:
    b, c = _bundle(plans, catalog, "llama70_full")
    assert c["nodes"] > 1 and c["rdma"]
    sh = b.files["launch.sh"]
    for needle in ("FORCE_TORCHRUN=1", f'NNODES="${{NNODES:-{c["nodes"]}}}"', "NODE_RANK", "MASTER_ADDR",
                   "MASTER_PORT", "NCCL_IB_HCA", "NCCL_SOCKET_IFNAME", "NCCL_DEBUG"):
        assert needle in sh, needle


def test_single_gpu_launch_has_no_torchrun(plans: dict[str, Any], catalog: Catalog) -> None:
    sh = _bundle(plans, catalog, "qwen_lora")[0].files["launch.sh"]
    assert "FORCE_TORCHRUN" not in sh and "NNODES" not in sh


def test_zip_keeps_files_and_exec_bits(plans: dict[str, Any], catalog: Catalog) -> None:
    b, _ = _bundle(plans, catalog, "llama70_full")
    data = bundle_as_zip(b, root="launch")
    assert data == bundle_as_zip(b, root="launch")  # deterministic
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        assert sorted(zf.namelist()) == sorted(f"launch/{n}" for n in b.files)
        assert zf.getinfo("launch/launch.sh").external_attr >> 16 == 0o755
        assert zf.read("launch/train.yaml").decode() == b.files["train.yaml"]


def test_unknown_model_gets_a_placeholder_launch_refuses(plans: dict[str, Any], catalog: Catalog) -> None:
    p = {**plans["qwen_lora"], "model": {**plans["qwen_lora"]["model"], "id": "generic-7b"}}
    b = build_launch_bundle(p, catalog, "en")
    cfg = yaml.safe_load(b.files["train.yaml"])
    assert cfg["model_name_or_path"] == PLACEHOLDER_MODEL and cfg["template"] == "default"
    assert "\nMODEL_HF=''  #" in b.files["launch.sh"] and "HUB=local" in b.files["launch.sh"]


def test_non_llm_model_is_refused(plans: dict[str, Any], catalog: Catalog) -> None:
    p = {**plans["qwen_lora"], "model": {**plans["qwen_lora"]["model"], "id": "ResNet-50", "kind": "cnn"}}
    with pytest.raises(DocumentInputError, match="LLaMA-Factory"):
        build_launch_bundle(p, catalog, "en")


# Issue 22: the bundle runs what was estimated. (workload settings, train.yaml keys they must produce)
SETTINGS = [
    # pure bf16, 8-bit AdamW, FlashAttention-2, fused cross-entropy
    ({"method": "full", "precision": "pure-bf16", "optimizer": "adamw-8bit", "attention": "flash",
      "loss": "chunked"},
     {"pure_bf16": True, "optim": "adamw_bnb_8bit", "flash_attn": "fa2", "enable_liger_kernel": True}),
    # LoRA on q/v with the head trained in full, eager attention
    ({"lora_targets": "qv", "lora_modules_to_save": ["lm_head"], "attention": "eager"},
     {"lora_target": "q_proj,v_proj", "additional_target": "lm_head", "flash_attn": "disabled"}),
    # QLoRA through kbit preparation, paged 8-bit AdamW, no checkpointing
    ({"method": "qlora", "kbit_upcast": True, "optimizer": "paged-adamw-8bit", "activation_checkpointing": "none"},
     {"upcast_layernorm": True, "upcast_lmhead_output": True, "optim": "paged_adamw_8bit",
      "disable_gradient_checkpointing": True}),
]


@pytest.mark.parametrize(("settings", "keys"), SETTINGS)
def test_train_yaml_carries_the_estimated_settings(settings: dict[str, Any], keys: dict[str, Any],
                                                   catalog: Catalog) -> None:

    model = "qwen2-1.5b" if settings.get("method") == "full" else "qwen2-7b"  # a full 7B outgrows one A100 40G
    w = Workload(model=model, samples=10_000, gpu_count=1, gpu_include=["A100"], **settings)
    p = plan_to_dict(plan(w, catalog, today=TODAY))
    cfg = yaml.safe_load(build_launch_bundle(p, catalog, "en", 0).files["train.yaml"])
    for key, value in keys.items():
        assert cfg.get(key) == value, key


def test_settings_llamafactory_cannot_express_are_refused(catalog: Catalog) -> None:
    # Selective checkpointing has no LLaMA-Factory switch: the bundle says so instead of running something else.

    w = Workload(model="qwen2-7b", samples=10_000, gpu_count=1, gpu_include=["A100"],
                 activation_checkpointing="selective")
    p = plan_to_dict(plan(w, catalog, today=TODAY))
    with pytest.raises(DocumentInputError, match="selective"):
        build_launch_bundle(p, catalog, "en", 0)


@pytest.mark.parametrize("objective, lf_stage, pref_loss", [("dpo", "dpo", "sigmoid"), ("orpo", "dpo", "orpo"),
                                                            ("kto", "kto", None), ("sft", "sft", None)])
def test_train_yaml_runs_the_planned_objective(objective: str, lf_stage: str, pref_loss: str | None,
                                               catalog: Catalog) -> None:
    p = plan_to_dict(plan(Workload(model="qwen2-7b", stage=objective, gpu_count=1), catalog, today=TODAY))
    b = build_launch_bundle(p, catalog, "en", 0)  # type: ignore[arg-type]
    cfg = yaml.safe_load(b.files["train.yaml"])
    assert cfg["stage"] == lf_stage
    assert cfg.get("pref_loss") == pref_loss
    planned = p["candidates"][0]["strategy"]["micro_batch"]
    pairs = 2 if objective in ("dpo", "orpo") else 1
    assert cfg["per_device_train_batch_size"] == max(1, planned // pairs)


def test_grpo_is_refused_with_the_trainer_to_use(catalog: Catalog) -> None:
    p = plan_to_dict(plan(Workload(model="qwen2-7b", stage="grpo", gpu_count=1), catalog, today=TODAY))
    with pytest.raises(DocumentInputError, match="GRPO"):
        build_launch_bundle(p, catalog, "en", 0)  # type: ignore[arg-type]
