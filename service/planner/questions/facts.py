"""Catalog facts: the knowledge questions whose answer is a row of the catalog (who sells which GPU, a GPU's
memory or FP8/BF16 support, RDMA, the billing rule, regions, the price). The answer comes from the tables, never
from a passage, so it can open the reply ("没有。京东云目前的 GPU 实例是 …").

The artifact carries the answer (yes / no / a value), the rows behind it and their sources; the renderer writes it.
"""

from __future__ import annotations

from typing import Any, Literal

from service.catalog.loader import Catalog
from service.catalog.queries import best_price, gpu_family, resolve_gpu
from service.catalog.schema import GpuSpec, InstanceRow
from service.errors import AdvisorError
from service.lexicon.data import lexicon

Artifact = dict[str, Any]
Fact = Literal["sells", "supports_fp8", "supports_bf16", "supports_flash_attn", "nvlink", "memory", "bandwidth",
               "tflops", "cuda", "rdma", "billing", "regions", "price", "list"]
FACTS: tuple[str, ...] = ("sells", "supports_fp8", "supports_bf16", "supports_flash_attn", "nvlink", "memory",
                          "bandwidth", "tflops", "cuda", "rdma", "billing", "regions", "price", "list")
CLOUDS = ("tencent", "jdcloud")
family = gpu_family


def _live(cat: Catalog) -> list[InstanceRow]:
    return [r for r in cat.instances if not r.stale and r.sale_status not in ("sold_out", "legacy")]


def _inst(r: InstanceRow) -> Artifact:
    return {"cloud": r.cloud, "instance_type": r.instance_type, "gpu": r.gpu, "gpu_count": r.gpu_count,
            "gpu_memory_gib": r.gpu_memory_gib, "vcpus": r.vcpus, "memory_gib": r.memory_gib, "rdma": r.rdma,
            "network_gbps": r.network_gbps, "regions": r.regions, "sale_status": r.sale_status, "source": r.source}


def _gpus_of(cat: Catalog, rows: list[InstanceRow]) -> list[str]:
    return sorted({family(r.gpu) for r in rows})


def _matches(r: InstanceRow, g: GpuSpec, exact: bool) -> bool:
    return r.gpu == g.id if exact else family(r.gpu) == family(g.id)


def _gpu(cat: Catalog, name: str) -> GpuSpec | None:
    try:
        return resolve_gpu(name, cat.gpus)[0]
    except AdvisorError:
        return None


def _sells(cat: Catalog, g: GpuSpec, exact: bool, clouds: list[str]) -> Artifact:
    rows = [r for r in _live(cat) if _matches(r, g, exact)]
    asked = clouds or list(CLOUDS)
    on = [r for r in rows if r.cloud in asked]
    elsewhere = sorted({r.cloud for r in rows if r.cloud not in asked})
    per_cloud = {c: _gpus_of(cat, [r for r in _live(cat) if r.cloud == c]) for c in asked}
    by_cloud = {c: any(r.cloud == c for r in on) for c in asked}
    # several clouds named and they differ ('京东云有没有卖A800 还是只能去腾讯云'): the first named is the one asked about
    answer = by_cloud[asked[0]] if len(clouds) > 1 and len(set(by_cloud.values())) > 1 else bool(on)
    return {"answer": "yes" if answer else "no", "rows": [_inst(r) for r in on][:12], "elsewhere": elsewhere,
            "cloud_gpus": per_cloud, "by_cloud": by_cloud}


def _support(g: GpuSpec, fact: str) -> Artifact:
    # NVLink is NVIDIA's: an Ascend (HCCS) or Instinct (Infinity Fabric) link answers "no" and names its own link.
    value = {"supports_fp8": g.supports_fp8, "supports_bf16": g.supports_bf16,
             "supports_flash_attn": g.supports_flash_attn2,
             "nvlink": g.nvlink_gb_s > 0 and g.vendor == "nvidia"}[fact]
    out: Artifact = {"answer": "yes" if value else "no", "value": g.fp8_tflops if fact == "supports_fp8" else
                     (g.nvlink_gb_s if fact == "nvlink" else None)}
    if fact == "nvlink":
        out["link"] = g.link_name
    return out


def _rented_fp8(cat: Catalog) -> list[str]:
    """The FP8 GPUs the clouds here rent: what a 'no' can point to."""
    fp8 = {g.id for g in cat.gpus if g.supports_fp8}
    return sorted({family(r.gpu) for r in _live(cat) if r.gpu in fp8})


def _spec(g: GpuSpec, fact: str) -> Artifact:
    if fact == "cuda" and g.min_cuda is None:  # not an NVIDIA GPU: no CUDA version applies
        return {"answer": "n/a", "value": None, "software_stack": g.software_stack}
    value: Any = {"memory": g.memory_gib, "bandwidth": g.mem_bw_gb_s, "tflops": g.dense_16bit_tflops,
                  "cuda": g.min_cuda}[fact]
    return {"answer": str(value), "value": value}


def _rdma(cat: Catalog, g: GpuSpec | None, clouds: list[str]) -> Artifact:
    rows = [r for r in _live(cat) if r.rdma and (not clouds or r.cloud in clouds)
            and (g is None or family(r.gpu) == family(g.id))]
    return {"answer": "yes" if rows else "no", "rows": [_inst(r) for r in rows][:12]}


def _billing(cat: Catalog, clouds: list[str]) -> Artifact:
    rules = [{"cloud": b.cloud, "family": b.family, "low": b.monthly_per_hourly_low, "high": b.monthly_per_hourly_high,
              "note": b.note, "note_zh": b.note_zh, "source": b.source, "confidence": b.confidence}
             for b in cat.billing_rules if not clouds or b.cloud in clouds]
    spot = sorted({p.instance_type for p in cat.prices if p.billing == "spot"})
    return {"answer": None, "rules": rules, "spot_instances": spot[:12]}


def _price(cat: Catalog, g: GpuSpec | None, clouds: list[str]) -> Artifact:
    rows, on_request = [], []
    for r in _live(cat):
        if (clouds and r.cloud not in clouds) or (g is not None and family(r.gpu) != family(g.id)):
            continue
        p = best_price(r.instance_type, "on_demand", cat.prices)
        if p is None or p.on_request:  # no public price: sold through sales (价格需询价)
            on_request.append(_inst(r))
        else:
            per_gpu = p.price_cny / r.gpu_count if p.unit == "hour" else None
            rows.append({**_inst(r), "price_cny": p.price_cny, "unit": p.unit, "per_gpu_hour_cny": per_gpu,
                         "confidence": p.confidence, "as_of": p.as_of.isoformat() if p.as_of else None,
                         "captured": p.captured.isoformat() if p.captured else None, "price_source": p.source,
                         "content_as_of": p.content_as_of.isoformat() if p.content_as_of else None,
                         "content_basis": p.content_basis})
    rows.sort(key=lambda x: (x["per_gpu_hour_cny"] or 1e9, x["instance_type"]))
    answer = "yes" if rows else ("on_request" if on_request else "no")
    return {"answer": answer, "rows": rows[:8], "on_request": on_request[:8]}


def _regions(rows: list[InstanceRow], place: str | None) -> Artifact:
    """The regions of `rows`, by family (one line per family: its sizes share them), and whether `place` (a
    lexicon region code: 'guangzhou') is among them."""
    by_family: dict[str, Artifact] = {}
    for r in rows:
        if r.regions:
            by_family.setdefault(r.family, {"cloud": r.cloud, "family": r.family, "regions": r.regions,
                                            "source": r.source})
    unlisted = sorted({r.family for r in rows if not r.regions} - set(by_family))
    out: Artifact = {"answer": None, "rows": list(by_family.values())[:8], "place": place, "unlisted": unlisted[:8]}
    if place is not None and by_family:
        names = [n.lower() for n in lexicon().region_rows(place)]
        hits = sorted({reg.strip() for r in rows for reg in (r.regions or "").split(";")
                       if any(reg.strip().lower().startswith(n) for n in names)})
        out.update({"answer": "yes" if hits else "no", "place_regions": hits})
    return out


def catalog_fact(cat: Catalog, fact: Fact, gpu: str | None = None, clouds: list[str] | None = None,
                 exact: bool = False, family_name: str | None = None, place: str | None = None) -> Artifact | None:
    """The fact asked about a GPU and/or clouds; None when the catalog cannot answer it (an unknown GPU for a
    GPU fact): the caller answers from the guide instead. `exact`: the user named the variant ('A100 80G')."""
    clouds = [c for c in (clouds or []) if c in CLOUDS]
    g = _gpu(cat, gpu) if gpu else None
    base: Artifact = {"kind": "fact", "fact": fact, "gpu": g.id if g else None,
                      "gpu_family": family(g.id) if g else None, "clouds": clouds,
                      "gpu_source": g.source if g else None, "gpu_confidence": g.confidence if g else None,
                      "gpu_vendor": g.vendor if g else None}
    if fact in ("sells", "supports_fp8", "supports_bf16", "supports_flash_attn", "nvlink", "memory", "bandwidth",
                "tflops", "cuda") and g is None:
        if fact == "sells" and gpu is None and clouds:
            fact = "list"
        else:
            return None
    if fact == "sells":
        assert g is not None
        return {**base, **_sells(cat, g, exact, clouds)}
    if fact == "list":
        asked = clouds or list(CLOUDS)
        return {**base, "fact": "list", "answer": None,
                "cloud_gpus": {c: _gpus_of(cat, [r for r in _live(cat) if r.cloud == c]) for c in asked}}
    if fact in ("supports_fp8", "supports_bf16", "supports_flash_attn", "nvlink"):
        assert g is not None
        return {**base, **_support(g, fact),
                "also": _rented_fp8(cat) if fact == "supports_fp8" else []}
    if fact in ("memory", "bandwidth", "tflops", "cuda"):
        assert g is not None
        return {**base, **_spec(g, fact)}
    if fact == "rdma":
        return {**base, **_rdma(cat, g, clouds)}
    if fact == "billing":
        return {**base, **_billing(cat, clouds)}
    if fact == "price":
        return {**base, **_price(cat, g, clouds)}
    regions = [r for r in _live(cat) if (not clouds or r.cloud in clouds) and (g is None or family(r.gpu) == family(g.id))]
    named = [r for r in regions if family_name and r.family.lower() == family_name.lower()]
    return {**base, "instance_family": named[0].family if named else None, **_regions(named or regions, place)}
