"""Language-model tokens an image or a video becomes in a vision-language model: what a training sequence carries
beyond its text.

- Qwen2-VL / Qwen2.5-VL: one token per 28 x 28 pixels (14-pixel patches merged 2 x 2), so an image's tokens are
  its pixels / 784, capped by the processor's max_pixels (12,845,056 by default: 16,384 tokens); video frames are
  merged in pairs (temporal_patch_size 2). Qwen3-VL: 16-pixel patches merged 2 x 2, 1,024 pixels a token
  (Qwen/Qwen2.5-VL preprocessor_config.json, Qwen3-VL's; transformers image_processing_qwen2_vl.py smart_resize).
- InternVL: 256 tokens per 448 x 448 tile, max_dynamic_patch tiles (12 by default) plus a thumbnail.
- MiniCPM-V 2.6: 64 tokens per slice (query_num), max_slice_nums 9 plus the source image.
- LLaVA-1.5: 576 tokens an image (336 / 14 = 24 squared); LLaVA-NeXT up to 5 tiles of 576.
- Other catalog rows: their largest image's tokens (`vision_tokens_per_item`).
LLaMA-Factory's image_max_pixels default is 768 x 768 = 589,824 (its data_args), the budget assumed when a run of
a Qwen-VL model states none.
"""

from __future__ import annotations

from service.catalog.schema import ModelSpec

PIXELS_PER_TOKEN = {"qwen2_vl": 28 * 28, "qwen3_vl": 32 * 32}
TOKENS_PER_TILE = {"internvl2": 256, "internvl": 256, "minicpmv": 64, "llava": 576, "llava_next": 576}
DEFAULT_TILES = {"internvl2": 13, "internvl": 13, "minicpmv": 10, "llava": 1, "llava_next": 5}
FRAMES_PER_TEMPORAL_TOKEN = 2  # Qwen-VL merges two frames (temporal_patch_size)
LLAMAFACTORY_MAX_PIXELS = 768 * 768


def is_vision(m: ModelSpec) -> bool:
    return m.family in PIXELS_PER_TOKEN or m.family in TOKENS_PER_TILE or m.vision_tokens_per_item is not None


def image_tokens(m: ModelSpec, max_pixels: int | None, slices: int | None, frames: int | None) -> int | None:
    """Tokens one sample's image (or video) adds to the sequence; None for a model without vision or a budget
    that says nothing."""
    if not is_vision(m):
        return None
    per_pixels = PIXELS_PER_TOKEN.get(m.family)
    if per_pixels is not None:
        pixels = max_pixels or LLAMAFACTORY_MAX_PIXELS
        one = max(4, pixels // per_pixels)
        if frames:
            return one * max(1, frames // FRAMES_PER_TEMPORAL_TOKEN)
        return one
    tile = TOKENS_PER_TILE.get(m.family)
    if tile is not None:
        tiles = (slices + 1) if slices else DEFAULT_TILES.get(m.family, 1)
        return tile * tiles * max(1, frames or 1)
    return m.vision_tokens_per_item
