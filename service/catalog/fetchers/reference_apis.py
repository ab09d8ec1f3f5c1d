"""Other clouds' official price APIs, for the reference rows (knowledge/catalog/reference_prices.csv).

One fetcher a cloud: Alibaba Cloud BSS `GetPayAsYouGoPrice`, Volcano Engine ML platform `GetInstanceType`, Huawei
Cloud BSS `ListOnDemandResourceRatings`, Baidu BCC `/v2/instance/price`. Each builds the official request for the
instance types asked about and turns the response into `ReferencePrice` rows dated the day they were read
(basis "api"). The HTTP call is a `Transport` the caller gives (the cloud's SDK client with its keys); none is bundled,
and the tests pass stubs, so nothing here reaches the network. Each asked instance type is written as
`(instance type, GPU id, GPU count)`: the price APIs return money, not hardware.

The response fields read are the ones the clouds' API references name; where a response lacks them the fetcher
raises `ReferenceFetchError` naming the field, never a guessed price.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import date
from typing import Any

from service.catalog.fetchers.base import FetchError
from service.catalog.reference import RefCloud, ReferencePrice

# (request) -> parsed JSON response. The request says the API in the cloud's own terms (see each fetcher).
Transport = Callable[[Mapping[str, Any]], Mapping[str, Any]]

ALIYUN_API = "https://help.aliyun.com/document_detail/91486.htm"
VOLC_API = "https://www.volcengine.com/docs/6459/1544741"
HUAWEI_API = "https://support.huaweicloud.com/api-oce/bcloud_01001.html"
BAIDU_API = "https://cloud.baidu.com/doc/BCC/s/uk5dt23r8"


class ReferenceFetchError(FetchError):
    """A price API answered without the field a price needs, or with an error."""


@dataclass(frozen=True)
class Asked:
    """One instance type to price, with the hardware the API will not return."""

    instance_type: str
    gpu: str
    gpu_count: int
    vcpus: int | None = None
    memory_gib: float | None = None


def _get(d: Mapping[str, Any], path: str) -> Any:
    cur: Any = d
    for key in path.split("."):
        if not isinstance(cur, Mapping) or key not in cur:
            raise ReferenceFetchError(f"price API response has no {path}")
        cur = cur[key]
    return cur


def _price(value: Any, what: str) -> float:
    try:
        price = float(value)
    except (TypeError, ValueError) as exc:
        raise ReferenceFetchError(f"{what}: '{value}' is not a price") from exc
    if not 0 < price < 1e5:
        raise ReferenceFetchError(f"{what}: {price} is not an hourly price in yuan")
    return price


def _row(cloud: RefCloud, product: str, a: Asked, price: float, region: str, today: date, api: str) -> ReferencePrice:
    return ReferencePrice(cloud=cloud, product=product, instance_type=a.instance_type, gpu=a.gpu,
                          gpu_count=a.gpu_count, vcpus=a.vcpus, memory_gib=a.memory_gib, price_cny=round(price, 4),
                          region=region, as_of=today, basis="api", source=api, page=api,
                          note_en="Pay-as-you-go list price per instance-hour from the official price API.",
                          note_zh="官方价格接口返回的按量目录价（每实例每小时）。")


class AliyunPrices:
    """BSS OpenAPI 2017-12-14 GetPayAsYouGoPrice: ProductCode ecs, one InstanceType module priced by the hour;
    reads Data.ModuleDetails.ModuleDetail[].OriginalCost (the list price before discounts)."""

    def __init__(self, transport: Transport, region: str = "cn-hangzhou") -> None:
        self.transport, self.region = transport, region

    def request(self, a: Asked) -> dict[str, Any]:
        return {"action": "GetPayAsYouGoPrice", "version": "2017-12-14", "endpoint": "business.aliyuncs.com",
                "params": {"ProductCode": "ecs", "SubscriptionType": "PayAsYouGo", "Region": self.region,
                           "ModuleList.1.ModuleCode": "InstanceType", "ModuleList.1.PriceType": "Hour",
                           "ModuleList.1.Config": f"InstanceType:{a.instance_type},IoOptimized:IoOptimized,"
                                                  "ImageOs:linux"}}

    def fetch(self, asked: Iterable[Asked], today: date | None = None) -> list[ReferencePrice]:
        today = today or date.today()
        out = []
        for a in asked:
            resp = self.transport(self.request(a))
            if resp.get("Success") is False:
                raise ReferenceFetchError(f"GetPayAsYouGoPrice {a.instance_type}: {resp.get('Code')} "
                                          f"{resp.get('Message')}")
            details = _get(resp, "Data.ModuleDetails.ModuleDetail")
            mod = next((m for m in details if m.get("ModuleCode") == "InstanceType"), None)
            if mod is None:
                raise ReferenceFetchError(f"GetPayAsYouGoPrice {a.instance_type}: no InstanceType module")
            price = _price(mod.get("OriginalCost"), f"aliyun {a.instance_type}")
            out.append(_row("aliyun", "ECS", a, price, self.region, today, ALIYUN_API))
        return out


class VolcenginePrices:
    """ML platform GetInstanceType (Version 2024-07-01, Id = the instance type): reads Result.PriceByHour (the hourly
    reference price) and, from the same answer, GpuType, GpuCount, Cpu and MemoryMiB; a GpuCount that disagrees with
    the one asked is refused."""

    def __init__(self, transport: Transport, region: str = "cn-beijing") -> None:
        self.transport, self.region = transport, region

    def request(self, a: Asked) -> dict[str, Any]:
        return {"action": "GetInstanceType", "version": "2024-07-01", "service": "ml_platform", "region": self.region,
                "body": {"Id": a.instance_type}}

    def fetch(self, asked: Iterable[Asked], today: date | None = None) -> list[ReferencePrice]:
        today = today or date.today()
        out = []
        for a in asked:
            resp = self.transport(self.request(a))
            err = (resp.get("ResponseMetadata") or {}).get("Error")
            if err:
                raise ReferenceFetchError(f"GetInstanceType {a.instance_type}: {err.get('Code')} {err.get('Message')}")
            result = _get(resp, "Result")
            count = result.get("GpuCount")
            if count is not None and int(count) != a.gpu_count:
                raise ReferenceFetchError(f"GetInstanceType {a.instance_type}: {count} GPUs, not the {a.gpu_count} "
                                          "asked about")
            price = _price(result.get("PriceByHour"), f"volcengine {a.instance_type}")
            mem = result.get("MemoryMiB")
            hw = Asked(a.instance_type, a.gpu, a.gpu_count, int(result["Cpu"]) if result.get("Cpu") else a.vcpus,
                       round(float(mem) / 1024, 1) if mem else a.memory_gib)
            out.append(_row("volcengine", "机器学习平台", hw, price, self.region, today, VOLC_API))
        return out


class HuaweiPrices:
    """BSS v2 ListOnDemandResourceRatings: one ECS flavor (hws.resource.type.vm) for one hour (usage_measure_id 4);
    reads official_website_amount (the list price; amount is after the account's discounts)."""

    def __init__(self, transport: Transport, project_id: str, region: str = "cn-north-4") -> None:
        self.transport, self.project_id, self.region = transport, project_id, region

    def request(self, a: Asked) -> dict[str, Any]:
        return {"method": "POST", "path": "/v2/bills/ratings/on-demand-resources", "endpoint": "bss.myhuaweicloud.com",
                "body": {"project_id": self.project_id, "inquiry_precision": 1, "product_infos": [
                    {"id": "1", "cloud_service_type": "hws.service.type.ec2", "resource_type": "hws.resource.type.vm",
                     "resource_spec": f"{a.instance_type}.linux", "region": self.region, "usage_factor": "Duration",
                     "usage_value": 1, "usage_measure_id": 4, "subscription_num": 1}]}}

    def fetch(self, asked: Iterable[Asked], today: date | None = None) -> list[ReferencePrice]:
        today = today or date.today()
        out = []
        for a in asked:
            resp = self.transport(self.request(a))
            if resp.get("error_code"):
                raise ReferenceFetchError(f"ListOnDemandResourceRatings {a.instance_type}: {resp['error_code']} "
                                          f"{resp.get('error_msg', '')}")
            results = resp.get("product_rating_results") or []
            value = results[0].get("official_website_amount") if results else resp.get("official_website_amount")
            if value is None:
                raise ReferenceFetchError("price API response has no official_website_amount")
            if resp.get("measure_id", 1) != 1:  # 1 = yuan; 2 = jiao, 3 = fen
                value = float(value) / {2: 10, 3: 100}.get(int(resp["measure_id"]), 1)
            out.append(_row("huaweicloud", "ECS", a, _price(value, f"huaweicloud {a.instance_type}"), self.region,
                            today, HUAWEI_API))
        return out


class BaiduPrices:
    """BCC POST /v2/instance/price: specId (the family, e.g. gn5) and spec, pay as you go (Postpaid), one instance;
    reads price[].specPrices[].specPrice of the spec asked, as an hourly price (the API reference does not state the
    Postpaid unit: unverified against a live answer)."""

    def __init__(self, transport: Transport, zone: str = "cn-bj-a") -> None:
        self.transport, self.zone = transport, zone

    def request(self, a: Asked) -> dict[str, Any]:
        spec_id = a.instance_type.split(".")[1] if a.instance_type.count(".") >= 2 else a.instance_type
        return {"method": "POST", "path": "/v2/instance/price", "endpoint": "bcc.bj.baidubce.com",
                "body": {"specId": spec_id, "spec": a.instance_type, "paymentTiming": "Postpaid",
                         "zoneName": self.zone, "purchaseCount": 1, "purchaseLength": 1}}

    def fetch(self, asked: Iterable[Asked], today: date | None = None) -> list[ReferencePrice]:
        today = today or date.today()
        out = []
        for a in asked:
            resp = self.transport(self.request(a))
            if resp.get("code") and resp.get("message"):
                raise ReferenceFetchError(f"/v2/instance/price {a.instance_type}: {resp['code']} {resp['message']}")
            prices = [sp for group in _get(resp, "price") for sp in group.get("specPrices") or []]
            hit = next((sp for sp in prices if sp.get("spec") == a.instance_type), None)
            if hit is None:
                raise ReferenceFetchError(f"/v2/instance/price {a.instance_type}: the spec is not in the answer")
            out.append(_row("baidu", "BCC", a, _price(hit.get("specPrice"), f"baidu {a.instance_type}"), self.zone,
                            today, BAIDU_API))
        return out
