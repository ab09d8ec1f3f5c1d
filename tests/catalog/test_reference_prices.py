"""Other clouds' list prices as a reference (issue 39 item 6): the price-API fetchers build the official requests and
read the official answers (stubs, no network); the shipped rows are dated and sourced; a plan shows one comparison line
for the same GPU and is never priced with them."""

from __future__ import annotations

from datetime import date
from typing import Any

import pytest

from service.catalog.fetchers.reference_apis import (
    AliyunPrices,
    Asked,
    BaiduPrices,
    HuaweiPrices,
    ReferenceFetchError,
    VolcenginePrices,
)
from service.catalog.provenance import reference_problems
from service.catalog.reference import reference_line

DAY = date(2026, 12, 6)


class Stub:
    """A transport answering one canned response and keeping the requests it was given."""

    def __init__(self, answer: dict[str, Any]) -> None:
        self.answer, self.requests = answer, []

    def __call__(self, request: Any) -> dict[str, Any]:
        self.requests.append(request)
        return self.answer


def test_aliyun_get_pay_as_you_go_price() -> None:
    stub = Stub({"Success": True, "Data": {"Currency": "CNY", "ModuleDetails": {"ModuleDetail": [
        {"ModuleCode": "InstanceType", "OriginalCost": 34.742, "CostAfterDiscount": 30.1}]}}})
    rows = AliyunPrices(stub, "cn-beijing").fetch([Asked("ecs.gn7e-c16g1.4xlarge", "A100-80G-SXM", 1, 16, 125)], DAY)
    req = stub.requests[0]
    assert req["action"] == "GetPayAsYouGoPrice" and req["params"]["SubscriptionType"] == "PayAsYouGo"
    assert req["params"]["ModuleList.1.Config"].startswith("InstanceType:ecs.gn7e-c16g1.4xlarge,")
    (r,) = rows
    assert (r.cloud, r.price_cny, r.as_of, r.basis, r.vcpus) == ("aliyun", 34.742, DAY, "api", 16)  # list, not discounted
    assert r.source.startswith("https://")


def test_volcengine_get_instance_type_reads_price_and_hardware() -> None:
    stub = Stub({"Result": {"Id": "ml.gni3cl.5xlarge", "GpuType": "L20", "GpuCount": 1, "Cpu": 20, "MemoryMiB": 102400,
                            "PriceByHour": 30.0}})
    (r,) = VolcenginePrices(stub).fetch([Asked("ml.gni3cl.5xlarge", "L20", 1)], DAY)
    assert stub.requests[0]["action"] == "GetInstanceType" and stub.requests[0]["body"] == {"Id": "ml.gni3cl.5xlarge"}
    assert (r.price_cny, r.vcpus, r.memory_gib) == (30.0, 20, 100.0)
    with pytest.raises(ReferenceFetchError, match="GPUs"):  # the answer's GPU count must be the one asked about
        VolcenginePrices(stub).fetch([Asked("ml.gni3cl.5xlarge", "L20", 2)], DAY)


def test_huawei_list_on_demand_resource_ratings() -> None:
    stub = Stub({"amount": 5.9, "official_website_amount": 6.33, "measure_id": 1, "currency": "CNY",
                 "product_rating_results": [{"id": "1", "amount": 5.9, "official_website_amount": 6.33}]})
    (r,) = HuaweiPrices(stub, project_id="p1").fetch([Asked("g6.xlarge.4", "T4", 1, 4, 16)], DAY)
    info = stub.requests[0]["body"]["product_infos"][0]
    assert stub.requests[0]["path"] == "/v2/bills/ratings/on-demand-resources"
    assert info["resource_spec"] == "g6.xlarge.4.linux" and info["usage_measure_id"] == 4  # one hour
    assert r.price_cny == 6.33 and r.region == "cn-north-4"


def test_baidu_instance_price() -> None:
    stub = Stub({"price": [{"specId": "gn5", "specPrices": [{"spec": "bcc.gn5.c8m32.1v100-32g", "specPrice": 17.5,
                                                            "status": "available"}]}]})
    (r,) = BaiduPrices(stub).fetch([Asked("bcc.gn5.c8m32.1v100-32g", "V100-32G-PCIE", 1)], DAY)
    body = stub.requests[0]["body"]
    assert (body["specId"], body["paymentTiming"]) == ("gn5", "Postpaid") and r.price_cny == 17.5


@pytest.mark.parametrize("answer", [{"Data": {}}, {"Success": False, "Code": "InvalidParameter", "Message": "bad"},
                                    {"Data": {"ModuleDetails": {"ModuleDetail": [{"ModuleCode": "InstanceType",
                                                                                   "OriginalCost": "n/a"}]}}}])
def test_an_answer_without_a_price_is_an_error_never_a_guess(answer: dict[str, Any]) -> None:
    with pytest.raises(ReferenceFetchError):
        AliyunPrices(Stub(answer)).fetch([Asked("ecs.gn6i-c4g1.xlarge", "T4", 1)], DAY)


def test_shipped_reference_rows_are_dated_sourced_and_for_known_gpus(catalog) -> None:
    rows = catalog.reference_prices
    assert {r.cloud for r in rows} >= {"aliyun", "volcengine", "huaweicloud"}
    assert reference_problems(rows, today=DAY) == []
    assert all(r.source.startswith("https://") and r.page.startswith("https://") for r in rows)


def test_reference_problems_name_the_bad_row() -> None:
    from service.catalog.reference import ReferencePrice

    bad = ReferencePrice(cloud="aliyun", product="ECS", gpu="T4", gpu_count=1, price_cny=11.63, as_of=date(2027, 1, 1),
                         basis="capture", source="notes/aliyun.md", page="")
    problems = reference_problems([bad], today=DAY)
    assert any("not a public URL" in p for p in problems) and any("future" in p for p in problems)
    assert any("the page it captured" in p for p in problems)


def test_the_comparison_line(catalog) -> None:
    zh = reference_line("A100-80G-SXM", "A100-80G", catalog.reference_prices, "zh")
    assert zh == "同款 A100-80G 在阿里云约 ¥34.74/卡时（2026-09，官网价，第三方采集；仅供参考，不参与方案计算）"
    assert reference_line("P40", "P40", catalog.reference_prices, "en") == ""  # no other cloud's price known


def test_a_plan_shows_the_line_and_is_not_priced_with_it(catalog) -> None:
    from service.planner.plan import plan
    from service.workload import Workload

    out = plan(Workload(model="Qwen2.5-1.5B", method="lora", samples=10000), catalog)
    a10 = next(c for c in out.candidates if c.gpu.id == "A10")
    assert any(n.code == "price_reference" and "阿里云约 ¥9.53/卡时" in n.zh for n in a10.warnings)
    assert all(c.price.instance_type == a10.inst.instance_type for c in a10.costs.values())  # priced on its own rows
