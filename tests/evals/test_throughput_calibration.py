"""The per-class throughput calibration check (service/evals/calibration.py): factors by source, the shrinkage,
the 6N blend and the choice made on fitted rows left out by source."""

from __future__ import annotations

import math

import pytest

from service.evals.calibration import Point, chosen, class_factors, estimate, scores


def _p(source: str, klass: str, measured: float, engine: float, rule: float = 100.0,
       split: str = "fitted") -> Point:
    return Point(f"{source}-{measured}", split, source, klass, measured, engine, rule)


def test_each_source_weighs_once_in_its_class_factor() -> None:
    # source a: ten rows at 2x the engine; source b: one row at 1x -> the class factor is sqrt(2), not ~1.9x
    pts = [_p("a", "lora", 200.0 + i, 100.0 + i / 2) for i in range(10)] + [_p("b", "lora", 100.0, 100.0)]
    bias, sources = class_factors(pts)["lora"]
    assert sources == 2
    assert math.exp(bias) == pytest.approx(math.sqrt(2.0), rel=1e-3)


def test_shrinkage_and_the_rule_fallback() -> None:
    factors = {"lora": (math.log(2.0), 2)}  # two sources reading 2x the engine
    p = _p("c", "lora", 150.0, 100.0, rule=400.0)
    assert estimate(p, factors, "engine") == 100.0
    assert estimate(p, factors, "rule") == 400.0
    assert estimate(p, factors, "calibrated", k=2.0) == pytest.approx(100.0 * 2.0 ** 0.5)  # weight 2 / (2 + 2)
    # blended: halfway (geometrically) between the calibrated figure and the rule
    assert estimate(p, factors, "blended", k=2.0) == pytest.approx(math.sqrt(100.0 * 2.0 ** 0.5 * 400.0))
    unseen = _p("d", "MoE qlora", 50.0, 100.0, rule=60.0)
    assert estimate(unseen, factors, "blended") == pytest.approx(60.0)  # no fitted source: the rule


def test_a_bias_every_source_shares_is_chosen_and_a_source_specific_one_is_not() -> None:
    shared = [_p(s, "full", 130.0 * k, 100.0 * k, rule=1000.0) for s in "abcd" for k in (1.0, 2.0)]
    assert chosen(scores(shared)) == "calibrated"
    # each source has its own bias: a left-out source's factor comes from the others and misleads
    specific = [_p(s, "full", f * 100.0 * k, 100.0 * k, rule=1000.0) for s, f in zip("abcd", (2.0, 0.5, 1.8, 0.6), strict=True)
                for k in (1.0, 2.0)]
    assert chosen(scores(specific)) == "engine"


def test_held_out_rows_are_scored_but_never_choose() -> None:
    fitted = [_p(s, "full", 100.0, 100.0) for s in "ab"]
    held = [_p("h", "full", 400.0, 100.0, rule=400.0, split="held-out")]
    found = scores(fitted + held)
    assert {s.split for s in found} == {"fitted (leave one source out)", "held-out"}
    assert chosen(found) == "engine"  # the rule is exact on the held-out row and still not chosen
