"""What an MCP tool's structured result holds. The tools declare no `outputSchema`.

Why none: the whole schemas (each result model's nested JSON schema) were 250k of the 321k characters of
`tools/list`, which an agent pays on every request, and no client we serve reads them: the MCP SDK's client only
validates structuredContent against a schema when one is given, the LangChain adapters and Claude pass the JSON
through, and the model reads the result itself. MCP allows structured content without a schema; the text content
carries the same JSON when it is small (service/mcp/server.py). The shapes are documented where a reader looks them
up: docs/plan-json.md (the plan contract), docs/mcp.md and the API's OpenAPI schema (the same models).

By default the structured result is **compact**: the same shape with its long lists cut to what an agent reads
(a plan's candidates to each cloud's pick and the alternatives with the cost of their chosen billing, the
rejected options cut to three and the cost frontier dropped, a serving plan's options to three per cloud, passages
to their first 600 characters); `detail: "full"` returns it whole.
"""

from __future__ import annotations

from typing import Any

PER_CLOUD = 3
PASSAGE_CHARS = 600
REJECTED_SHOWN = 3



def _training_plan(p: dict[str, Any]) -> dict[str, Any]:
    keep = set(p.get("picks", {}).values()) | set(p.get("alternatives", {}).values())
    keep |= {r.get("instance_type") for r in (p.get("pick_reasons") or {}).values()}
    cands = [c for c in p.get("candidates", []) if c.get("instance_type") in keep] or p.get("candidates", [])[:1]
    return {**p, "candidates": [_training_candidate(c) for c in cands], "rejected": p.get("rejected", [])[:REJECTED_SHOWN],
            "frontier": {}}


def _training_candidate(c: dict[str, Any]) -> dict[str, Any]:
    """A candidate with the cost of its chosen billing only (the others are in the full result)."""
    costs = c.get("cost_cny") or {}
    chosen = {k: v for k, v in costs.items() if k == c.get("billing")}
    return {**c, "cost_cny": chosen or dict(list(costs.items())[:1])}


def _serving_plan(p: dict[str, Any]) -> dict[str, Any]:
    shown: list[dict[str, Any]] = []
    picks = set(p.get("picks", {}).values())
    for c in sorted(p.get("candidates", []), key=lambda c: c.get("instance_type") not in picks):
        if sum(o.get("cloud") == c.get("cloud") for o in shown) < PER_CLOUD:
            shown.append(c)
    order = {id(c): i for i, c in enumerate(p.get("candidates", []))}
    shown.sort(key=lambda c: order.get(id(c), 0))
    return {**p, "candidates": shown, "rejected": p.get("rejected", [])[:REJECTED_SHOWN]}


def _passages(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{**p, "text": str(p.get("text", ""))[:PASSAGE_CHARS]} for p in items]


def compact(result: dict[str, Any]) -> dict[str, Any]:
    """The result with its long lists cut (module docstring); the input is not changed."""
    out = dict(result)
    kind = out.get("kind")
    if kind == "training" and "candidates" in out:
        return _training_plan(out)
    if kind == "serving" and "candidates" in out and "picks" in out:
        return _serving_plan(out)
    if kind == "plan" and isinstance(out.get("plan"), dict):
        out["plan"] = _training_plan(out["plan"])
        out["citations"] = _passages(out.get("citations") or [])
    if kind == "serving" and isinstance(out.get("plan"), dict):
        out["plan"] = _serving_plan(out["plan"])
    if isinstance(out.get("passages"), list):
        out["passages"] = _passages(out["passages"])
    if kind == "knowledge" and isinstance(out.get("applied"), dict):
        out["applied"] = compact(out["applied"])
    return out
