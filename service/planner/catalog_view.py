"""The catalog as people browse it: one query (filters and a sort) over the instance rows, each with its GPU's
specs, every price it has (source, date or capture, confidence), what each billing rule costs per GPU-hour and per
dense BF16 TFLOPS-hour, and the cloud's quote link. Below every surface: `catalog list/show`,
GET /v1/catalog/instances, MCP search_catalog and the web page's catalog view.

Pure: the catalog's tables in, typed rows out.

    rows = catalog_rows(cat, CatalogQuery(gpu="A100", min_cards=8, billing="on_demand", sort="price-per-tflops"))
    rows[0].price("on_demand").per_tflops_hour_cny
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, computed_field

from service.catalog.loader import Catalog
from service.catalog.queries import best_price, gpu_family, normalize, prices_for, resolve_gpu
from service.catalog.schema import Billing, Cloud, GpuSpec, InstanceRow, PriceRow
from service.labels import price_is_old, price_when
from service.planner.costing import HOURS_PER_MONTH, QUOTE_LINKS

Sort = Literal["price", "price-per-gpu", "price-per-tflops"]
SORTS: tuple[str, ...] = get_args(Sort)
BILLINGS: tuple[Billing, ...] = ("on_demand", "monthly", "spot")
# The price a row is sorted on when no billing is asked: on-demand, else monthly, else spot. Rows are grouped by
# which billing that is (an on-demand hour is never ranked against a month's subscription), then by the value.
SORT_BILLINGS: tuple[Billing, ...] = BILLINGS


class CatalogQuery(BaseModel):
    """What to list and in which order; every field optional. The filters of `catalog list`, the query
    parameters of GET /v1/catalog/instances and the arguments of MCP search_catalog."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    cloud: Cloud | None = Field(default=None, description="tencent or jdcloud; both when empty")
    gpu: str | None = Field(default=None, min_length=1, max_length=128,
                            description="a GPU family: every SKU of it (A100 = the A100 40G and 80G SKUs)")
    min_memory_gb: float | None = Field(default=None, ge=0, le=1024,
                                        description="GPU memory per card, at least this many GB")
    min_cards: int | None = Field(default=None, ge=1, le=64, description="GPUs per instance, at least this many")
    rdma: bool | None = Field(default=None, description="true: only instances with RDMA; false: only without")
    fp8: bool | None = Field(default=None, description="true: only GPUs with FP8 tensor cores; false: only without")
    billing: Billing | None = Field(
        default=None, description="only instances with a price under this billing rule (a price on request is "
        "not one); the price sorted on")
    sort: Sort = Field(
        default="price-per-gpu", description="price: the instance's price; price-per-gpu: ¥ per GPU-hour; "
        "price-per-tflops: ¥ per dense BF16 TFLOPS-hour. Sorted on the billing asked, else on-demand, else monthly "
        "(per hour: ÷ 730), else spot; instances without a price come last")


class InstancePrice(PriceRow):
    """One price of an instance, as the catalog view shows it: the row of prices.csv, what it costs per GPU-hour
    and per dense BF16 TFLOPS-hour (a month as 730 hours; none for a price on request), its date as a reader
    reads it, and whether it is the one the planner uses for its billing rule."""

    per_gpu_hour_cny: float | None = Field(description="¥ per GPU-hour (a month as 730 h); null on request")
    per_tflops_hour_cny: float | None = Field(description="¥ per dense BF16 TFLOPS-hour; null on request")
    planner_uses: bool = Field(description="the price the planner uses for this billing rule (default region, "
                               "most trustworthy, newest)")

    @computed_field  # type: ignore[prop-decorator]
    @property
    def date_en(self) -> str:
        """The price's date as a reader reads it: the content's age and when it was read ("list price from a ~2021
        price page; it may have changed, check the cloud's official price calculator · captured 2026-12-01"), or
        the source's own date."""
        return price_when(self, "en")

    @computed_field  # type: ignore[prop-decorator]
    @property
    def date_zh(self) -> str:
        """The same in Chinese ("刊例价来自约 2021 年的价格页，可能已调整，请以官网价格计算器为准 · 抓取于 2026-12-01")."""
        return price_when(self, "zh")

    @computed_field  # type: ignore[prop-decorator]
    @property
    def old(self) -> bool:
        """Older than price_max_age_days by its content's age: it may have changed."""
        return price_is_old(self)


class CatalogInstance(InstanceRow):
    """An instance as the catalog view shows it: the row of instances.csv, its GPU's name, FP8 and dense BF16
    TFLOPS, its prices (the planner's price of each billing rule first) and the cloud's official quote link."""

    gpu_name: str = Field(description="the GPU's display name")
    fp8: bool = Field(description="the GPU has FP8 tensor cores")
    dense_bf16_tflops: float | None = Field(description="dense BF16 (FP16 where no BF16) TFLOPS per card")
    quote_link: str = Field(description="the cloud's official price calculator")
    prices: list[InstancePrice]

    @computed_field  # type: ignore[prop-decorator]
    @property
    def price_on_request(self) -> bool:
        """No price to pay under any billing rule (sold through sales, or no public price): ask the cloud."""
        return all(self.priced(b) is None for b in BILLINGS)

    def price(self, billing: str) -> InstancePrice | None:
        """The price the planner uses for `billing` (may be a price on request), or None."""
        return next((p for p in self.prices if p.billing == billing and p.planner_uses), None)

    def priced(self, billing: str) -> InstancePrice | None:
        """The price for `billing` when there is one to pay (not on request, not stale), else None."""
        p = self.price(billing)
        return None if p is None or p.on_request or p.stale else p

    def sort_price(self, billing: str | None) -> InstancePrice | None:
        """The price the row is sorted on: `billing`'s, else on-demand, else monthly, else spot."""
        return next((p for b in ((billing,) if billing else SORT_BILLINGS) if (p := self.priced(b))), None)


def _per_gpu_hour(p: PriceRow, inst: InstanceRow) -> float | None:
    if p.on_request:
        return None
    hourly = p.price_cny if p.unit == "hour" else p.price_cny / HOURS_PER_MONTH
    return hourly / inst.gpu_count


def catalog_price(p: PriceRow, inst: InstanceRow, gpu: GpuSpec | None, planner_uses: bool) -> InstancePrice:
    per_gpu = _per_gpu_hour(p, inst)
    per_tflops = per_gpu / gpu.dense_16bit_tflops if per_gpu is not None and gpu is not None else None
    return InstancePrice(**p.model_dump(), planner_uses=planner_uses,
                        per_gpu_hour_cny=None if per_gpu is None else round(per_gpu, 2),
                        per_tflops_hour_cny=None if per_tflops is None else round(per_tflops, 4))


def catalog_row(inst: InstanceRow, prices: tuple[PriceRow, ...], gpu: GpuSpec | None) -> CatalogInstance:
    """One instance with every price it has, the planner's price of each billing rule first."""
    used = [p for b in BILLINGS if (p := best_price(inst.instance_type, b, prices)) is not None]
    mine = sorted(((p, any(p is u for u in used)) for p in prices_for(inst.instance_type, prices)),
                  key=lambda pu: (BILLINGS.index(pu[0].billing), not pu[1]))
    return CatalogInstance(**inst.model_dump(), gpu_name=gpu.name if gpu else inst.gpu, fp8=bool(gpu and gpu.supports_fp8),
                      dense_bf16_tflops=gpu.dense_16bit_tflops if gpu else None, quote_link=QUOTE_LINKS[inst.cloud],
                      prices=[catalog_price(p, inst, gpu, u) for p, u in mine])


def matches(row: CatalogInstance, q: CatalogQuery) -> bool:
    """The row passes every filter of `q` but the cloud and the GPU (catalog_rows applies those first)."""
    return ((q.min_memory_gb is None or row.gpu_memory_gib >= q.min_memory_gb)
            and (q.min_cards is None or row.gpu_count >= q.min_cards)
            and (q.rdma is None or row.rdma == q.rdma)
            and (q.fp8 is None or row.fp8 == q.fp8)
            and (q.billing is None or row.priced(q.billing) is not None))


SortKey = tuple[int, bool, float, str]


def _sort_key(q: CatalogQuery) -> Callable[[CatalogInstance], SortKey]:
    order = (q.billing,) if q.billing else SORT_BILLINGS

    def key(row: CatalogInstance) -> SortKey:
        p = row.sort_price(q.billing)
        per_gpu = None if p is None else _per_gpu_hour(p, row)
        if p is None or per_gpu is None:
            return len(order), True, 0.0, row.instance_type
        value = {"price": per_gpu * row.gpu_count, "price-per-gpu": per_gpu,
                 "price-per-tflops": per_gpu / row.dense_bf16_tflops if row.dense_bf16_tflops else None}[q.sort]
        return order.index(p.billing), value is None, value or 0.0, row.instance_type

    return key


def gpu_family_named(name: str, cat: Catalog) -> str:
    """The GPU family a name means: a family itself ('A100', every SKU of it) or any name of one SKU ('A100 80G',
    'A800'). An unknown name raises UnknownGpuError with suggestions."""
    key = normalize(name)
    family = next((f for g in cat.gpus if normalize(f := gpu_family(g.id)) == key), None)
    return family or gpu_family(resolve_gpu(name, cat.gpus)[0].id)


def catalog_rows(cat: Catalog, q: CatalogQuery | None = None) -> list[CatalogInstance]:
    """The instances `q` asks for, in its order. An unknown GPU name raises UnknownGpuError with suggestions."""
    q = q or CatalogQuery()
    family = gpu_family_named(q.gpu, cat) if q.gpu else None
    specs = {g.id: g for g in cat.gpus}
    rows = [catalog_row(inst, cat.prices, specs.get(inst.gpu)) for inst in cat.instances
            if (q.cloud is None or inst.cloud == q.cloud) and (family is None or gpu_family(inst.gpu) == family)]
    return sorted((r for r in rows if matches(r, q)), key=_sort_key(q))


def instance_row(inst: InstanceRow, cat: Catalog) -> CatalogInstance:
    """One instance's row (`catalog show`, the assistant's look-ups)."""
    return catalog_row(inst, cat.prices, next((g for g in cat.gpus if g.id == inst.gpu), None))
