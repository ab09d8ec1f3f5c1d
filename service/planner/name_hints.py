"""A model outside models.yaml sized from its name: the size it states ('gemma-4-9b' -> 9B, 'xxx-1.5b') and a
family hint (bge/bert/roberta/e5 -> encoder; '-VL'/'vision' -> a decoder whose vision tower is not sized;
sd/stable diffusion/sdxl/flux -> diffusion). Every such sizing is an assumption the answer states."""

from __future__ import annotations

from collections.abc import Callable

from service.catalog.name_sizes import NameGuess, guess_from_name
from service.catalog.schema import ModelSpec

__all__ = ["NameGuess", "closest", "guess_from_name", "model_from_name", "notes_for"]

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
        like = spec.source.removeprefix("generic: dimensions of ")
        moe = f", an MoE of ~{guess.active_b:g}B active" if guess.active_b and spec.moe is not None else ""
        moe_zh = f"，约 {guess.active_b:g}B 激活参数的 MoE" if moe else ""
        en = (f"'{name}' is not in the catalog: estimated from the size in its name as a generic {size}decoder "
              f"(the layout of {like}{moe}); the figures are estimates, not that model's own.")
        zh = (f"目录中没有“{name}”：按名称中的规模估算为通用 {size}解码器（参照 {like} 的结构{moe_zh}），"
              "以下数字为估算，并非该模型的实际配置。")
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
