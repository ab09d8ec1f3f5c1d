"""Pure queries over catalog tables passed in: name resolution with 'did you mean', prices, filters."""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from service.catalog.names import lookup as lookup  # re-exported: the name keys the catalog is read by
from service.catalog.names import normalize as normalize
from service.catalog.names import variants as variants
from service.catalog.schema import GpuSpec, InstanceRow, ModelSpec, PriceRow
from service.errors import UnknownGpuError, UnknownModelError

_T = TypeVar("_T")
# Indexes over catalog tables, built once per table. Only tuples are cached (the Catalog holds tuples of frozen
# rows): keyed by the tuple's identity, holding the tuple so that its id cannot be reused while cached.
_INDEXES: dict[tuple[str, int], tuple[object, Any]] = {}
_INDEXES_MAX = 64


def _indexed(kind: str, table: Iterable[Any], build: Callable[[Iterable[Any]], _T]) -> _T:
    if not isinstance(table, tuple):
        return build(table)
    key = (kind, id(table))
    hit = _INDEXES.get(key)
    if hit is not None and hit[0] is table:
        result: _T = hit[1]
        return result
    built = build(table)
    if len(_INDEXES) >= _INDEXES_MAX:
        _INDEXES.clear()  # rare; a single call, safe next to readers in other threads
    _INDEXES[key] = (table, built)
    return built


def _suggest(name: str, candidates: dict[str, str], n: int = 3) -> list[str]:
    key = normalize(name)
    close = difflib.get_close_matches(key, list(candidates), n=n * 3, cutoff=0.5)
    seen: list[str] = []
    for c in close:
        display = candidates[c]
        if display not in seen:
            seen.append(display)
    # Prefix matches help short inputs ('qwen' -> Qwen2-7B ...).
    if not seen and key:
        seen = sorted({v for k, v in candidates.items() if k.startswith(key)})
    return seen[:n]


def gpu_index(gpus: Iterable[GpuSpec]) -> dict[str, tuple[GpuSpec, str]]:
    """normalised name -> (gpu, note). Ambiguous names map to the form factor the clouds sell."""
    index: dict[str, tuple[GpuSpec, str]] = {}
    for g in gpus:
        for name in (g.id, g.name, *g.aliases):
            index.setdefault(normalize(name), (g, ""))
    for g in gpus:
        for name in g.default_for:
            note = f"'{name}' is ambiguous; took {g.name} (the form Chinese clouds sell, else the most common)."
            index[normalize(name)] = (g, note)
    return index


def resolve_gpu(name: str, gpus: Sequence[GpuSpec]) -> tuple[GpuSpec, str]:
    index = _indexed("gpu", gpus, gpu_index)
    hit = index.get(normalize(name))
    if hit is None:
        raise UnknownGpuError(name, _suggest(name, {k: v[0].id for k, v in index.items()}))
    return hit


def model_index(models: Iterable[ModelSpec]) -> dict[str, ModelSpec]:
    """normalised name -> row; a Hugging Face id alias ('Qwen/Qwen3-8B') is indexed without its organisation too."""
    index: dict[str, ModelSpec] = {}
    for m in models:
        for name in (m.id, m.name, *m.aliases):
            index.setdefault(normalize(name), m)
    for m in models:
        for name in m.aliases:
            if "/" in name:
                index.setdefault(normalize(name.rsplit("/", 1)[-1]), m)
    return index


@dataclass(frozen=True)
class ModelMatch:
    """A catalog row and what the name said beyond it: the weight dtype of a quantised release ('-AWQ' -> int4,
    '-FP8' -> fp8), None when the name names the 16-bit release."""

    spec: ModelSpec
    weights: str | None = None
    suffix: str = ""  # the variant words dropped to reach the row ('instruct', 'awq'), normalised


def match_model(name: str, models: Sequence[ModelSpec]) -> ModelMatch:
    """The catalog row a name means, as people type it: a Hugging Face id with its organisation, a chat or
    quantised release (falls back to the base row and says the weight dtype), Chinese family names."""
    index = _indexed("model", models, model_index)
    # A Hugging Face repo id may carry an organisation the aliases do not list ('meta-llama/Llama-2-7b-chat-hf').
    for candidate in dict.fromkeys((name, name.rsplit("/", 1)[-1])):
        found = lookup(normalize(candidate), index)
        if found is not None:
            return ModelMatch(*found)
    from service.catalog.unsized import UnsizedModelError, find_unsized

    unsized = find_unsized(name)  # known but not sized (DeepSeek-V4, Gemma-4): say so, never another model's size
    if unsized is not None:
        raise UnsizedModelError(name, unsized)
    raise UnknownModelError(name, _suggest(name, {k: v.name for k, v in index.items()}))


def weights_from_name(name: str) -> str | None:
    """The weight dtype a release's name states ('Qwen2.5-7B-Instruct-AWQ' -> int4, '-FP8' -> fp8), else None."""
    weights = None
    for _, w, _ in variants(normalize(name.rsplit("/", 1)[-1])):
        weights = w or weights
    return weights


def resolve_model(name: str, models: Sequence[ModelSpec]) -> ModelSpec:
    """The catalog row a name means (see `match_model`, which also says a quantised release's dtype)."""
    return match_model(name, models).spec


_PARAMS = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([bm])\s*$", re.IGNORECASE)


def parse_param_count(text: str) -> float | None:
    """'7B' -> 7.0, '350M' -> 0.35 (billions); None when the text is not a bare size."""
    m = _PARAMS.match(text)
    if not m:
        return None
    value = float(m.group(1))
    return value if m.group(2).lower() == "b" else value / 1000


def prices_for(instance_type: str, prices: Iterable[PriceRow]) -> list[PriceRow]:
    return [p for p in prices if p.instance_type == instance_type]


_CONF_RANK = {"user": -1, "official": 0, "third_party": 1, "estimate": 2}


def _best_prices(prices: Iterable[PriceRow]) -> dict[tuple[str, str], PriceRow]:
    best: dict[tuple[str, str], PriceRow] = {}
    for p in sorted(prices, key=lambda p: (p.stale, p.region != "", _CONF_RANK[p.confidence], -p.dated.toordinal())):
        best.setdefault((p.instance_type, p.billing), p)
    return best


def best_price(instance_type: str, billing: str, prices: Iterable[PriceRow]) -> PriceRow | None:
    """The most trustworthy, then newest, non-stale price for one billing mode (default region first)."""
    return _indexed("best_price", prices, _best_prices).get((instance_type, billing))


def newer_price(used: PriceRow, prices: Iterable[PriceRow]) -> PriceRow | None:
    """A newer dated price of the same instance, billing and region than the one `used` (a third party's 2026
    capture, a promotion): shown beside it, never instead of it. None when `used` is the newest, or for estimates."""
    newer = [p for p in prices_for(used.instance_type, prices)
             if p is not used and p.billing == used.billing and p.region == used.region and not p.stale
             and not p.on_request and p.confidence in ("official", "third_party") and p.dated > used.dated]
    return max(newer, key=lambda p: p.dated) if newer else None


def instances_for(
    instances: Iterable[InstanceRow],
    clouds: Iterable[str] = (),
    gpu_ids: Iterable[str] = (),
) -> list[InstanceRow]:
    cloud_set, gpu_set = set(clouds), set(gpu_ids)
    return [
        r
        for r in instances
        if (not cloud_set or r.cloud in cloud_set) and (not gpu_set or r.gpu in gpu_set)
    ]


def find_instance(name: str, instances: Sequence[InstanceRow]) -> InstanceRow | None:
    key = normalize(name)
    for r in instances:
        if normalize(r.instance_type) == key:
            return r
    return None


def instance_suggestions(name: str, instances: Sequence[InstanceRow]) -> list[str]:
    return _suggest(name, {normalize(r.instance_type): r.instance_type for r in instances})


_VARIANT = re.compile(r"-(?:\d+G|SXM\d?|PCIE|NVL)$")


def gpu_family(gpu_id: str) -> str:
    """'A100-80G-SXM' -> 'A100', 'V100-32G-SXM2' -> 'V100', 'RTX-4090' -> 'RTX-4090': the card without its memory
    and form factor."""
    while (stripped := _VARIANT.sub("", gpu_id)) != gpu_id:
        gpu_id = stripped
    return gpu_id


def gpu_variant(gpu_id: str, memory_gb: float, aliases: Mapping[str, str]) -> str:
    """The variant of a GPU with the memory the user stated ('A100' + '80G' -> A100-80G-SXM, '4090' + '48G' ->
    the 48 GB card); the GPU itself when no variant has that memory."""
    key = normalize(f"{gpu_family(gpu_id)} {memory_gb:g}G")
    return aliases.get(key) or aliases.get(key.removeprefix("rtx")) or gpu_id
