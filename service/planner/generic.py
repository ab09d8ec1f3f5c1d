"""Generic architectures for a size alone: a bare '7B', or a model the catalog does not hold whose name states its
size ('xxx-9b', 'Foo-235B-A22B'). The layout is the closest plain catalog decoder's, scaled until its counted
parameters are the stated size (a size past every catalog model is still that size), and every answer says it
is an estimate."""

from __future__ import annotations

import math
from collections.abc import Sequence

from service.catalog.schema import ModelSpec
from service.errors import InvalidInputError
from service.planner.name_hints import guess_from_name, notes_for
from service.sizing.params import count_params, head_dim

Assumption = tuple[str, str]  # (English, Chinese)
SCALE_TOLERANCE = 0.10  # a base within 10 % of the size keeps its dimensions as they are
ESTIMATED_SOURCE = "estimated from the name"

# One spec per (size, active size, catalog): the sizing caches, keyed by the spec's identity, stay warm. Holds
# the models tuple so that its id stays unique while cached.
_GENERIC: dict[tuple[float, float | None, int], tuple[tuple[ModelSpec, ...], ModelSpec]] = {}


MAINSTREAM = frozenset({"llama", "llama2", "llama3", "llama3.1", "qwen1.5", "qwen2", "qwen2.5", "qwen3", "mistral", "glm4",
                        "internlm2", "yi", "baichuan2", "deepseek"})


def plain_text_decoder(m: ModelSpec) -> bool:
    """A catalog decoder a generic size can borrow the layout of: no vision tower, no MLA, no linear-attention
    or sliding-window layers."""
    return (m.kind == "decoder" and m.mla is None and m.linear_attn is None and m.sliding_window is None
            and m.vision_params_b is None and "_vl" not in m.family and m.family != "internvl2")


def generic_decoder(params_b: float, models: tuple[ModelSpec, ...], active_b: float | None = None) -> ModelSpec:
    """A decoder of `params_b` billion parameters (an MoE of `active_b` active when given)."""
    key = (params_b, active_b, id(models))
    hit = _GENERIC.get(key)
    if hit is not None and hit[0] is models:
        return hit[1]
    spec = _generic(params_b, active_b, models)
    if isinstance(models, tuple):
        if len(_GENERIC) >= 64:
            _GENERIC.clear()  # rare; a single call, safe next to readers in other threads
        _GENERIC[key] = (models, spec)
    return spec


def _generic(params_b: float, active_b: float | None, models: Sequence[ModelSpec]) -> ModelSpec:
    pool = [m for m in models if plain_text_decoder(m) and (m.moe is not None) == (active_b is not None)]
    if not pool and active_b is not None:  # no MoE to borrow from: a dense decoder of the total size
        return _generic(params_b, None, models)
    if not pool:
        raise InvalidInputError("The model catalog has no decoder to size a generic model with.", "Check models.yaml.")

    def distance(m: ModelSpec) -> tuple[int, float, bool, float]:
        ratio = abs(math.log(m.params_published_b / params_b))
        active = abs(math.log((m.active_params_b or 1.0) / active_b)) if active_b else 0.0
        # within 10 % of the size, the layout of a mainstream family (Llama, Qwen, Mistral) is the reference a
        # reader recognises: '7B (≈ Llama-2-7B)', never an odd one that happens to be 0.3B nearer
        return round(min(ratio, 1e6) / 0.1), active, m.family not in MAINSTREAM, ratio  # 5e-324 B: no overflow

    base = min(pool, key=distance)
    spec = scale_to(base, params_b * 1e9)
    scaled = spec is not base
    label = f"{base.id} scaled to {params_b:g}B" if scaled else base.id
    return spec.model_copy(update={
        "id": f"generic-{params_b:g}b",
        "name": f"{params_b:g}B (≈ {base.name})",  # read in either language; the assumption says the rest
        "aliases": [],
        "params_published_b": params_b,
        "active_params_b": count_params(spec).active / 1e9 if spec.moe is not None else None,
        "source": f"generic: dimensions of {label}",
        "template": "default",
    })


def scale_to(base: ModelSpec, target: float) -> ModelSpec:
    """`base` with its width and depth scaled until it counts `target` parameters (MoE: its depth only); `base`
    itself when it is already within SCALE_TOLERANCE."""
    total = count_params(base).total
    if abs(total / target - 1) <= SCALE_TOLERANCE:
        return base
    spec = base
    if base.moe is None:
        factor = (target / total) ** (1 / 3)
        spec = _widen(base, factor)
        # a small size: narrow on until the vocabulary's matrices leave room for the layers
        while _vocab_params(spec) > target / 2 and (spec.num_heads or 1) > 1:
            factor *= 0.8
            spec = _widen(base, factor)
    one = count_params(spec.model_copy(update={"num_layers": 1})).total
    two = count_params(spec.model_copy(update={"num_layers": 2})).total
    per_layer = two - one
    layers = max(1, round((target - (one - per_layer)) / per_layer))
    if spec.moe is not None:  # keep at least one layer with the experts
        layers = max(layers, spec.moe.first_k_dense + spec.moe.layer_step)
    return spec.model_copy(update={"num_layers": layers})


def _vocab_params(m: ModelSpec) -> float:
    c = count_params(m)
    return c.embedding + c.lm_head


def _widen(base: ModelSpec, factor: float) -> ModelSpec:
    """Width scaled by `factor`: heads of the base's head width (a multiple of 8 once wide), the base's GQA ratio,
    the MLP in proportion."""
    hd = head_dim(base)
    h, heads = base.hidden_size or hd, base.num_heads or 1
    kv = base.num_kv_heads or heads
    step = 8 if h * factor >= 8 * hd * 2 else 1
    new_heads = max(step, round(h * factor / hd / step) * step)
    group = max(1, heads // kv)
    new_kv = max(1, new_heads // group)
    while new_heads % new_kv:
        new_kv -= 1
    hidden = new_heads * hd
    inter = max(hd, round((base.intermediate_size or 4 * h) * hidden / h / 128) * 128)
    return base.model_copy(update={"hidden_size": hidden, "num_heads": new_heads, "num_kv_heads": new_kv,
                                   "head_dim": hd if base.head_dim else None, "intermediate_size": inter})


def estimate_from_name(name: str, models: tuple[ModelSpec, ...],
                       suggestions: Sequence[str] = ()) -> tuple[ModelSpec, Assumption] | None:
    """A model the catalog does not hold, sized by the size its name states ('xxx-9b'; 'Foo-235B-A22B' as an MoE
    of 22B active), named as written and labelled estimated; None when the name states no decoder size."""
    guess = guess_from_name(name)
    if guess is None or guess.kind != "decoder" or not guess.params_b:
        return None
    spec = generic_decoder(guess.params_b, models, guess.active_b)
    en, zh = notes_for(name, guess, spec)
    if suggestions:
        en += f" Did you mean: {', '.join(suggestions)}?"
        zh += f" 是否是指：{'、'.join(suggestions)}？"
    named = spec.model_copy(update={"id": name, "name": name, "aliases": [],
                                    "source": f"{ESTIMATED_SOURCE}: {spec.source}"})
    return named, (en, zh)


def is_estimated(m: ModelSpec) -> bool:
    """Sized by a stated size with a generic architecture, not from the model's own config."""
    return m.source.startswith((ESTIMATED_SOURCE, "generic:"))
