"""Workload -> job: model resolution (names, sizes, config.json), dataset -> tokens, stated assumptions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from service.errors import InvalidInputError, UnknownModelError
from service.planner.resolve import model_from_hf_config, resolve_job
from service.sizing.params import count_params
from service.workload import Workload


def job(catalog, **fields):  # type: ignore[no-untyped-def]
    return resolve_job(Workload(**fields), catalog.models)


@pytest.mark.parametrize(
    ("fields", "tokens_per_epoch", "samples"),
    [
        # samples x stated mean length: 10,000 x 300 = 3.0M tokens.
        ({"samples": 10_000, "avg_tokens_per_sample": 300}, 3.0e6, 10_000),
        # samples without a length: 512 tokens assumed -> 100,000 x 512 = 51.2M.
        ({"samples": 100_000}, 51.2e6, 100_000),
        # a stated sample length above the default cutoff raises the cutoff (issue 12): 1,000 x 8,000.
        ({"samples": 1_000, "avg_tokens_per_sample": 8_000}, 8.0e6, 1_000),
        # with a stated cutoff, longer samples are cut: 1,000 x min(8,000, 2,048).
        ({"samples": 1_000, "avg_tokens_per_sample": 8_000, "seq_len": 2048}, 2.048e6, 1_000),
        # dataset size at 3 bytes/token: 3 GB -> 1.0B tokens, / 512 per sample.
        ({"dataset_gb": 3.0}, 1.0e9, 1.0e9 / 512),
        # explicit tokens win.
        ({"tokens": 5e8, "samples": 1000}, 5e8, 1000),
        # nothing given: 10,000 samples of 512 tokens.
        ({}, 5.12e6, 10_000),
    ],
)
def test_dataset_to_tokens(catalog, fields: dict[str, object], tokens_per_epoch: float, samples: float) -> None:
    j = job(catalog, model="Qwen2-7B", **fields)
    assert j.tokens_per_epoch == pytest.approx(tokens_per_epoch)
    assert j.samples_per_epoch == pytest.approx(samples)


def test_assumptions_are_stated(catalog) -> None:
    j = job(catalog, model="Qwen2-7B", samples=100_000)
    text = " ".join(j.assumptions)
    assert "512 tokens" in text and "2048" in text and "Epochs assumed 3" in text
    assert j.tokens_total == pytest.approx(3 * 51.2e6)


def test_pretraining_defaults_to_one_epoch(catalog) -> None:
    assert job(catalog, model="Qwen2-7B", method="pretrain", tokens=1e9).epochs == 1


def test_attention_flops_use_the_mean_sample_length(catalog) -> None:
    # 300-token samples are not padded to the 2,048 cutoff.
    assert job(catalog, model="Qwen2-7B", samples=1000, avg_tokens_per_sample=300).avg_seq_len == 300


def test_long_sequence_beyond_context_is_flagged(catalog) -> None:
    j = job(catalog, model="Llama-2-7B", seq_len=8192)
    assert j.seq_len == 8192 and any("RoPE" in a for a in j.assumptions)


def test_a_bare_size_sizes_a_generic_decoder(catalog) -> None:
    j = job(catalog, model="7B")
    assert j.model.params_published_b == 7
    assert any("7B decoder" in a for a in j.assumptions)
    j2 = job(catalog, params_b=70)
    assert 60e9 < count_params(j2.model).total < 80e9  # dimensions of the closest dense model


def test_qlora_needs_a_decoder(catalog) -> None:
    with pytest.raises(InvalidInputError):
        job(catalog, model="BERT-base", method="qlora")


def test_unknown_model_suggests(catalog) -> None:
    with pytest.raises(UnknownModelError) as err:
        job(catalog, model="Qwen2-7")
    assert err.value.suggestions and "Qwen2-7B" in err.value.suggestions


def test_workload_validation() -> None:
    # quant_bits with LoRA means QLoRA; with a full fine-tune it is a contradiction.
    assert Workload(model="Qwen2-7B", quant_bits=4).method == "qlora"
    with pytest.raises(ValidationError):
        Workload(model="Qwen2-7B", method="full", quant_bits=4)
    with pytest.raises(ValidationError):
        Workload()  # neither a model nor a size


def _write_config(path: Path, **overrides: object) -> Path:
    cfg: dict[str, object] = {
        "model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32,
        "num_key_value_heads": 32, "intermediate_size": 11008, "vocab_size": 32000,
        "max_position_embeddings": 4096, "tie_word_embeddings": False,
    }
    cfg.update(overrides)
    path.write_text(json.dumps(cfg), encoding="utf-8")
    return path


def test_hf_config_sizes_a_private_model(tmp_path: Path, catalog) -> None:
    # A config with Llama-2-7B's dimensions counts to Llama-2-7B's 6,738,415,616 parameters.
    spec = model_from_hf_config(_write_config(tmp_path / "config.json"))
    assert count_params(spec).total == 6_738_415_616
    j = job(catalog, model=str(tmp_path / "config.json"))
    assert any("config.json" in a for a in j.assumptions)


def test_hf_config_moe(tmp_path: Path) -> None:
    # Qwen3-30B-A3B-like: 128 experts, top-8, moe_intermediate_size 768 -> about 3.3B active.
    cfg = _write_config(tmp_path / "config.json", model_type="qwen3_moe", hidden_size=2048, num_hidden_layers=48,
                        num_attention_heads=32, num_key_value_heads=4, head_dim=128, intermediate_size=6144,
                        vocab_size=151936, num_experts=128, num_experts_per_tok=8, moe_intermediate_size=768)
    spec = model_from_hf_config(cfg)
    assert spec.moe is not None and spec.moe.top_k == 8
    assert spec.active_params_b == pytest.approx(3.35, rel=0.02)


def test_hf_config_missing_fields_is_a_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "config.json"
    bad.write_text(json.dumps({"hidden_size": 64}), encoding="utf-8")
    with pytest.raises(InvalidInputError) as err:
        model_from_hf_config(bad)
    assert "num_hidden_layers" in str(err.value)


@pytest.mark.parametrize(("fields", "method"), [
    ({"model": "ResNet-50", "method": "lora"}, "full"),  # LoRA has no meaning for a CNN: planned in full, said so
    ({"model": "BERT-base"}, "full"),  # no method given: encoders fine-tune in full
    ({"model": "BERT-base", "method": "lora"}, "lora"),  # an explicit LoRA on an encoder is kept
    ({"model": "Qwen2-7B"}, "lora"),  # LLMs keep the LoRA default
])
def test_method_defaults_by_model_kind(catalog, fields: dict[str, object], method: str) -> None:
    job = resolve_job(Workload.model_validate(fields), catalog.models)
    assert job.method == method
    if method != fields.get("method", "lora"):
        assert any("full" in a for a in job.assumptions)
