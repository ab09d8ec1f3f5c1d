"""Words a user reads, in their language: price units, confidence levels, the MFU basis, sources.

The catalog and the engine keep their internal codes (`third_party`, `hour`) and their working notes (scrape ids,
references to our research notes); everything shown to a person goes through these functions first:

    unit_label("hour", "zh")            # "小时"
    confidence_label("third_party", "zh")  # "第三方"
    public_source(src)                  # URLs and public names only: no research-note references, no scrape ids
    mfu_basis(src, "zh")                # the MFU prior's basis in Chinese, without internal section references
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import date
from functools import lru_cache
from typing import Any

_UNITS = {"zh": {"hour": "小时", "month": "月", "year": "年", "day": "天"},
          "en": {"hour": "hour", "month": "month", "year": "year", "day": "day"}}
_CONFIDENCE = {"zh": {"official": "官方", "third_party": "第三方", "estimate": "估算", "user": "用户提供",
                      "inferred": "推断", "unverified": "未核实"},
               "en": {"official": "official", "third_party": "third party", "estimate": "estimate",
                      "user": "user supplied", "inferred": "inferred", "unverified": "unverified"}}
_SOURCE_KIND = {"zh": {"official": "官方价格页", "third_party": "第三方价格采集", "estimate": "估算",
                       "user": "你提供的价格表", "inferred": "推断"},
                "en": {"official": "official price page", "third_party": "third-party price capture",
                       "estimate": "estimate", "user": "your price sheet", "inferred": "inferred"}}

# Internal references: our research notes (shared/..., sizing.md C1), scrape ids, repository-not-found remarks.
_NOTE_REF = re.compile(r"\s*\((?:[^()]*\b(?:id \d{6,}|sizing\.md|prices\.md|clouds\.md|shared/)[^()]*)\)")
_SHARED = re.compile(r"(?:^|[;,]\s*)shared/[^;,()]*(?:\s*\(derived\))?")
_SECTION_REF = re.compile(r"\s*\b\w+\.md\s*(?:§\s*[\d.]+|[A-Z]\d+(?:[,/]\s*[A-Z]?\d+)*)(?:\s*\(derived\))?")
# the name of our price scrape in a note ("（starpool）", "starpool capture"), never its address (starpoolprice)
_SCRAPER = re.compile(r"\s*[(（]starpool[)）]|\bstarpool\b\s*")
_GITHUB = re.compile(r"(?<![/\w.])([A-Za-z0-9][\w-]*/[\w.-]+):[^\s;,]+")  # "owner/repo:path@commit"
_URL = re.compile(r"https?://[^\s;,)]+|\b(?:[a-z0-9-]+\.)+(?:com|cn|net|org|io)(?:/[^\s;,)']*)?", re.I)


def unit_label(unit: str, lang: str) -> str:
    return _UNITS["zh" if lang == "zh" else "en"].get(unit, unit)


def per_unit(unit: str, lang: str) -> str:
    """"/小时" or "/hour"."""
    return f"/{unit_label(unit, lang)}"


def confidence_label(confidence: str, lang: str) -> str:
    return _CONFIDENCE["zh" if lang == "zh" else "en"].get(confidence, confidence)


@lru_cache(maxsize=2048)
def strip_internal(text: str) -> str:
    """A source or basis without references to our research notes or scrape ids (cached: the planner asks for the
    same few hundred price notes on every plan)."""
    out = _NOTE_REF.sub("", text)
    out = _SHARED.sub("", out)
    out = _SECTION_REF.sub("", out)
    out = _SCRAPER.sub("", out)
    return re.sub(r"\s*;\s*(?=;|$)", "", out).strip(" ;,")


def price_date(as_of: str | None, captured: str | None, lang: str) -> str:
    """A price's date as a reader reads it: the source's own date, or for an undated page when it was read
    ("页面未注明日期 · 抓取于 2026-12-01"). A catalog price says its content's age too: `price_when`."""
    if as_of:
        return str(as_of)
    when = str(captured or "?")
    return f"页面未注明日期 · 抓取于 {when}" if lang == "zh" else f"page undated · captured {when}"


def _field(p: object, key: str) -> Any:
    """A price's field, whether the price is a row, a typed model or its JSON."""
    return p.get(key) if isinstance(p, Mapping) else getattr(p, key, None)


def _day(value: object) -> date | None:
    if value is None or value == "":
        return None
    if isinstance(value, date):
        return value
    try:
        return date.fromisoformat(str(value)[:10])
    except ValueError:
        return None


def _max_age(max_age_days: int | None) -> int:
    if max_age_days is not None:
        return max_age_days
    from service.settings import get_settings  # read when asked, never at import

    return get_settings().price_max_age_days


def price_content_date(p: object) -> date | None:
    """The day a price's freshness counts from: its content's age, else the source's own date, else when an
    undated page was read (PriceRow.dated, for any form of the price)."""
    return _day(_field(p, "content_as_of")) or _day(_field(p, "as_of")) or _day(_field(p, "captured"))


def price_is_old(p: object, max_age_days: int | None = None, today: date | None = None) -> bool:
    """Older than `price_max_age_days` by its content's age (a 2021 list page read in 2026 is old)."""
    when = price_content_date(p)
    return when is not None and ((today or date.today()) - when).days > _max_age(max_age_days)


_AGE_LEAD = {"zh": {"official": "刊例价来自约 {y} 年的价格页", "estimate": "估算依据约 {y} 年的价格页",
                    "other": "来自约 {y} 年的价格页"},
             "en": {"official": "list price from a ~{y} price page", "estimate": "estimate from a ~{y} price page",
                    "other": "from a ~{y} price page"}}
_MAY_HAVE_CHANGED = {"zh": "可能已调整，请以官网价格计算器为准",
                     "en": "it may have changed, check the cloud's official price calculator"}


def price_when(p: object, lang: str, *, max_age_days: int | None = None, today: date | None = None) -> str:
    """A catalog price's date as every surface shows it (CLI, API, page, Slack, MCP, documents): its content's age
    with the evidence's precision, when it was read, and, older than `price_max_age_days`, that it may have changed.

        "刊例价来自约 2021 年的价格页，可能已调整，请以官网价格计算器为准 · 抓取于 2026-12-01"
        "2026-09-15"  (a dated capture, recent)
    """
    zh = lang == "zh"
    lang = "zh" if zh else "en"
    old = price_is_old(p, max_age_days, today)
    content = _day(_field(p, "content_as_of"))
    basis = _field(p, "content_basis")
    captured = _day(_field(p, "captured"))
    if content is not None and basis in ("commit", "newest_family"):
        conf = str(_field(p, "confidence") or "")
        lead = _AGE_LEAD[lang].get(conf if conf in ("official", "estimate") else "other", "").format(y=content.year)
        if not old:
            lead = f"约 {content.year} 年的价格页" if zh else f"~{content.year} price page"
        text = lead + (("，" if zh else "; ") + _MAY_HAVE_CHANGED[lang] if old else "")
        return text + (f" · 抓取于 {captured}" if zh else f" · captured {captured}") if captured else text
    as_of = _day(_field(p, "as_of"))
    when = content or as_of
    text = str(when) if when is not None else price_date(None, str(captured) if captured else None, lang)
    return text + (("，" if zh else "; ") + _MAY_HAVE_CHANGED[lang] if old else "")


_UNPUBLISHED = {"zh": "未公开", "en": "not published"}


def unpublished(lang: str) -> str:
    """A figure no source publishes (a family known only from sightings): "未公开" / "not published"."""
    return _UNPUBLISHED["zh" if lang == "zh" else "en"]


def host_text(vcpus: int | None, memory_gib: float | None, lang: str) -> str:
    """An instance's host as a reader reads it: "96 vCPU / 384 GiB", or what is not published."""
    cpu = f"{vcpus} vCPU" if vcpus is not None else f"vCPU {unpublished(lang)}"
    ram = f"{memory_gib:g} GiB" if memory_gib is not None else (f"内存{unpublished(lang)}" if lang == "zh"
                                                                  else f"RAM {unpublished(lang)}")
    return f"{cpu} / {ram}"


def newer_price_text(p: object, lang: str) -> str:
    """A newer dated price of the same instance and billing, shown beside the one used ("" when none):
    "；较新：2026-09-15 第三方采集 ¥26.97/小时（官网优惠价）"."""
    n = _field(p, "newer")
    if not n:
        return ""
    zh = lang == "zh"
    cny, unit = _field(n, "price_cny"), str(_field(n, "unit") or "hour")
    when = _field(n, "as_of") or _field(n, "content_as_of") or _field(n, "captured") or "?"
    kind = _SOURCE_KIND["zh" if zh else "en"].get(str(_field(n, "confidence")), str(_field(n, "confidence")))
    promo = _field(n, "promo")
    if zh:
        return f"；较新：{when} {kind} ¥{cny:,.2f}/{unit_label(unit, 'zh')}" + ("（官网优惠价）" if promo else "")
    return f"; newer: ¥{cny:,.2f}/{unit_label(unit, 'en')} in a {kind} of {when}" + (" (promotion)" if promo else "")


def public_links(source: str) -> list[str]:
    """The URLs or web addresses in a source text, each once, as https links."""
    out: list[str] = []
    text = strip_internal(source)
    for repo in _GITHUB.findall(text):
        out.append(f"https://github.com/{repo}")
    for found in _URL.findall(_GITHUB.sub("", text)):
        link = found if found.lower().startswith("http") else f"https://{found}"
        if link not in out:
            out.append(link.rstrip(".'"))
    return out


@lru_cache(maxsize=2048)
def public_source(source: str, confidence: str, lang: str) -> str:
    """What a user reads as a price's source: its kind in their language and the public addresses it names."""
    kind = _SOURCE_KIND["zh" if lang == "zh" else "en"].get(confidence, confidence_label(confidence, lang))
    links = public_links(source)
    return f"{kind}（{'；'.join(links)}）" if lang == "zh" and links else \
        f"{kind} ({'; '.join(links)})" if links else kind


_MFU_ZH = (
    ("Llama 2 model card on A100-80GB implies 0.39-0.46 MFU; Megatron-LM 41.5 % at 22B",
     "Llama 2 模型卡（A100-80GB）折算 MFU 0.39-0.46；Megatron-LM 在 22B 规模实测 41.5%"),
    ("Llama 3/3.1 model cards on H100: ~0.20 MFU at 8B, ~0.31 at 70B, ~0.38 at 405B",
     "Llama 3/3.1 模型卡（H100）：8B 约 0.20、70B 约 0.31、405B 约 0.38 MFU"),
    ("estimate: V100 has no BF16 or FlashAttention-2; no published fine-tune MFU in our references",
     "估算：V100 不支持 BF16 和 FlashAttention-2，没有公开的微调 MFU 实测"),
    ("estimate: T4 is a 70 W inference card; sustained training rates run far below peak",
     "估算：T4 是 70 W 推理卡，持续训练速率远低于峰值"),
    ("estimate against the P40's FP32 rate (no tensor cores)", "估算：按 P40 的 FP32 算力（无 Tensor Core）"),
    ("estimate: no published Ada training MFU in our references; PCIe only, no NVLink",
     "估算：没有公开的 Ada 训练 MFU 实测；仅 PCIe，无 NVLink"),
    ("estimate: B200 software still maturing; no published MFU in our references",
     "估算：B200 软件栈仍在完善，没有公开的 MFU 实测"),
    ("estimate against the K80's FP32 rate (no tensor cores, no FP16 math)",
     "估算：按 K80 的 FP32 算力（无 Tensor Core，无 FP16 加速）"),
    ("estimate: no published Ascend training MFU in our references (CANN / torch_npu stack)",
     "估算：没有公开的昇腾训练 MFU 实测（CANN / torch_npu 软件栈）"),
    ("estimate: no published MI300X training MFU in our references (ROCm stack)",
     "估算：没有公开的 MI300X 训练 MFU 实测（ROCm 软件栈）"),
    ("H20: compute-light Hopper with high bandwidth per FLOP; assumed like A100 (estimate)",
     "估算：H20 算力偏低、单位算力带宽高，按 A100 水平假设"),
    ("estimate for convolutional / diffusion training", "估算：卷积 / 扩散模型训练"),
    ("node model:", "节点吞吐模型：按大矩阵乘的硬件利用率（按公开实测校准）、每个 micro-batch 的 token 数和通信效率估算"),
    ("capped at the published cluster-scale MFU", "不超过公开的大规模集群 MFU 实测值"),
)
_FACTOR = re.compile(r";\s*x([\d.]+) for (\w+) \(smaller GEMMs(, dequantisation 1\.75x slower)?\)")
_METHOD_ZH = {"lora": "LoRA", "qlora": "QLoRA", "freeze": "冻结微调"}


def mfu_basis(source: str, lang: str) -> str:
    """The MFU prior's basis for a reader: internal references removed; in Chinese when the reader is Chinese."""
    text = strip_internal(source)
    if lang != "zh":
        return text
    factor = _FACTOR.search(text)
    base = _FACTOR.sub("", text).strip()
    zh = next((z for en, z in _MFU_ZH if base.startswith(en)), None)
    if zh is None:
        zh = "估算（按公开的训练实测数据）" if base.startswith("estimate") else "按公开的训练实测数据"
    if factor:
        method = _METHOD_ZH.get(factor.group(2), factor.group(2))
        why = "矩阵乘更小" + ("，反量化慢 1.75 倍" if factor.group(3) else "")
        zh += f"；{method} 乘以 {factor.group(1)}（{why}）"
    return zh


_BARE_URL = re.compile(r"(?<![<(\[])https?://[^\s<>()\[\]（）【】，。；、]+")


def autolink(markdown: str) -> str:
    """Bare URLs as Markdown autolinks (<https://...>), so a renderer never runs a link into the Chinese text that
    follows it ("（https://x.com），日期" would otherwise link "x.com），日期")."""
    return _BARE_URL.sub(lambda m: f"<{m.group(0).rstrip('.,;:')}>" + m.group(0)[len(m.group(0).rstrip('.,;:')):],
                         markdown)
