"""A turn priced at the user's own price: '京东云的A800每卡每小时只要8元' costs this turn's plan at ¥8 per A800-hour
(service/catalog/user_prices.py lays it over the catalog) and the answer says so in its first note, or says that the
catalog sells no such GPU there and the costs are the catalog's."""

from __future__ import annotations

from dataclasses import replace

from service.catalog.user_prices import UserPrice, with_user_price
from service.questions.base import Context

_CLOUDS = {"tencent": ("Tencent Cloud", "腾讯云"), "jdcloud": ("JD Cloud", "京东云")}


def _where(price: UserPrice, lang: str) -> str:
    zh = lang == "zh"
    if price.cloud is None:
        return price.gpu
    cloud = _CLOUDS.get(price.cloud, (price.cloud, price.cloud))[1 if zh else 0]
    return f"{cloud} {price.gpu}" if zh else f"{price.gpu} on {cloud}"


def priced_context(ctx: Context, price: UserPrice, lang: str) -> tuple[Context, str]:
    """The turn's context with the user's price over its catalog, and the note that says what was priced."""
    overlaid = with_user_price(ctx.catalog, price)
    rate = f"¥{price.cny_per_gpu_hour:g}"
    where = _where(price, lang)
    if not overlaid.instances:
        if lang == "zh":
            return ctx, (f"你给的 {rate}/卡时 是 {where} 的价格，但目录里没有在售的 {where} 机型，"
                         "下面的费用按目录价计算。")
        return ctx, (f"Your price of {rate}/GPU-hour is for {where}, which the catalog does not sell; the costs below "
                     "use the catalog's prices.")
    types = ", ".join(sorted({r.instance_type for r in overlaid.instances}))
    note = (f"按你给的 {rate}/卡时 计算 {where} 的费用（{types}），不用目录价。" if lang == "zh" else
            f"Costed at your price of {rate}/GPU-hour for {where} ({types}), not the catalog's.")
    catalog = overlaid.catalog
    return replace(ctx, catalog_of=lambda: catalog), note
