"""What a user reads: units, confidence, sources and the MFU basis in their language, without our working notes;
and the Chinese plan answer end to end with none of the internal or English text issue 13 found."""

from __future__ import annotations

import re
from pathlib import Path
from typing import get_args

import pytest

from service.catalog.schema import FactConfidence, PriceConfidence
from service.labels import confidence_label, mfu_basis, per_unit, public_source, strip_internal

SCRAPE = ("lfxzgyyds/starpoolprice:history/prices-2026-09-15T1316.json (id 69395690661; logged-in calculator "
          "capture); shared/reference/prices.md §2")
MFU = ("Llama 2 model card on A100-80GB implies 0.39-0.46 MFU; Megatron-LM 41.5 % at 22B (sizing.md C1, C2); "
       "x0.85 for lora (smaller GEMMs)")
INTERNAL = [r"shared/", r"\bid \d{6,}", r"sizing\.md", r"third_party", r"/hour\b", r"\binferred\b",
            r"method=", r"quant_bits=", r"\[guide/[^\]]*\]", r"prices\.md", r"model card", r"smaller GEMMs"]


def test_units_and_confidence() -> None:
    assert per_unit("hour", "zh") == "/小时" and per_unit("month", "zh") == "/月" and per_unit("hour", "en") == "/hour"
    assert [confidence_label(c, "zh") for c in ("official", "third_party", "estimate")] == ["官方", "第三方", "估算"]


def test_every_confidence_the_catalog_can_hold_has_a_chinese_label() -> None:
    """A Chinese plan said "规格来自unverified来源" for a JD Cloud instance (CI, test_one_language)."""
    for confidence in (*get_args(PriceConfidence), *get_args(FactConfidence)):
        zh = confidence_label(confidence, "zh")
        assert not re.search(r"[A-Za-z]", zh), (confidence, zh)
        assert confidence_label(confidence, "en") != zh


def test_sources_keep_public_addresses_only() -> None:
    assert strip_internal(SCRAPE) == "lfxzgyyds/starpoolprice:history/prices-2026-09-15T1316.json"
    assert public_source(SCRAPE, "third_party", "zh") == "第三方价格采集（https://github.com/lfxzgyyds/starpoolprice）"
    assert public_source("shared/reference/prices.md §3 (derived)", "estimate", "zh") == "估算"
    official = "https://cloud.tencent.com/document/product/560/19700 (id 22977428773); shared/reference/clouds.md §1.2"
    assert public_source(official, "official", "en") == "official price page (https://cloud.tencent.com/document/product/560/19700)"


def test_a_note_never_names_our_scrape() -> None:
    """Regression: the Chinese catalog view showed "（starpool）", the name of our price scrape, in a price note."""
    note = "2026-09-15 登录计算器采集到相同价格（starpool）。"
    assert strip_internal(note) == "2026-09-15 登录计算器采集到相同价格。"
    assert strip_internal("captured on 2026-09-15 (starpool).") == "captured on 2026-09-15."
    assert strip_internal("（阿里云 gn8v，starpool 2026-09-15 采集）") == "（阿里云 gn8v，2026-09-15 采集）"
    assert strip_internal(SCRAPE).startswith("lfxzgyyds/starpoolprice:")  # the public address stays


def test_mfu_basis_in_chinese_without_references() -> None:
    zh = mfu_basis(MFU, "zh")
    assert zh.startswith("Llama 2 模型卡") and "LoRA 乘以 0.85" in zh and "sizing" not in zh
    assert "implies" not in zh and "GEMMs" not in zh
    assert mfu_basis(MFU, "en").endswith("x0.85 for lora (smaller GEMMs)") and "sizing.md" not in mfu_basis(MFU, "en")
    assert mfu_basis("something new (sizing.md Z9)", "zh") == "按公开的训练实测数据"


@pytest.fixture(scope="module")
def chinese_answer(tmp_path_factory: pytest.TempPathFactory) -> str:
    pytest.importorskip("service.assistant.service")
    from service.assistant.service import build_assistant
    from tests.api.conftest import make_settings
    from tests.web.conftest import GuideRetriever

    settings = make_settings(Path(tmp_path_factory.mktemp("labels")))
    assistant = build_assistant(settings, retriever_factory=lambda: GuideRetriever(settings.knowledge_dir))
    return assistant.ask("用Qwen2-7B做问答微调，数据集10万条JSONL，预算月均¥3000").answer_markdown


def test_the_chinese_answer_shows_no_internal_or_english_text(chinese_answer: str) -> None:
    found = [p for p in INTERNAL if re.search(p, chinese_answer)]
    assert found == [], found
    # the pick's price per hour and its confidence, in Chinese (the pick is Tencent's GT4 at its list price since
    # the 16 x A10 bare-metal estimate lost its non-public source, issue 39), and the list page's age in Chinese
    assert re.search(r"¥[\d,.]+/小时", chinese_answer) and re.search(r"置信度 (官方|第三方|估算)", chinese_answer)
    assert "刊例价来自约 2021 年的价格页，可能已调整，请以官网价格计算器为准" in chinese_answer
    # citations are section titles linking to the knowledge page, not slugs
    assert re.search(r"- \[[^\]]*LoRA 与 QLoRA 的显存\]\(/knowledge/guide/04-training-memory\.zh\.md#", chinese_answer)


def test_bare_urls_become_autolinks_that_stop_at_chinese_punctuation() -> None:
    from service.labels import autolink

    text = "来源：第三方价格采集（https://github.com/lfxzgyyds/starpoolprice），日期 2026-09-15"
    assert autolink(text) == "来源：第三方价格采集（<https://github.com/lfxzgyyds/starpoolprice>），日期 2026-09-15"
    kept = "[标题](/knowledge/guide/x.md#y) 与 <https://a.com> 与 [b](https://b.com)"
    assert autolink(kept) == kept


def test_the_chinese_answer_links_end_before_chinese_text(chinese_answer: str) -> None:
    assert "（<https://" in chinese_answer and not re.search(r"(?<!<)https://[^\s>]*[，。（）]", chinese_answer)
