"""The checks every MCP message passes before the SDK reads it, whatever carries it (a POST to /mcp with any
Content-Type, or a line on stdio): the body is UTF-8 JSON no deeper than MAX_DEPTH, holds no number that is not
finite (NaN, Infinity, 1e400) and no lone surrogate (service/edge/jsonbody.py), each message's id is a JSON-RPC id
of sane size, and a request names a method MCP has.

    problem = check_body(body)     # None, or (HTTP status, the JSON-RPC error response to send)

The SDK answered a body that is not UTF-8, one nested 5,000 deep (RecursionError), an id of 5,000 digits (Python's
int-size limit) or a lone surrogate with HTTP 500, an unknown method with -32602 (its union of request types failed
to validate), and read NaN or 1e400 in a tool's arguments as null ("not given"). These are the client's mistakes:
400 with a parse error (-32700), an invalid request (-32600) or invalid params (-32602, naming the field), and an
unknown method is -32601 (method not found), as JSON-RPC 2.0 says.
"""

from __future__ import annotations

import typing
from functools import cache
from typing import Any

from service.edge import jsonbody

MAX_DEPTH = 64  # MCP messages nest a few levels (params.arguments.options[...]); 64 is generous
MAX_ID_CHARS = 256
MAX_ID_INT = 2**63 - 1
PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS = -32700, -32600, -32601, -32602
Problem = tuple[int, dict[str, Any]]


def error_response(code: int, message: str, id_: object = None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id_, "error": {"code": code, "message": message}}


@cache
def request_methods() -> frozenset[str]:
    """Every request method of the MCP version the SDK speaks (ping, initialize, tools/call, ...)."""
    from mcp import types

    methods: set[str] = set()
    for request in typing.get_args(types.ClientRequest.model_fields["root"].annotation):
        methods.update(typing.get_args(request.model_fields["method"].annotation))
    return frozenset(methods)


def _valid_id(value: object) -> bool:
    if value is None:
        return True
    if isinstance(value, bool):  # JSON true/false: not an id
        return False
    if isinstance(value, int):
        return -MAX_ID_INT <= value <= MAX_ID_INT
    return isinstance(value, str) and len(value) <= MAX_ID_CHARS


def check_message(message: object) -> Problem | None:
    if not isinstance(message, dict):
        return 400, error_response(INVALID_REQUEST, "Invalid request: a JSON-RPC message is a JSON object.")
    if "id" in message and not _valid_id(message["id"]):
        return 400, error_response(INVALID_REQUEST, "Invalid request: id must be a string of at most "
                                   f"{MAX_ID_CHARS} characters, an integer within 64 bits, or null.")
    method = message.get("method")
    if method is None:
        return None  # a response or an error from the client: the SDK judges it
    if not isinstance(method, str):
        return 400, error_response(INVALID_REQUEST, "Invalid request: method must be a string.", message.get("id"))
    if "id" in message and method not in request_methods():
        shown = method if len(method) <= 80 else method[:80] + "…"
        return 200, error_response(METHOD_NOT_FOUND, f"Method not found: {shown!r}.", message["id"])
    return None


def _id_of(parsed: object) -> object:
    """The request's id when it is a sane one (the error answers it), else null."""
    value = parsed.get("id") if isinstance(parsed, dict) else None
    if not _valid_id(value) or (isinstance(value, str) and jsonbody.problem_in(value) is not None):
        return None
    return value


def check_body(body: bytes) -> Problem | None:
    """None when the SDK may read the body; else the status and the JSON-RPC error to answer with."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        return 400, error_response(PARSE_ERROR, f"Parse error: the body is not UTF-8 (byte {exc.start}).")
    if jsonbody.nesting_depth(text, MAX_DEPTH) > MAX_DEPTH:
        return 400, error_response(PARSE_ERROR, f"Parse error: JSON nested deeper than {MAX_DEPTH} levels.")
    try:
        parsed = jsonbody.parse(text)
    except ValueError as exc:  # malformed, or a number over Python's 4,300-digit limit
        said = "a number has more digits than 4,300" if "digits" in str(exc) else str(exc)[:200]
        return 400, error_response(PARSE_ERROR, f"Parse error: {said}.")
    found = jsonbody.problem_in(parsed)
    if found is not None:  # NaN / Infinity / 1e400 never read as "not given"; text that is not Unicode
        code, what = (INVALID_PARAMS, "Invalid params") if found.kind == "number" else (INVALID_REQUEST,
                                                                                         "Invalid request")
        return 400, error_response(code, f"{what}: {found.message} {found.fix}", _id_of(parsed))
    for message in parsed if isinstance(parsed, list) else [parsed]:
        problem = check_message(message)
        if problem is not None:
            return problem
    return None
