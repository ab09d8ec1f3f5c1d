"""scripts/add_model.py: a config.json becomes a validated row in models.yaml's style; duplicates are refused."""

from __future__ import annotations

import importlib.util
import json
import sys
from datetime import date
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from service.catalog.loader import read_yaml_rows
from service.catalog.schema import ModelSpec
from tests.conftest import REPO_ROOT


@pytest.fixture(scope="module")
def add_model() -> ModuleType:
    spec = importlib.util.spec_from_file_location("add_model", REPO_ROOT / "scripts" / "add_model.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["add_model"] = module
    spec.loader.exec_module(module)
    return module


# The tiny decoder of tests/sizing/specs.py as a config.json: 189,760 parameters (worked there).
TINY: dict[str, Any] = {"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4,
                        "num_key_value_heads": 2, "intermediate_size": 96, "vocab_size": 1000,
                        "max_position_embeddings": 4096, "tie_word_embeddings": False}
EXISTING = """- id: Old-7B
  name: Old-7B
  family: test
  kind: decoder
  aliases: ["org/Old-7B", "旧模型-7B"]
  num_layers: 2
  hidden_size: 64
  num_heads: 4
  intermediate_size: 96
  params_published_b: 7
  source: test
  as_of: 2026-01-01
"""


def _row(add_model: ModuleType, cfg: dict[str, Any] | None = None, **kw: Any) -> ModelSpec:
    args: dict[str, Any] = {"model_id": "Tiny-1M", "source": "org/tiny:config.json@abc1234",
                            "aliases": ["org/Tiny-1M"], "as_of": date(2026, 12, 1), **kw}
    row: ModelSpec = add_model.build_row(cfg or TINY, **args)
    return row


def test_params_are_calculated_and_said_when_not_given(add_model: ModuleType) -> None:
    row = _row(add_model)
    assert row.params_published_b == pytest.approx(189_760 / 1e9, abs=1e-3)
    assert "params calc" in row.source and row.source.startswith("org/tiny:config.json@abc1234")


def test_published_params_are_kept_without_the_calc_note(add_model: ModuleType) -> None:
    row = _row(add_model, params_b=0.2)
    assert row.params_published_b == 0.2 and "params calc" not in row.source


def test_moe_active_params_are_calculated(add_model: ModuleType) -> None:
    # tests/sizing/specs.moe_decoder as a config: 202,560 total, 177,984 active
    cfg = {**TINY, "num_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": 32}
    row = _row(add_model, cfg)
    assert row.moe is not None and row.active_params_b == pytest.approx(177_984 / 1e9, abs=1e-3)
    assert "active calc" in row.source


def test_the_row_is_appended_in_the_file_style_and_reads_back(add_model: ModuleType, tmp_path: Path) -> None:
    out = tmp_path / "models.yaml"
    out.write_text(EXISTING, encoding="utf-8")
    cfg = {**TINY, "n_routed_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": 32,
           "n_shared_experts": 1, "quantization_config": {"quant_method": "fp8"}}
    written = add_model.append_row(out, _row(add_model, cfg, aliases=["org/Tiny-1M", "千问-tiny"]))
    assert '  aliases: ["org/Tiny-1M", "千问-tiny"]' in written  # a quoted flow list, not escaped
    assert "  moe: {num_experts: 4, top_k: 2, moe_intermediate_size: 32, shared_experts: 1}" in written
    assert "  released_dtype: fp8" in written and "  source: >-" in written
    rows = read_yaml_rows(out, ModelSpec)  # the loader's own reader
    assert [r.id for r in rows] == ["Old-7B", "Tiny-1M"] and rows[1].released_dtype == "fp8"
    assert out.read_text(encoding="utf-8").startswith(EXISTING + "\n- id: Tiny-1M")  # one blank line between rows


@pytest.mark.parametrize(("kw", "clash"), [
    ({"model_id": "Old-7B"}, "id is already"),  # the same id
    ({"aliases": ["old 7b"]}, "already names Old-7B"),  # an alias the other row answers to, after normalising
    ({"aliases": ["ORG/OLD-7B"]}, "already names Old-7B"),
    ({"name": "旧模型 7b"}, "already names Old-7B"),  # the display name too
])
def test_duplicates_are_refused(add_model: ModuleType, tmp_path: Path, kw: dict[str, Any], clash: str) -> None:
    out = tmp_path / "models.yaml"
    out.write_text(EXISTING, encoding="utf-8")
    with pytest.raises(add_model.RowError, match=clash):
        add_model.append_row(out, _row(add_model, **kw))
    assert out.read_text(encoding="utf-8") == EXISTING  # nothing written


def test_cli_writes_and_refuses_with_exit_2(add_model: ModuleType, tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    out, cfg = tmp_path / "models.yaml", tmp_path / "config.json"
    out.write_text(EXISTING, encoding="utf-8")
    cfg.write_text(json.dumps(TINY), encoding="utf-8")
    argv = [str(cfg), "--id", "Tiny-1M", "--source", "org/tiny:config.json@abc1234", "--aliases", "a-1|b-2",
            "--params-b", "0.19", "--out", str(out)]
    assert add_model.main(argv) == 0
    assert read_yaml_rows(out, ModelSpec)[1].aliases == ["a-1", "b-2"]
    assert add_model.main(argv) == 2  # again: a duplicate
    assert "already in the catalog" in capsys.readouterr().err


def test_an_unsupported_config_is_refused_not_guessed(add_model: ModuleType) -> None:
    with pytest.raises(add_model.RowError, match="linear_attn_config"):
        _row(add_model, {**TINY, "linear_attn_config": {"kda_layers": [1]}})


TINY_ROW = """- id: Tiny-1M
  name: Tiny-1M
  family: test
  kind: decoder
  aliases: ["org/Tiny-1M"]
  num_layers: 2
  hidden_size: 64
  num_heads: 4
  num_kv_heads: 2
  intermediate_size: 96
  vocab_size: 1000
  max_position_embeddings: 4096
  params_published_b: 0.19
  source: >-
    org/tiny:config.json@abc1234
  as_of: 2026-12-01
"""


def test_a_release_with_the_same_dims_becomes_an_alias(add_model: ModuleType, tmp_path: Path) -> None:
    out = tmp_path / "models.yaml"
    out.write_text(EXISTING + "\n" + TINY_ROW + "\n# ---- a section comment\n" + EXISTING.replace("Old-7B", "Z-7B")
                   .replace("旧模型", "乙"), encoding="utf-8")
    add_model.alias_existing(out, TINY, "Tiny-1M", model_id="Tiny-1M-2507", source="org/tiny-2507:config.json@def5678",
                             aliases=["org/Tiny-1M-2507"])
    rows = read_yaml_rows(out, ModelSpec)
    tiny = next(r for r in rows if r.id == "Tiny-1M")
    assert tiny.aliases == ["org/Tiny-1M", "Tiny-1M-2507", "org/Tiny-1M-2507"]
    assert "Tiny-1M-2507 has the same dims (org/tiny-2507:config.json@def5678)" in tiny.source
    assert [r.id for r in rows] == ["Old-7B", "Tiny-1M", "Z-7B"]
    assert "# ---- a section comment" in out.read_text(encoding="utf-8")  # the rest of the file is untouched


def test_a_release_with_other_dims_is_not_an_alias(add_model: ModuleType, tmp_path: Path) -> None:
    out = tmp_path / "models.yaml"
    out.write_text(TINY_ROW, encoding="utf-8")
    with pytest.raises(add_model.RowError, match="max_position_embeddings"):
        add_model.alias_existing(out, {**TINY, "max_position_embeddings": 32768}, "Tiny-1M", model_id="Tiny-1M-32k",
                                 source="s", aliases=[])
    assert out.read_text(encoding="utf-8") == TINY_ROW
