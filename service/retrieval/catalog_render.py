"""Rendering of catalog rows as bilingual Markdown: one document per instance family and language.

Chinese documents carry the words Chinese questions use (显卡, 显存, 按量计费, 包月, 价格, 腾讯云/京东云) so BM25
finds them; each price keeps its provenance (source, date, confidence, note) and the official quote link.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import yaml

from service.catalog.loader import Catalog
from service.catalog.schema import GpuSpec, InstanceRow, PriceRow
from service.labels import price_when, unpublished

QUOTE_LINKS = {
    "tencent": "https://buy.cloud.tencent.com/price/cvm/calculator",
    "jdcloud": "https://www.jdcloud.com/calculator/calHost",
}
CLOUD_NAMES = {"tencent": ("腾讯云", "Tencent Cloud"), "jdcloud": ("京东云", "JD Cloud")}
BILLING = {
    "on_demand": ("按量计费（按小时）", "on-demand (pay as you go)"),
    "monthly": ("包年包月（包月）", "monthly subscription"),
    "spot": ("竞价实例（抢占式）", "spot (preemptible)"),
}
UNIT = {"hour": ("元/小时", "CNY per hour"), "month": ("元/月", "CNY per month")}
CONFIDENCE = {
    "official": ("官网价", "official"),
    "third_party": ("第三方", "third party"),
    "estimate": ("估算", "estimate"),
    "user": ("用户提供", "user's own"),
}
SALE = {
    "main": ("主售", "main (featured)"),
    "on_sale": ("在售", "on sale"),
    "allowlist": ("白名单（需提工单申请）", "allowlist (ask presales)"),
    "invite_only": ("邀测", "invite-only test"),
    "limited": ("限量", "limited"),
    "sold_out": ("售罄", "sold out"),
    "legacy": ("旧款", "legacy"),
    "unknown": ("未知", "unknown"),
}
_BILLING_ORDER = {"on_demand": 0, "monthly": 1, "spot": 2}


def _num(x: float) -> str:
    return f"{x:g}" if x != int(x) else f"{int(x)}"


def _gpus(count: float) -> str:
    return {0.25: "1/4", 0.5: "1/2"}.get(count, _num(count))


def _file_stem(cloud: str, family: str) -> str:
    return f"{cloud}-{re.sub(r'[^a-z0-9.]+', '-', family.lower()).strip('-')}"


def _front_matter(doc_id: str, title: str, lang: str, cloud: str, rows: Sequence[InstanceRow]) -> str:
    zh, en = CLOUD_NAMES[cloud]
    sources = [{"title": f"{zh if lang == 'zh' else en} price calculator", "ref": QUOTE_LINKS[cloud]}]
    for src in dict.fromkeys(r.source.split(" ")[0] for r in rows):
        sources.append({"title": "instance specs", "ref": src})
    meta = {
        "id": doc_id,
        "title": title,
        "lang": lang,
        "topics": ["catalog", "instances", "prices"],
        "clouds": [cloud],
        "sources": sources,
        "ref": QUOTE_LINKS[cloud],
    }
    return "---\n" + yaml.safe_dump(meta, allow_unicode=True, sort_keys=False) + "---\n\n"


def _gpu_section(g: GpuSpec, lang: str) -> str:
    link = g.link_name
    nvlink_zh = f"有，{_num(g.nvlink_gb_s)} GB/s" if g.nvlink_gb_s else f"无（PCIe Gen{g.pcie_gen}）"
    nvlink_en = f"yes, {_num(g.nvlink_gb_s)} GB/s" if g.nvlink_gb_s else f"none (PCIe Gen{g.pcie_gen})"
    fp8_zh = f"支持，{_num(g.fp8_tflops)} TFLOPS" if g.fp8_tflops else "不支持"
    fp8_en = f"yes, {_num(g.fp8_tflops)} TFLOPS" if g.fp8_tflops else "no"
    if g.vendor == "nvidia":
        cuda_zh = f"算力版本 {g.compute_capability}，最低 CUDA {g.min_cuda}"
        cuda_en = f"compute capability {g.compute_capability}, minimum CUDA {g.min_cuda}"
    else:  # no CUDA at all: say what it runs instead
        cuda_zh = f"非 NVIDIA 加速卡，不使用 CUDA（软件栈 {g.software_stack}）"
        cuda_en = f"not an NVIDIA GPU, no CUDA (runs {g.software_stack})"
    if lang == "zh":
        lines = [
            f"## 显卡 GPU：{g.name}",
            "",
            f"- 显存：{_num(g.memory_gib)} GiB {g.memory_type}，显存带宽 {_num(g.mem_bw_gb_s)} GB/s",
            f"- BF16/FP16 稠密算力：{_num(g.dense_16bit_tflops)} TFLOPS；BF16：{'支持' if g.supports_bf16 else '不支持'}",
            f"- FP8：{fp8_zh}",
            f"- {link} 多卡互联：{nvlink_zh}",
            f"- 架构 {g.arch}，{cuda_zh}，"
            f"FlashAttention-2：{'支持' if g.supports_flash_attn2 else '不支持'}",
            f"- 来源：{g.source}（{g.as_of}，{g.confidence}）",
        ]
    else:
        lines = [
            f"## GPU: {g.name}",
            "",
            f"- GPU memory: {_num(g.memory_gib)} GiB {g.memory_type}, bandwidth {_num(g.mem_bw_gb_s)} GB/s",
            f"- Dense BF16/FP16 tensor: {_num(g.dense_16bit_tflops)} TFLOPS; BF16: {'yes' if g.supports_bf16 else 'no'}",
            f"- FP8: {fp8_en}",
            f"- {link}: {nvlink_en}",
            f"- Architecture {g.arch}, {cuda_en}, "
            f"FlashAttention-2: {'yes' if g.supports_flash_attn2 else 'no'}",
            f"- Source: {g.source} ({g.as_of}, {g.confidence})",
        ]
    return "\n".join(lines)


def _sizes_section(rows: Sequence[InstanceRow], lang: str) -> str:
    if lang == "zh":
        head = "## 实例规格（GPU 数、vCPU、内存、网络）\n\n| 实例规格 | GPU 卡数 | 单卡显存 GiB | vCPU | 内存 GiB | 内网带宽 Gbps | RDMA |"
    else:
        head = "## Sizes (GPUs, vCPU, RAM, network)\n\n| Instance type | GPUs | GPU memory GiB | vCPU | RAM GiB | Network Gbps | RDMA |"
    lines = [head, "|---|---|---|---|---|---|---|"]
    yes, no = ("是", "否") if lang == "zh" else ("yes", "no")
    for r in rows:
        net = _num(r.network_gbps) if r.network_gbps is not None else "—"
        stale = " (stale)" if r.stale else ""
        lines.append(
            f"| {r.instance_type}{stale} | {_gpus(r.gpu_count)} × {r.gpu} | {_num(r.gpu_memory_gib)} | "
            f"{r.vcpus if r.vcpus is not None else unpublished(lang)} "
            f"| {_num(r.memory_gib) if r.memory_gib is not None else unpublished(lang)} | {net} | {yes if r.rdma else no} |"
        )
    return "\n".join(lines)


def _availability(rows: Sequence[InstanceRow], lang: str) -> str:
    """Regions, sale status, CPU and the specs' sources, as bullets for the overview."""
    regions = list(dict.fromkeys(x.strip() for r in rows for x in r.regions.split(";") if x.strip()))
    statuses = list(dict.fromkeys(r.sale_status for r in rows))
    cpus = list(dict.fromkeys(r.cpu_model for r in rows if r.cpu_model))
    i = 0 if lang == "zh" else 1
    sale = "、".join(SALE[s][0] for s in statuses) if lang == "zh" else ", ".join(SALE[s][1] for s in statuses)
    region_text = "; ".join(regions) or ("来源未列出" if lang == "zh" else "not listed by the source")
    labels = (
        ("可用地域", "售卖状态", "CPU", "规格来源", "截至")
        if i == 0
        else ("Regions", "Sale status", "CPU", "Spec source", "as of")
    )
    lines = [f"- {labels[0]}: {region_text}", f"- {labels[1]}: {sale}"]
    if cpus:
        lines.append(f"- {labels[2]}: {'; '.join(cpus)}")
    for src, as_of in dict.fromkeys((r.source, r.as_of) for r in rows):
        lines.append(f"- {labels[3]}: {src} ({labels[4]} {as_of})")
    return "\n".join(lines)


def _price_cell(prices: Sequence[PriceRow], i: int) -> str:
    """"10.5 (estimate, 2026-09-24)"; several regions or rows joined by "; "."""
    cells = []
    for p in prices:
        where = f"{p.region}, " if p.region else ""
        stale = ", stale" if p.stale else ""
        sep = "，" if i == 0 else ", "
        when = price_when(p, "zh" if i == 0 else "en")
        detail = sep.join(x for x in (where.rstrip(", "), CONFIDENCE[p.confidence][i], when) if x) + stale
        value = _num(p.price_cny) if p.price_low_cny is None else f"{_num(p.price_low_cny)}-{_num(p.price_cny)}"
        if p.on_request:  # no public price: the figures are a market reference, never the price
            value = f"价格需询价，参考 {value}" if i == 0 else f"price on request, reference {value}"
        elif p.promo:
            value += "（优惠价）" if i == 0 else " (promotion)"
        cells.append(f"{value}（{detail}）" if i == 0 else f"{value} ({detail})")
    return "; ".join(cells) or "—"


def _prices_sections(cloud: str, rows: Sequence[InstanceRow], prices: Sequence[PriceRow], lang: str) -> str:
    """A table with one column per billing mode (cell: price, confidence, date), then each price's source."""
    order = {r.instance_type: n for n, r in enumerate(rows)}
    mine = sorted(
        (p for p in prices if p.instance_type in order),
        key=lambda p: (order[p.instance_type], _BILLING_ORDER[p.billing], p.region),
    )
    i = 0 if lang == "zh" else 1
    link = QUOTE_LINKS[cloud]
    modes = [b for b in BILLING if any(p.billing == b for p in mine)]
    unit = {b: UNIT["month" if b == "monthly" else "hour"][i] for b in BILLING}
    if i == 0:
        head = [
            "## 价格（按量计费、包年包月、竞价）",
            "",
            f"以下价格为规划参考，购买前请在{CLOUD_NAMES[cloud][0]}官方价格计算器核实报价：{link}",
            "",
            "| 实例规格 | " + " | ".join(f"{BILLING[b][0]} {unit[b]}" for b in modes) + " |",
        ]
    else:
        head = [
            "## Prices (on-demand, monthly, spot)",
            "",
            f"Planning figures; confirm the quote in the official {CLOUD_NAMES[cloud][1]} price calculator: {link}",
            "",
            "| Instance type | " + " | ".join(f"{BILLING[b][1]}, {unit[b]}" for b in modes) + " |",
        ]
    if not mine:
        none = "目录中暂无价格，请用官方价格计算器询价。" if i == 0 else "No price in the catalog; get a quote from the calculator."
        return "\n".join(head[:3] + ["", none])
    lines = head + ["|---" * (len(modes) + 1) + "|"]
    for r in rows:
        if any(p.instance_type == r.instance_type for p in mine):
            cells = [_price_cell([p for p in mine if p.instance_type == r.instance_type and p.billing == b], i) for b in modes]
            lines.append(f"| {r.instance_type} | " + " | ".join(cells) + " |")
    title = "## 价格来源与说明" if i == 0 else "## Price sources and notes"
    grouped: dict[str, list[str]] = {}  # one line per distinct source and note, naming every price it covers
    for p in mine:
        note = (p.note_zh or p.note) if i == 0 else p.note
        grouped.setdefault(f"{p.source}; {note}" if note else p.source, []).append(
            f"{p.instance_type} {p.billing}"  # the code, not the label: the table already says it in words
        )
    notes = [title, ""] + [f"- {', '.join(keys)}: {text}" for text, keys in grouped.items()]
    return "\n".join(lines) + "\n\n" + "\n".join(notes)


def render_family(cloud: str, family: str, rows: Sequence[InstanceRow], catalog: Catalog, lang: str) -> str:
    gpu_ids = list(dict.fromkeys(r.gpu for r in rows))
    gpus = [catalog.gpu(g) for g in gpu_ids]
    gpu_names = ", ".join(g.name for g in gpus)
    zh, en = CLOUD_NAMES[cloud]
    counts = list(dict.fromkeys(_gpus(r.gpu_count) for r in rows))
    if lang == "zh":
        title = f"{zh} {family} GPU 实例（{gpu_names}）"
        intro = (
            f"{zh}（{cloud}）GPU 云服务器实例族 {family}：每台 {'、'.join(counts)} 张 {gpu_names} 显卡，"
            f"共 {len(rows)} 种规格。以下规格、显存、地域与价格由知识库目录自动生成。"
        )
    else:
        title = f"{en} {family} GPU instances ({gpu_names})"
        intro = (
            f"{en} ({cloud}) GPU instance family {family}: {', '.join(counts)} × {gpu_names} per instance, "
            f"{len(rows)} sizes. Specs, regions and prices below are generated from the knowledge catalog."
        )
    overview = "## 概览：地域与售卖状态" if lang == "zh" else "## Overview: regions and sale status"
    parts = [f"# {title}", overview, intro + "\n\n" + _availability(rows, lang)]
    parts += [_gpu_section(g, lang) for g in gpus]
    parts += [_sizes_section(rows, lang), _prices_sections(cloud, rows, catalog.prices, lang)]
    doc_id = f"catalog-{_file_stem(cloud, family)}.{lang}"
    return _front_matter(doc_id, title, lang, cloud, rows) + "\n\n".join(parts) + "\n"


def family_documents(catalog: Catalog) -> dict[str, str]:
    """File name → Markdown, two languages per (cloud, family)."""
    families: dict[tuple[str, str], list[InstanceRow]] = {}
    for r in catalog.instances:
        families.setdefault((r.cloud, r.family), []).append(r)
    docs: dict[str, str] = {}
    for (cloud, family), rows in families.items():
        for lang in ("zh", "en"):
            docs[f"{_file_stem(cloud, family)}.{lang}.md"] = render_family(cloud, family, rows, catalog, lang)
    return docs
