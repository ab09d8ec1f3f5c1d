"""A measured row's stated settings reach the engine's setup (service/evals/runs.py build_setup)."""

from __future__ import annotations

from service.evals.runs import RunRow, build_setup


def _row(**kw: object) -> RunRow:
    base: dict[str, object] = {"id": "r", "source": "s", "source_group": "g", "kind": "memory", "model": "Llama-2-7B",
                               "framework": "torchtune", "method": "full", "gpus": 4, "zero_stage": 3}
    return RunRow.model_validate({**base, **kw})


def test_torchtune_rows_before_its_fsdp2_migration_run_fsdp1() -> None:
    s, _ = build_setup(_row(extra={"fsdp": "FSDP1 FULL_SHARD (full_finetune_distributed)"}), None)
    assert s.sharding == "fsdp"
    s, _ = build_setup(_row(), None)
    assert s.sharding == "fsdp2"  # torchtune's default today


def test_a_paged_32bit_adamw_is_paged_only_when_the_row_says_so() -> None:
    named = {"optimizer_name": "bitsandbytes PagedAdamW (32-bit states, paged)"}
    s, _ = build_setup(_row(optimizer="other", extra={**named, "paged_optimizer": True}), None)
    assert s.optimizer == "paged_adamw_8bit"
    s, _ = build_setup(_row(optimizer="other", extra=named), None)
    assert s.optimizer != "paged_adamw_8bit"


def test_compile_is_read_from_the_row() -> None:
    assert build_setup(_row(extra={"compile": True}), None)[0].compiled
    assert build_setup(_row(extra={"torch_compile": True}), None)[0].compiled
    assert not build_setup(_row(), None)[0].compiled
