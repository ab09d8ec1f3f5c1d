"""A model outside models.yaml sized from its name: the size it states ('gemma-4-9b' -> 9B, 'xxx-1.5b') and a
family hint (bge/bert/roberta/e5 -> encoder; '-VL'/'vision' -> a decoder whose vision tower is not sized;
sd/stable diffusion/sdxl/flux -> diffusion). Every such sizing is an assumption the answer states."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from service.catalog.schema import ModelSpec

_SIZE = re.compile(r"(?<![0-9.])(\d+(?:\.\d+)?)\s*([bm])(?![A-Za-z0-9])", re.IGNORECASE)  # 'llama70b' too
_ENCODER = re.compile(r"(?<![a-z])(?:bge|bert|roberta|deberta|e5|ernie|xlm|m3e|text2vec|gte)(?![a-z])", re.IGNORECASE)
_VISION = re.compile(r"(?<![a-z])(?:vl|vision|visual|llava|vlm|mllm)(?![a-z])", re.IGNORECASE)
_DIFFUSION = re.compile(r"(?<![a-z])(?:sd|sdxl|stable[\s_-]*diffusion|flux|diffusion|unet)(?![a-z])", re.IGNORECASE)


@dataclass(frozen=True)
class NameGuess:
    kind: str  # decoder | encoder | diffusion
    params_b: float | None
    vision: bool = False


def guess_from_name(name: str) -> NameGuess | None:
    """What the name says, or None when it says neither a size nor a family."""
    sizes = [float(m.group(1)) / (1 if m.group(2).lower() == "b" else 1000) for m in _SIZE.finditer(name)]
    size = sizes[-1] if sizes else None  # 'yi-1.5-9b': the last size is the parameter count
    if _DIFFUSION.search(name):
        return NameGuess("diffusion", size)
    if _ENCODER.search(name):
        return NameGuess("encoder", size)
    if size is None:
        return None
    return NameGuess("decoder", size, vision=bool(_VISION.search(name)))


def closest(models: tuple[ModelSpec, ...], kind: str, params_b: float | None) -> ModelSpec | None:
    """The catalog model of this kind nearest in size (the largest-known default when no size is given)."""
    pool = [m for m in models if m.kind == kind and m.moe is None and m.mla is None]
    if not pool:
        return None
    if params_b is None:
        return min(pool, key=lambda m: m.params_published_b)
    return min(pool, key=lambda m: abs(m.params_published_b - params_b))


def notes_for(name: str, guess: NameGuess, spec: ModelSpec) -> tuple[str, str]:
    """(English, Chinese) assumption for a model sized from its name."""
    size = f"{guess.params_b:g}B " if guess.params_b is not None else ""
    if guess.kind == "decoder":
        en = f"'{name}' is not in the catalog: sized from its name as a {size}decoder ({spec.name})."
        zh = f"目录中没有“{name}”：按名称估算为 {size}解码器模型（{spec.name}）。"
        if guess.vision:
            en += " Its vision tower and image tokens are not in the memory estimate."
            zh += "视觉编码器和图像 token 未计入显存估算。"
        return en, zh
    word = {"encoder": ("an encoder", "编码器模型"), "diffusion": ("a diffusion model", "扩散模型")}[guess.kind]
    return (f"'{name}' is not in the catalog: sized as {word[0]} like {spec.name} (an assumption from its name).",
            f"目录中没有“{name}”：按名称假设为{word[1]}，参照 {spec.name} 估算。")


def model_from_name(name: str, models: tuple[ModelSpec, ...], generic: Callable[[float, tuple[ModelSpec, ...]],
                    ModelSpec]) -> tuple[ModelSpec, tuple[str, str]] | None:
    """The spec to size an unknown model with and the assumption to state; None when the name says too little
    (then the caller asks for the size or the config.json). `generic` builds a decoder of a given size."""
    guess = guess_from_name(name)
    if guess is None:
        return None
    spec = generic(guess.params_b, models) if guess.kind == "decoder" and guess.params_b else \
        closest(models, guess.kind, guess.params_b)
    return None if spec is None else (spec, notes_for(name, guess, spec))
