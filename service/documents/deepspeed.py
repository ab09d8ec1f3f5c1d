"""DeepSpeed JSON for the plan's ZeRO stage and offload, shaped like LLaMA-Factory's examples/deepspeed/ files.

Batch sizes, clipping and precision are "auto" so the Hugging Face Trainer fills them from train.yaml.
Unlike LLaMA-Factory's ds_z3_offload_config.json (which offloads parameters too), offload "optimizer" at
ZeRO-3 offloads only the optimizer states, as the plan sized it.
"""

from __future__ import annotations

from service.documents.errors import DocumentInputError

BUCKET = 500_000_000  # LLaMA-Factory's ZeRO-2 bucket sizes (5e8)
STAGE3_LIMIT = 1_000_000_000  # sub_group_size / max live parameters / reuse distance (1e9)


def ds_file_name(zero_stage: int, offload: str) -> str:
    return f"ds_z{zero_stage}{'_offload' if offload != 'none' else ''}_config.json"


def _cpu() -> dict[str, object]:
    return {"device": "cpu", "pin_memory": True}


def _zero(stage: int, offload: str) -> dict[str, object]:
    if offload == "all" and stage < 3:
        raise DocumentInputError(f"Offloading parameters needs ZeRO-3, not ZeRO-{stage}.",
                                 "Plan again; the planner pairs offload 'all' with ZeRO-3.")
    if stage in (1, 2):
        zero: dict[str, object] = {"stage": stage}
        if offload == "optimizer":
            zero["offload_optimizer"] = _cpu()
        zero.update({"allgather_partitions": True, "allgather_bucket_size": BUCKET, "overlap_comm": False,
                     "reduce_scatter": True, "reduce_bucket_size": BUCKET, "contiguous_gradients": True,
                     "round_robin_gradients": True})
        return zero
    if stage == 3:
        zero = {"stage": 3}
        if offload in ("optimizer", "all"):
            zero["offload_optimizer"] = _cpu()
        if offload == "all":
            zero["offload_param"] = _cpu()
        zero.update({"overlap_comm": False, "contiguous_gradients": True, "sub_group_size": STAGE3_LIMIT,
                     "reduce_bucket_size": "auto", "stage3_prefetch_bucket_size": "auto",
                     "stage3_param_persistence_threshold": "auto", "stage3_max_live_parameters": STAGE3_LIMIT,
                     "stage3_max_reuse_distance": STAGE3_LIMIT, "stage3_gather_16bit_weights_on_model_save": True})
        return zero
    raise DocumentInputError(f"ZeRO stage {stage} needs no DeepSpeed config.", "Only stages 1-3 write one.")


def ds_config(zero_stage: int, offload: str, bf16_master: bool = False) -> dict[str, object]:
    """`bf16_master`: the plan sized pure bf16 under ZeRO, i.e. DeepSpeed's low-precision master and optimizer
    states (deepspeedai/DeepSpeed PR 7700, with torch.autocast): without them DeepSpeed keeps an fp32 master."""
    bf16: dict[str, object] = {"enabled": "auto"}
    extra: dict[str, object] = {}
    if bf16_master:
        bf16 = {"enabled": True, "bf16_master_weights_and_grads": True, "bf16_optimizer_states": True}
        extra = {"torch_autocast": {"enabled": True, "dtype": "bfloat16"}}
    return {
        "train_batch_size": "auto",
        "train_micro_batch_size_per_gpu": "auto",
        "gradient_accumulation_steps": "auto",
        "gradient_clipping": "auto",
        "zero_allow_untested_optimizer": True,
        "fp16": {"enabled": "auto", "loss_scale": 0, "loss_scale_window": 1000, "initial_scale_power": 16,
                 "hysteresis": 2, "min_loss_scale": 1},
        "bf16": bf16,
        **extra,
        "zero_optimization": _zero(zero_stage, offload),
    }
