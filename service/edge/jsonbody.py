"""One reading of a JSON body for every adapter that takes JSON (the API's routes, /mcp over HTTP and stdio), before
anything else parses it. It finds what JSON parsers let through and the engine must never see:

- NaN, Infinity, -Infinity (Python's json reads them, RFC 8259 has no such numbers) and numbers beyond a double
  (1e400 reads as infinity): a number that is not finite is refused, naming where it is, never read as "not given";
- a string with a lone UTF-16 surrogate ("\\ud800"): valid JSON escapes, but not Unicode text (writing it back out
  fails);
- nesting deeper than a limit (a 5,000-deep body exhausts the parser's recursion).

    found = find_problem(text)      # None, or BodyProblem(kind, path, message)

`path` names the place as the client sent it: "workload.params_b", "params.arguments.epochs", "messages.0.content".
"""

from __future__ import annotations

import json
import math
import re
from collections import deque
from dataclasses import dataclass
from typing import Any, Literal

# What a body must hold before it is worth parsing here: a non-finite token, a three-digit exponent, a number too
# long for a double, or a surrogate escape. Anything else is left to the route's own parser.
SUSPECT = re.compile(r"NaN|Infinity|[0-9.][eE][+]?[0-9]{3}|[0-9]{309}|\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
FIX_NUMBER = "Send a finite JSON number (NaN, Infinity and values beyond ±1.8e308 are not numbers here)."
FIX_TEXT = "Send the text as valid Unicode (UTF-8, no lone surrogate escape such as \\ud800)."


@dataclass(frozen=True)
class BodyProblem:
    kind: Literal["number", "text", "depth"]
    path: str
    message: str
    fix: str


class _NotFinite:
    def __init__(self, token: str) -> None:
        self.token = token


def _float(token: str) -> float | _NotFinite:
    value = float(token)
    return value if math.isfinite(value) else _NotFinite(token)


def _has_lone_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def problem_in(value: Any, max_items: int = 1_000_000) -> BodyProblem | None:
    """The first non-finite number or lone surrogate in a value `parse` read, breadth first (no recursion)."""
    queue: deque[tuple[str, Any]] = deque([("", value)])
    while queue:
        path, item = queue.popleft()
        if isinstance(item, _NotFinite):
            return BodyProblem("number", path, f"{path or 'body'}: {item.token[:40]} is not a finite number.",
                               FIX_NUMBER)
        if isinstance(item, str) and _has_lone_surrogate(item):
            return BodyProblem("text", path, f"{path or 'body'}: the text holds a lone surrogate, which is not "
                               "Unicode.", FIX_TEXT)
        if isinstance(item, dict):
            for key, child in item.items():
                if isinstance(key, str) and _has_lone_surrogate(key):
                    return BodyProblem("text", path, f"{path or 'body'}: a key holds a lone surrogate, which is not "
                                       "Unicode.", FIX_TEXT)
                queue.append((f"{path}.{key}" if path else str(key), child))
        elif isinstance(item, list):
            queue.extend((f"{path}.{i}" if path else str(i), child) for i, child in enumerate(item))
        if len(queue) > max_items:  # a body this wide is the route's to refuse by size; stop looking
            return None
    return None


def parse(text: str) -> Any:
    """json.loads with non-finite numbers kept as markers (find_problem names where they are)."""
    return json.loads(text, parse_constant=_NotFinite, parse_float=_float)


def find_problem(text: str, *, always: bool = False, max_items: int = 1_000_000) -> BodyProblem | None:
    """The first value no route may read (see the module docstring), or None. Bodies with nothing suspect are not
    parsed unless `always`; a body that does not parse is left to the caller's parser to refuse."""
    if not always and SUSPECT.search(text) is None:
        return None
    try:
        value = parse(text)
    except RecursionError:
        return BodyProblem("depth", "", "The JSON nests too deep to read.", "Send a flatter JSON body.")
    except ValueError:
        return None
    return problem_in(value, max_items)


def nesting_depth(text: str, limit: int) -> int:
    """How deep arrays and objects nest (strings skipped), counted up to `limit` + 1: no recursion, so a body
    nested 100,000 deep costs one pass over it."""
    depth = deepest = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > limit:
                    return deepest
        elif ch in "]}":
            depth -= 1
    return deepest
