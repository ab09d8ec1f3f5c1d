"""Training OOM and memory causes: each one's number from the sizing engine, and a setup where it does not apply."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from service.planner.causes import train_memory as tm
from service.planner.causes.cases import TrainCase
from service.sizing.params import count_params
from service.sizing.types import GIB

Make = Callable[..., TrainCase]


def test_replicas_are_a_whole_copy_per_card_under_torchrun(train: Make) -> None:
    case = train("Qwen2-7B", "RTX-4090", 8, method="lora", knobs={"strategy": "ddp"})
    c = tm.replicas(case)
    m = case.memory()
    assert c.applies and c.stated and c.detail["ranks"] == 8
    assert c.explains is not None and c.explains.value == pytest.approx(
        m.weights_gib + m.gradients_gib + m.optimizer_gib, abs=0.01)
    # the frozen bf16 base: ~2 bytes a parameter, whole on every card
    assert c.explains.value == pytest.approx(2 * count_params(case.model).total / GIB, rel=0.05)
    assert c.fix is not None and c.fix.code == "zero3" and c.fix.fixed is not None
    assert c.fix.fixed.value < case.per_gpu_gib  # ZeRO-3 divides the copy over the 8 cards


@pytest.mark.parametrize(("gpus", "knobs", "why"), [
    (1, {}, "one card holds one copy: nothing replicated"),
    (8, {"strategy": "zero", "zero_stage": 3}, "ZeRO-3 shards the copy"),
    (8, {"strategy": "fsdp"}, "FSDP shards it"),
])
def test_replicas_do_not_apply_to_a_sharded_or_single_run(train: Make, gpus: int, knobs: dict[str, object],
                                                           why: str) -> None:
    assert not tm.replicas(train("Qwen2-7B", "RTX-4090", gpus, method="lora", knobs=knobs)).applies, why


def test_model_states_are_16_bytes_a_parameter_for_mixed_precision_adamw(train: Make) -> None:
    case = train("Qwen2-7B", "A100-40G-SXM", 1, method="full", micro_batch=1)
    c = tm.model_states(case)
    assert c.applies and c.detail["bytes_per_param"] == 16
    assert c.explains is not None and c.explains.value == pytest.approx(
        16 * count_params(case.model).total / GIB, rel=0.02)
    assert c.fix is not None and c.fix.fits  # the first fix that fits the 40 GB card is chosen


def test_model_states_do_not_apply_to_lora(train: Make) -> None:
    assert not tm.model_states(train("Qwen2-7B", "A100-40G-SXM", 1, method="lora")).applies


def test_logits_are_sequence_by_vocabulary_by_12_bytes(train: Make) -> None:
    case = train("Qwen2-7B", "A100-40G-SXM", 8, method="full", zero_stage=3, seq_len=8192, micro_batch=2)
    c = tm.logits(case)
    assert c.applies and c.detail["vocab"] == 152064
    assert c.detail["logits_gib"] == pytest.approx(8192 * 2 * 152064 * 12 / GIB, rel=0.01)
    assert c.fix is not None and c.fix.code == "chunked_loss" and c.fix.fixed is not None
    assert c.fix.fixed.value == pytest.approx(case.per_gpu_gib - c.explains.value, abs=0.05)  # type: ignore[union-attr]


def test_logits_do_not_apply_with_a_fused_loss(train: Make) -> None:
    case = train("Qwen2-7B", "A100-40G-SXM", 8, method="full", zero_stage=3, seq_len=8192, loss="chunked")
    assert not tm.logits(case).applies


def test_activations_grow_with_sequence_and_micro_batch(train: Make) -> None:
    one = tm.activations(train("Qwen2-7B", "A100-40G-SXM", 1, method="lora", seq_len=4096, micro_batch=1,
                               grad_ckpt=False))
    four = tm.activations(train("Qwen2-7B", "A100-40G-SXM", 1, method="lora", seq_len=4096, micro_batch=4,
                                grad_ckpt=False))
    assert one.applies and four.applies and four.explains and one.explains
    assert four.explains.value == pytest.approx(4 * one.explains.value, rel=0.1)
    assert four.fix is not None and four.fix.code == "micro_batch_1"


def test_rl_activations_are_generations_by_completion_length(train: Make) -> None:
    case = train("Qwen2-7B", "A100-40G-SXM", 8, method="full", stage="grpo",
                 knobs={"num_generations": 8, "completion_len": 4096})
    c = tm.activations(case)
    assert c.code == "rl_activations" and c.detail["micro_batch"] == 8 and c.detail["seq"] == 512 + 4096


def test_activations_do_not_apply_to_a_tiny_batch(train: Make) -> None:
    assert not tm.activations(train("Qwen2-7B", "H800-SXM", 1, method="lora", seq_len=256)).applies


def test_vision_tokens_follow_max_pixels(train: Make) -> None:
    big = train("Qwen2.5-VL-7B", "A100-40G-SXM", 1, method="lora", seq_len=1024, knobs={"max_pixels": 12845056})
    c = tm.vision_tokens(big)
    assert c.applies and c.detail["tokens"] == 12845056 // 784  # 28 x 28 pixels a token
    assert c.fix is not None and c.fix.fixed is not None and c.fix.fixed.value < big.per_gpu_gib


def test_vision_tokens_do_not_apply_to_a_text_model(train: Make) -> None:
    assert not tm.vision_tokens(train("Qwen2-7B", "A100-40G-SXM", 1, method="lora",
                                      knobs={"max_pixels": 12845056})).applies


def test_no_checkpointing_is_what_checkpointing_saves(train: Make) -> None:
    case = train("Qwen2-7B", "A100-40G-SXM", 1, method="lora", seq_len=4096, grad_ckpt=False)
    c = tm.no_checkpointing(case)
    assert c.applies and c.stated and c.explains is not None
    assert c.explains.value == pytest.approx(case.per_gpu_gib - case.memory(grad_ckpt=True).per_gpu_gib, abs=0.01)
    assert not tm.no_checkpointing(train("Qwen2-7B", "A100-40G-SXM", 1, method="lora", grad_ckpt=True)).applies


def test_eager_attention_keeps_the_scores(train: Make) -> None:
    case = train("Qwen2-7B", "A100-40G-SXM", 1, method="lora", seq_len=8192, attention="eager")
    c = tm.eager_attention(case)
    assert c.applies and c.explains is not None and c.explains.value > 1
    assert not tm.eager_attention(train("Qwen2-7B", "A100-40G-SXM", 1, method="lora", seq_len=8192)).applies


def test_an_8bit_optimizer_saves_the_fp32_moments(train: Make) -> None:
    case = train("Qwen2-7B", "A100-40G-SXM", 1, method="full")
    c = tm.optimizer_states(case)
    assert c.applies and c.explains is not None
    # fp32 master + two fp32 moments (12 B) against two 1-byte moments + fp32 master (6 B): 6 B a parameter
    assert c.explains.value == pytest.approx(6 * count_params(case.model).total / GIB, rel=0.05)
    assert not tm.optimizer_states(train("Qwen2-7B", "A100-40G-SXM", 1, method="lora")).applies


def test_a_reference_model_is_a_frozen_copy(train: Make) -> None:
    case = train("Qwen2-7B", "H800-SXM", 2, method="full", stage="dpo", zero_stage=3)
    c = tm.reference_model(case)
    assert c.applies and c.detail["copies"] == 1 and c.explains is not None
    assert c.explains.value == pytest.approx(2 * count_params(case.model).total / GIB / 2, rel=0.1)  # sharded too
    assert not tm.reference_model(train("Qwen2-7B", "H800-SXM", 8, method="full", stage="sft")).applies


def test_a_colocated_rollout_engine_takes_its_share(train: Make) -> None:
    case = train("Qwen2-7B", "H800-SXM", 8, method="full", stage="grpo",
                 knobs={"engine": "vllm", "gpu_memory_utilization": 0.6})
    c = tm.rollout_engine(case)
    assert c.applies and c.explains is not None and c.explains.value == pytest.approx(0.6 * 80, abs=0.1)
    assert not tm.rollout_engine(train("Qwen2-7B", "H800-SXM", 8, method="full", stage="grpo")).applies


def test_other_processes_from_the_pasted_error(train: Make) -> None:
    seen = {"status": "oom", "kind": "oom", "card_gb": 23.65, "free_gb": 1.2, "process_gb": 12.1, "other_gb": 10.3}
    c = tm.other_processes(train("Qwen2-7B", "RTX-4090", 1, method="lora", seen=seen))
    assert c.applies and c.explains is not None and c.explains.value == 10.3
    # the older format states no other process: what the total, free and this process leave
    older = {"card_gb": 23.65, "free_gb": 1.2, "process_gb": 12.1}
    assert tm.other_gib(**{k.removesuffix("_gb"): v for k, v in {**older, "other_gb": None}.items()}) == \
        pytest.approx(23.65 - 1.2 - 12.1)
    assert not tm.other_processes(train("Qwen2-7B", "RTX-4090", 1, method="lora")).applies


def test_unstated_checkpointing_is_what_it_would_cost_if_off(train: Make) -> None:
    case = train("Qwen2-7B", "A100-40G-SXM", 1, method="lora", seq_len=4096)  # the framework's default: on
    c = tm.no_checkpointing(case)
    assert c.code == "maybe_no_checkpointing" and c.applies and not c.stated and c.explains is not None
    assert c.explains.value == pytest.approx(case.memory(grad_ckpt=False).per_gpu_gib - case.per_gpu_gib, abs=0.01)
    # ranked after every cause the post's own settings give
    from service.planner.causes import rank

    d = rank.train_memory_diagnosis(case, "train_oom")
    assert d.causes[-1].code == "maybe_no_checkpointing"
