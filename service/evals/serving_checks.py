"""Scorers for the serving question type: the serving answer's headline figures against the engine on the
scenario's gold serving workload (the ServingWorkload fields the words state).

Truth: with a GPU in the gold, `inference` on it (whether it starts, GPUs per replica, replicas, the KV pool) and
`plan_serving` pinned to it for where to rent it (the instance, when a cloud here rents it); without, `plan_serving`
and its top option (the GPU, GPUs per replica, replicas, the KV pool, the instance). The schema's defaults fill
what the words did not state, as they do for the assistant.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from service.catalog.loader import Catalog
from service.errors import AdvisorError
from service.evals.answers import typed_answer
from service.evals.checks import NA, Check
from service.evals.dataset import Expect, Scenario
from service.questions.serving import ServingAnswer
from service.serving_workload import ServingWorkload

# What the verdict compares when the deployment starts; only the first three when it does not.
KEYS = ("gpu", "gpus_per_replica", "starts", "replicas", "kv_capacity_tokens", "instance_type")


def serving_truth(gold: dict[str, Any], catalog: Catalog, max_age: int = 180) -> dict[str, Any]:
    """The engine's answer on the gold workload, in the shape of `answered`."""
    from service.planner.serving_inference import inference
    from service.planner.serving_plan import plan_serving

    w = ServingWorkload.model_validate(gold)
    plan = plan_serving(w, catalog, max_price_age_days=max_age)  # with a GPU pinned: where to rent that GPU
    if w.gpu:
        inf = inference(w, catalog)
        s = inf.sizing
        return {"gpu": inf.gpu, "gpus_per_replica": s.gpus_per_replica if s else inf.gpus, "starts": inf.starts,
                "replicas": s.replicas if s else None,
                "kv_capacity_tokens": s.kv_capacity_tokens if s else inf.kv_capacity_tokens,
                "instance_type": plan.candidates[0].instance_type if plan.candidates else None}
    if not plan.candidates:
        return dict.fromkeys(KEYS) | {"starts": False}
    top = plan.candidates[0]
    return {"gpu": top.gpu, "gpus_per_replica": top.sizing.gpus_per_replica, "starts": True,
            "replicas": top.sizing.replicas, "kv_capacity_tokens": top.sizing.kv_capacity_tokens,
            "instance_type": top.instance_type}


def answered(result: dict[str, Any]) -> dict[str, Any]:
    """The serving answer's headline figures in the truth's shape (all None for any other answer)."""
    answer = typed_answer(result)
    if not isinstance(answer, ServingAnswer):
        return dict.fromkeys(KEYS)
    got = answer.figures()
    return {"gpu": got.gpu, "gpus_per_replica": got.gpus_per_replica, "starts": got.starts, "replicas": got.replicas,
            "kv_capacity_tokens": got.kv_capacity_tokens,
            "instance_type": got.instance.instance_type if got.instance is not None else None}


def serving_verdict(sc: Scenario, result: dict[str, Any], catalog: Catalog, max_age: int = 180) -> Check:
    """The answer's count, GPU, start verdict, KV pool and instance are the engine's on the gold workload."""
    try:
        truth = serving_truth(sc.gold or {}, catalog, max_age)
    except (AdvisorError, ValidationError) as exc:
        return Check(False, f"ground truth failed (fix the scenario): {exc}")
    if result.get("intent") != "serving":
        return Check(False, f"no serving verdict (the answer is a {result.get('intent')})")
    keys = KEYS if truth["starts"] else KEYS[:3]
    have = {k: answered(result)[k] for k in keys}
    want = {k: truth[k] for k in keys}
    return Check(have == want, f"got {have}, engine {want}")


def expectation_failures(expect: Expect, serving: dict[str, Any]) -> list[str]:
    """The expected serving properties (starts, gpus_per_replica, the GPU) that `serving` does not have."""
    failures = []
    for key in ("starts", "gpus_per_replica", "gpu"):
        want = getattr(expect, key)
        if want is not None and serving.get(key) != want:
            failures.append(f"{key}: expected {want}, got {serving.get(key)}")
    return failures


def serving_expectations(expect: Expect, result: dict[str, Any]) -> Check:
    if all(getattr(expect, k) is None for k in ("starts", "gpus_per_replica", "gpu")):
        return NA
    failures = expectation_failures(expect, answered(result))
    return Check(not failures, "; ".join(failures) or "all hold")
