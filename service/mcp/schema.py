"""The tools' JSON schemas as an agent reads them, on every request: compact, derived from the pydantic models (no
schema is written by hand). `tools/list` was 321k characters (80k tokens an agent paid per request); the target is
60k (tests/mcp/test_fields.py keeps it; scripts/bench_mcp_sizes.py prints it).

Input schemas keep everything a caller needs to send a valid call (types, enums, required fields, ranges,
defaults) and say it once:
- a definition used once is written in place; one used more often stays in `$defs`, referenced;
- an optional field is its type (an omitted field is "not given"; the server accepts null too), not anyOf [X, null];
- descriptions are one line (their first clause; the full text is in the model's docstring and docs/mcp.md);
- titles, `default: null` and string length bounds (names the server checks and names back) are dropped.

The tools declare no output schema (service/mcp/outputs.py says why).
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

DESCRIPTION_CHARS = 80
_CUT = re.compile(r";\s|(?<!e\.g)(?<!i\.e)\.\s(?=[A-Z(])|\s—\s")
_DROP = ("title", "minLength", "maxLength")


def one_line(text: str, limit: int = DESCRIPTION_CHARS) -> str:
    """The first clause of a description, at most `limit` characters, cut at a word."""
    text = " ".join(text.split())
    text = _CUT.split(text, maxsplit=1)[0].rstrip(". ")
    if len(text) <= limit:
        return text
    cut = text[:limit]
    for sep in (", ", " (", " "):
        if sep in cut[limit // 2:]:
            return cut[:cut.rindex(sep)].rstrip(",;:(") + "…"
    return cut + "…"


def _refs(node: Any, found: Counter[str]) -> Counter[str]:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            found[ref.removeprefix("#/$defs/")] += 1
        for value in node.values():
            _refs(value, found)
    elif isinstance(node, list):
        for value in node:
            _refs(value, found)
    return found


def _nullable(node: dict[str, Any]) -> dict[str, Any]:
    """anyOf [X, null] as X; a type list with null as the type."""
    alts = node.get("anyOf")
    if isinstance(alts, list) and len(alts) == 2 and {"type": "null"} in alts:
        other = next(a for a in alts if a != {"type": "null"})
        if isinstance(other, dict):
            rest = {k: v for k, v in node.items() if k != "anyOf"}
            node = {**other, **rest}
    kinds = node.get("type")
    if isinstance(kinds, list) and "null" in kinds:
        left = [k for k in kinds if k != "null"]
        node = {**node, "type": left[0] if len(left) == 1 else left}
    return node


def _walk(node: Any, defs: dict[str, Any], uses: Counter[str], depth: int = 0) -> Any:
    if isinstance(node, list):
        return [_walk(x, defs, uses, depth) for x in node]
    if not isinstance(node, dict):
        return node
    node = _nullable(node)
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/") and uses[ref.removeprefix("#/$defs/")] == 1 and depth < 32:
        inline = defs.get(ref.removeprefix("#/$defs/"), {})
        node = {**inline, **{k: v for k, v in node.items() if k != "$ref"}}
        return _walk(node, defs, uses, depth + 1)
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _DROP or (key == "default" and value is None):
            continue
        if key == "description" and isinstance(value, str):
            out[key] = one_line(value)
        elif key in ("properties", "$defs") and isinstance(value, dict):
            out[key] = {name: _walk(v, defs, uses, depth) for name, v in value.items()}
        else:
            out[key] = _walk(value, defs, uses, depth)
    return out


def compact(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema said once (module docstring); what it accepts is unchanged but for string lengths and nulls."""
    defs = dict(schema.get("$defs") or {})
    uses = _refs({k: v for k, v in schema.items() if k != "$defs"}, Counter())
    for body in defs.values():
        _refs(body, uses)
    out: dict[str, Any] = _walk({k: v for k, v in schema.items() if k != "$defs"}, defs, uses)
    shared = {name: _walk(body, defs, uses) for name, body in defs.items() if uses[name] > 1}
    if shared:
        out["$defs"] = shared
    return out
