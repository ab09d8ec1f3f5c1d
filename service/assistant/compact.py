"""Compact answers: what /v1/chat sends by default and what a stored turn keeps.

A training plan keeps the candidates it chose (each cloud's pick, the cheaper and faster alternatives, the options a
pick is explained against, the fastest within the budget and the cheapest within the deadline), each with the cost
of its chosen billing only, the first REJECTED_KEPT rejected options and no cost frontier; `n_candidates` still
counts every option that fits. A serving plan keeps each cloud's pick and its next best options, SERVING_PER_CLOUD
per cloud, and no rejected list. Everything else (the text, the verdicts, the workload, the notes, the assumptions,
the documents asked for) is as answered, and the compact plan still validates against the plan contract.

The whole plan comes with `detail=full` (POST /v1/chat, GET /v1/sessions/{id}/messages, GET /v1/sessions/{id}/turns/
{n}), and POST /v1/plan is always whole; a stored turn's whole plan is recomputed from its stored workload
(service/assistant/expand.py).
"""

from __future__ import annotations

from typing import Any

from service.assistant.types import AskResult, Detail

__all__ = ["Detail", "answer", "packed", "result", "unpacked"]
REJECTED_KEPT = 3
SERVING_PER_CLOUD = 3
TEXT_REF = "turn.answer"  # a stored result's `answer_markdown`: the turn's answer column
DOCS_REF = "answer.documents"  # a stored result's `documents`: the same documents as its answer's
PRICE_REF = "candidate.price"  # a stored candidate's cost line's price: the same price as its candidate's
# AskResult fields retired for `answer` (each was a copy of part of it): turns stored before hold them
RETIRED = frozenset({"recommendation", "serving_plan", "serving", "feasibility", "comparison", "winner", "savings",
                     "capacity", "diagnose", "fact"})


def chosen_types(plan: dict[str, Any]) -> set[str]:
    """The instance types a training plan names: picks, alternatives, pick reasons (and what they are explained
    against), the fastest within the budget and the cheapest within the deadline."""
    keep = {str(v) for v in (plan.get("picks") or {}).values()}
    keep |= {str(v) for v in (plan.get("alternatives") or {}).values()}
    for why in (plan.get("pick_reasons") or {}).values():
        keep.add(str(why.get("instance_type")))
        keep |= {str(v) for v in why.get("versus") or []}
    for ref in ("fastest_within_budget", "cheapest_within_deadline"):
        if isinstance(plan.get(ref), dict):
            keep.add(str(plan[ref].get("instance_type")))
    return keep


def _candidate(c: dict[str, Any]) -> dict[str, Any]:
    costs = c.get("cost_cny") or {}
    return {**c, "cost_cny": {k: v for k, v in costs.items() if k == c.get("billing")}}


def training_plan(plan: dict[str, Any]) -> dict[str, Any]:
    keep = chosen_types(plan)
    cands = [c for c in plan.get("candidates") or [] if c.get("instance_type") in keep]
    return {**plan, "candidates": [_candidate(c) for c in cands],
            "rejected": (plan.get("rejected") or [])[:REJECTED_KEPT], "frontier": {}}


def serving_plan(plan: dict[str, Any]) -> dict[str, Any]:
    picks = set((plan.get("picks") or {}).values())
    shown: list[dict[str, Any]] = []
    for c in sorted(plan.get("candidates") or [], key=lambda c: c.get("instance_type") not in picks):
        if sum(o.get("cloud") == c.get("cloud") for o in shown) < SERVING_PER_CLOUD:
            shown.append(c)
    order = {id(c): i for i, c in enumerate(plan.get("candidates") or [])}
    return {**plan, "candidates": sorted(shown, key=lambda c: order[id(c)]), "rejected": []}


def answer(art: dict[str, Any]) -> dict[str, Any]:
    """A typed answer's JSON with its plan compacted (the input is not changed)."""
    plan = art.get("plan")
    if not isinstance(plan, dict):
        return art
    if plan.get("kind") == "training":
        return {**art, "plan": training_plan(plan)}
    if plan.get("kind") == "serving":
        return {**art, "plan": serving_plan(plan)}
    return art


def is_compact(art: dict[str, Any] | None) -> bool:
    """Whether a stored answer's plan was compacted (its frontier dropped, or fewer candidates than counted)."""
    plan = (art or {}).get("plan")
    if not isinstance(plan, dict):
        return False
    if plan.get("kind") == "training":
        return len(plan.get("candidates") or []) < int(plan.get("n_candidates") or 0) or not plan.get("frontier")
    return plan.get("kind") == "serving" and not plan.get("rejected")


def result(res: AskResult) -> AskResult:
    """The AskResult with its answer's plan compacted (the plan a client draws its card from)."""
    if res.answer is None:
        return res
    data = res.model_dump(mode="json")
    small = answer(data["answer"])
    if small is data["answer"]:
        return res
    data["answer"] = small
    return AskResult.model_validate(data)


def packed(stored: dict[str, Any], text: str | None = None) -> dict[str, Any]:
    """A result as a turn stores it: its answer compact, and left out what it repeats: `documents` (the answer's
    documents again) and `answer_markdown` when it is the turn's stored text (`text`); `unpacked` puts them back."""
    out = {k: v for k, v in stored.items() if k not in RETIRED}
    if isinstance(out.get("answer"), dict):
        out["answer"] = _priced_once(answer(out["answer"]))
        docs = out["answer"].get("documents")
        if docs and out.get("documents") and out["documents"] == _documents(docs):
            out["documents"] = DOCS_REF
    if text is not None and out.get("answer_markdown") == text:
        out["answer_markdown"] = TEXT_REF
    return out


def _priced_once(art: dict[str, Any], back: bool = False) -> dict[str, Any]:
    """A training plan's candidates with each cost line's price stored as PRICE_REF where it is the candidate's own
    price (`back`: the price put back); any other answer as it is."""
    plan = art.get("plan")
    if not isinstance(plan, dict) or plan.get("kind") != "training":
        return art
    cands = []
    for c in plan.get("candidates") or []:
        price, costs = c.get("price"), c.get("cost_cny")
        if price is None or not isinstance(costs, dict):
            cands.append(c)
            continue
        if back:
            lines = {b: {**line, "price": price} if line.get("price") == PRICE_REF else line for b, line in costs.items()}
        else:
            lines = {b: {**line, "price": PRICE_REF} if line.get("price") == price else line for b, line in costs.items()}
        cands.append({**c, "cost_cny": lines})
    return {**art, "plan": {**plan, "candidates": cands}}


def _documents(docs: dict[str, Any]) -> dict[str, Any]:
    """AskResult.documents from the answer's documents (service/assistant/result.py documents_of)."""
    return {k: docs[k] for k in ("request_document", "launch_bundle") if docs.get(k)}


def unpacked(stored: dict[str, Any], text: str) -> dict[str, Any]:
    """A stored result as it was answered (compact), given the turn's stored text. The per-type fields a turn
    stored before they were retired (`recommendation`, `serving_plan`, ...) are left out: `answer` holds them."""
    out = {k: v for k, v in stored.items() if k not in RETIRED}
    if isinstance(out.get("answer"), dict):
        out["answer"] = _priced_once(out["answer"], back=True)
    if out.get("answer_markdown") == TEXT_REF:
        out["answer_markdown"] = text
    if out.get("documents") == DOCS_REF:
        out["documents"] = _documents((out.get("answer") or {}).get("documents") or {})
    return out
