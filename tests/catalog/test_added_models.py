"""Names people ask about resolve to the rows added for them, and those rows weigh what the models weigh."""

from __future__ import annotations

import pytest

from service.catalog.queries import resolve_model
from service.errors import UnknownModelError
from service.sizing.params import count_params

# name as typed -> catalog row id
ADDED = {
    "ERNIE-4.5-300B-A47B": "ERNIE-4.5-300B-A47B",
    "baidu/ERNIE-4.5-300B-A47B-PT": "ERNIE-4.5-300B-A47B",
    "文心4.5-300B": "ERNIE-4.5-300B-A47B",
    "文心4.5-300B-A47B": "ERNIE-4.5-300B-A47B",
    "Command-R+": "Command-R-Plus-104B",
    "CohereForAI/c4ai-command-r-plus": "Command-R-Plus-104B",
    "c4ai-command-r-plus": "Command-R-Plus-104B",
    "command r plus": "Command-R-Plus-104B",
    # issue 39: releases people ask about, as typed
    "deepseek v3.2 exp": "DeepSeek-V3.2",  # DeepseekV32ForCausalLM, the same config as V3.2
    "deepseek-ai/DeepSeek-V3.2-Exp": "DeepSeek-V3.2",
    "GLM-4.7": "GLM-4.6",  # the same layers, experts and 202752 context
    "zai-org/GLM-4.7-FP8": "GLM-4.6",
    "Kimi-K2-Thinking": "Kimi-K2-Thinking",
    "moonshotai/Kimi-K2-Thinking": "Kimi-K2-Thinking",
    "Kimi-K2-Instruct-0905": "Kimi-K2-Instruct-0905",
    "Kimi-K2-Instruct": "Kimi-K2",
    "Hunyuan-Large": "Hunyuan-Large",
    "Hunyuan-A52B-Instruct": "Hunyuan-Large",
    "混元-Large": "Hunyuan-Large",
    "Hunyuan-7B-Instruct": "Hunyuan-7B",
    "tencent/Hunyuan-4B-Instruct": "Hunyuan-4B",
    "InternVL3-8B": "InternVL3-8B",
    "OpenGVLab/InternVL3-78B": "InternVL3-78B",
    "InternVL3-1B": "InternVL3-1B",
    "InternVL3.5-8B": "InternVL3.5-8B",
    "OpenGVLab/InternVL3_5-241B-A28B": "InternVL3.5-241B-A28B",
    "InternVL3.5-30B-A3B": "InternVL3.5-30B-A3B",
    "InternVL3_5-38B": "InternVL3.5-38B",
    "Qwen3-Coder-30B-A3B-Instruct": "Qwen3-Coder-30B-A3B",
    "Seed-OSS-36B-Instruct": "Seed-OSS-36B",
    "Mistral-Small-3.2-24B-Instruct-2506": "Mistral-Small-3.1-24B",
    "Mistral-Small-24B-Instruct-2501": "Mistral-Small-3-24B",
    "MiniCPM-2B-sft-bf16": "MiniCPM-2B",
    "openbmb/MiniCPM-2B-128k": "MiniCPM-2B-128k",
    # names as typed that were already rows: they resolve to themselves
    "Qwen3-235B-A22B-Thinking-2507": "Qwen3-235B-A22B-2507",
    "Qwen3-30B-A3B-Instruct-2507": "Qwen3-30B-A3B-2507",
    "Qwen3-Next-80B-A3B-Thinking": "Qwen3-Next-80B-A3B",
    "Qwen3-VL-8B-Instruct": "Qwen3-VL-8B",
    "Qwen2.5-7B-Instruct-1M": "Qwen2.5-7B-1M",
    "Qwen3-Coder-480B-A35B-Instruct": "Qwen3-Coder-480B-A35B",
    "GLM-4.5V": "GLM-4.5V",
    "MiniMax-M1": "MiniMax-M1",
    "Llama-4-Scout-17B-16E-Instruct": "Llama-4-Scout-17B-16E",
    "gpt-oss-120b": "gpt-oss-120b",
    "ERNIE-4.5-21B-A3B": "ERNIE-4.5-21B-A3B",
}
# published counts (the model card's or README's), for rows whose count was not calculated from the config
PUBLISHED = {"Hunyuan-Large": 389, "InternVL3-1B": 0.938, "InternVL3-2B": 2.09, "InternVL3-8B": 7.94, "InternVL3-78B": 78.4,
             "InternVL3.5-1B": 1.06, "InternVL3.5-4B": 4.73, "InternVL3.5-8B": 8.53, "InternVL3.5-241B-A28B": 240.7,
             "Seed-OSS-36B": 36, "Kimi-K2-Thinking": 1026, "MiniCPM-2B": 2.72, "Mixtral-8x22B": 141}


@pytest.mark.parametrize(("name", "row_id"), sorted(ADDED.items()))
def test_added_name_resolves_to_its_row(catalog, name: str, row_id: str) -> None:
    assert resolve_model(name, catalog.models).id == row_id


@pytest.mark.parametrize("row_id", sorted(set(ADDED.values())))
def test_added_row_weighs_its_published_count(catalog, row_id: str) -> None:
    # BF16 weights (2 bytes a parameter) counted from the row's dimensions, within 8 % of the published count.
    m = next(r for r in catalog.models if r.id == row_id)
    counted_gb = 2 * (count_params(m).total / 1e9 + (m.vision_params_b or 0.0))
    published_gb = 2 * m.params_published_b
    assert abs(counted_gb - published_gb) <= 0.08 * published_gb, (row_id, counted_gb, published_gb)


@pytest.mark.parametrize(("row_id", "published_b"), sorted(PUBLISHED.items()))
def test_row_weighs_the_vendors_count(catalog, row_id: str, published_b: float) -> None:
    # BF16 weights counted from the row's dimensions (with the vision tower) within 3 % of the vendor's count
    m = next(r for r in catalog.models if r.id == row_id)
    counted = count_params(m).total / 1e9 + (m.vision_params_b or 0.0)
    assert abs(counted - published_b) <= 0.03 * published_b, (row_id, counted, published_b)


def test_rows_fixed_in_issue_39(catalog) -> None:
    rows = {m.id: m for m in catalog.models}
    thinking = resolve_model("Kimi-K2-Thinking", catalog.models)
    assert thinking.id != "Kimi-K2" and thinking.released_dtype == "int4" and thinking.max_position_embeddings == 262144
    assert rows["Kimi-K2"].max_position_embeddings == 131072 and rows["Kimi-K2"].released_dtype == "fp8"
    assert rows["Kimi-K2-Instruct-0905"].max_position_embeddings == 262144
    minicpm = resolve_model("MiniCPM-2B-dpo-bf16", catalog.models)  # the 4K checkpoints, not the 128k config
    assert (minicpm.max_position_embeddings, minicpm.vocab_size, minicpm.tie_word_embeddings) == (4096, 122753, True)
    assert rows["MiniCPM-2B-128k"].max_position_embeddings == 65536
    assert rows["Mixtral-8x22B"].vocab_size == 32000


def test_bare_wenxin_45_suggests_every_ernie_45_size(catalog) -> None:
    with pytest.raises(UnknownModelError) as exc:
        resolve_model("文心4.5", catalog.models)
    for row_id in ("ERNIE-4.5-0.3B", "ERNIE-4.5-21B-A3B", "ERNIE-4.5-300B-A47B"):
        assert row_id in str(exc.value)


@pytest.mark.parametrize(("name", "row"), [("DeepSeek-V4", "DeepSeek-V4"), ("deepseek-ai/DeepSeek-V4-Pro", "DeepSeek-V4-Pro"),
                                            ("DeepSeek-V4-Flash-FP8", "DeepSeek-V4-Flash"),
                                            ("google/gemma-4-31B-it", "Gemma-4-31B"), ("gemma-4-26B-A4B-it", "Gemma-4-26B-A4B"),
                                            ("Gemma-4", "Gemma-4")])
def test_known_but_unsized_release_is_refused_by_name(catalog, name: str, row: str) -> None:
    # DeepSeek-V4's compressed attention and Gemma-4's separate global head dims are not in the schema: the catalog
    # says so with the reason and the source, never sizes another model (or a generic decoder of the name's size)
    from service.catalog.unsized import UnsizedModelError

    with pytest.raises(UnsizedModelError) as exc:
        resolve_model(name, catalog.models)
    assert exc.value.row.id == row and "not sized" in exc.value.message and "https://" in exc.value.message
    assert not isinstance(exc.value, UnknownModelError)  # the lenient paths must not size it from the name
