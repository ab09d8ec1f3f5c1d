"""GET /v1/catalog/gpus and /v1/catalog/instances: rows with prices and provenance."""

from __future__ import annotations

from fastapi.testclient import TestClient

from service.catalog.loader import Catalog


def test_gpus_carry_specs_provenance_and_prices(client: TestClient, catalog: Catalog) -> None:
    gpus = client.get("/v1/catalog/gpus").json()
    assert len(gpus) == len(catalog.gpus)
    a10 = next(g for g in gpus if g["id"] == "A10")
    assert a10["source"] and a10["as_of"] and a10["confidence"]
    assert a10["sold_as"]
    for cheapest in a10["cheapest_on_demand"].values():
        assert cheapest["cny_per_gpu_hour"] > 0 and cheapest["source"] and cheapest["confidence"]


def test_instances_filter_by_cloud_and_gpu(client: TestClient, catalog: Catalog) -> None:
    everything = client.get("/v1/catalog/instances").json()
    assert len(everything) == len(catalog.instances)
    tencent = client.get("/v1/catalog/instances", params={"cloud": "tencent"}).json()
    assert tencent and {r["cloud"] for r in tencent} == {"tencent"}
    a10 = client.get("/v1/catalog/instances", params={"gpu": "A10"}).json()
    assert a10 and {r["gpu"] for r in a10} <= {g.id for g in catalog.gpus if g.id.split("-")[0] == "A10"}
    priced = [r for r in a10 if r["prices"]]
    assert priced and all(p["source"] and (p["as_of"] or p["captured"]) and p["confidence"] for r in priced for p in r["prices"])
    assert all(r["quote_link"].startswith("http") for r in a10)


def test_bad_filters(client: TestClient) -> None:
    r = client.get("/v1/catalog/instances", params={"cloud": "aws"})
    assert r.status_code == 422 and "cloud:" in r.json()["error"]["message"]
    r = client.get("/v1/catalog/instances", params={"gpu": "A1000"})
    assert r.status_code == 400 and "Did you mean" in r.json()["error"]["message"]
