"""Billing rules per family (knowledge/catalog/billing_rules.csv): checked on every official list pair, and every
estimate derived from the rule of its own family."""

from __future__ import annotations

from collections import Counter

import pytest

from service.catalog.loader import Catalog
from service.catalog.schema import PriceRow


def _pairs(catalog: Catalog, confidence: str) -> list[tuple[str, str, PriceRow, PriceRow]]:
    """(cloud, family, hourly, monthly) for each instance and region with both prices of this confidence."""
    inst = {r.instance_type: r for r in catalog.instances}
    rows: dict[tuple[str, str, str], PriceRow] = {}
    for p in catalog.prices:
        if p.confidence == confidence and not p.promo and p.billing in ("on_demand", "monthly"):
            rows[(p.instance_type, p.region, p.billing)] = p
    out = []
    for (t, region, billing), hourly in rows.items():
        monthly = rows.get((t, region, "monthly"))
        if billing == "on_demand" and monthly is not None:
            out.append((inst[t].cloud, inst[t].family, hourly, monthly))
    return out


def test_every_official_pair_follows_its_family_rule(catalog: Catalog) -> None:
    pairs = _pairs(catalog, "official")
    assert len(pairs) >= 40
    for cloud, family, hourly, monthly in pairs:
        rule = catalog.billing_rule(cloud, family)
        assert rule is not None and rule.confidence == "official", (cloud, family)
        assert rule.holds(hourly.price_cny, monthly.price_cny), (hourly.instance_type, monthly.price_cny / hourly.price_cny)
        if hourly.price_low_cny is not None and monthly.price_low_cny is not None:  # the printed range's low end too
            assert rule.holds(hourly.price_low_cny, monthly.price_low_cny), hourly.instance_type


@pytest.mark.parametrize("family", ["GT4", "GN10Xp", "GI3X"])
def test_newer_families_list_monthly_at_480_times_hourly(catalog: Catalog, family: str) -> None:
    pairs = [(h, m) for _, f, h, m in _pairs(catalog, "official") if f == family]
    assert len(pairs) == {"GT4": 4, "GN10Xp": 4, "GI3X": 3}[family]
    for h, m in pairs:
        assert m.price_cny / h.price_cny == pytest.approx(480, rel=0.002), h.instance_type


@pytest.mark.parametrize("family", ["GN7", "GN10X", "GN6", "GN6S", "p.n1p40", "p.n1v100"])
def test_older_families_and_jd_list_monthly_at_288_times_hourly(catalog: Catalog, family: str) -> None:
    pairs = [(h, m) for _, f, h, m in _pairs(catalog, "official") if f == family]
    assert pairs
    for h, m in pairs:
        assert m.price_cny / h.price_cny == pytest.approx(288, rel=0.005), h.instance_type


def test_estimates_use_the_rule_of_their_own_family(catalog: Catalog) -> None:
    pairs = _pairs(catalog, "estimate")
    assert len(pairs) >= 20
    for cloud, family, hourly, monthly in pairs:
        rule = catalog.billing_rule(cloud, family)
        assert rule is not None, (cloud, family)
        assert rule.holds(hourly.price_cny, monthly.price_cny), (hourly.instance_type, monthly.price_cny / hourly.price_cny)
        if rule.monthly_per_hourly_low == rule.monthly_per_hourly_high and hourly.price_low_cny is not None:
            assert monthly.price_low_cny is not None  # the range's low end by the same rule
            assert rule.holds(hourly.price_low_cny, monthly.price_low_cny), hourly.instance_type


def test_bare_metal_and_hcc_show_a_reference_not_a_price(catalog: Catalog) -> None:
    # The bare-metal list these were priced from is not public (issue 39): each is now "price on request" beside a
    # market reference from the public CVM list price of the same GPUs, dated as that anchor.
    for t, anchor in (("HCCPNV4h", "GT4.41XLARGE948 on_demand"), ("HCCG5v.24XLARGE384", "GN10Xp.20XLARGE320 on_demand"),
                      ("BMG5v", "GN10Xp.20XLARGE320 on_demand"), ("BMG5t", "GN7.20XLARGE320 on_demand")):
        rows = [p for p in catalog.prices if p.instance_type == t]
        assert [(p.billing, p.on_request, p.confidence, p.anchor) for p in rows] == \
            [("on_demand", True, "estimate", anchor)], t
        ref = next(p for p in catalog.prices if f"{p.instance_type} {p.billing}" == anchor and p.confidence == "official")
        assert rows[0].price_cny == ref.price_cny and rows[0].dated == ref.dated


def test_every_priced_family_has_a_rule_with_a_source(catalog: Catalog) -> None:
    inst = {r.instance_type: r for r in catalog.instances}
    families = {(inst[p.instance_type].cloud, inst[p.instance_type].family) for p in catalog.prices
                if p.billing == "monthly"}
    for cloud, family in families:
        rule = catalog.billing_rule(cloud, family)
        assert rule is not None and rule.source.startswith("https://"), (cloud, family)


def test_counts_by_confidence(catalog: Catalog) -> None:
    prices = Counter(p.confidence for p in catalog.prices)
    assert prices["official"] >= 95
    assert prices["third_party"] == 3  # the dated 2026 captures kept beside the list prices (public ones only)
    promos = [p for p in catalog.prices if p.promo]
    assert promos and all(p.confidence == "third_party" for p in promos)  # a promotion is never the list price
    gt4 = {(p.billing, p.promo): p.price_cny for p in catalog.prices
           if p.instance_type == "GT4.4XLARGE96" and p.billing != "spot"}
    assert gt4 == {("on_demand", False): 28.64, ("monthly", False): 13748, ("on_demand", True): 26.97}
