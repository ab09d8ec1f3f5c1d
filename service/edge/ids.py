"""Session ids and quoting user input in messages: the checks every route shares.

    check_session_id("a1b2", "session_id")   # the id, or InvalidInputError (422) naming the field and the rule
    session_for_user("张三")                  # OpenAI `user`: itself when it is a valid id, else a stable derived id
    quote("x" * 10_000)                      # at most QUOTE_MAX characters of the input, for error messages
"""

from __future__ import annotations

import hashlib
import re

from service.errors import InvalidInputError

SESSION_ID_MAX = 128
SESSION_ID_CHARS = "A-Z a-z 0-9 . _ : @ -"
SESSION_ID_PATTERN = r"^[A-Za-z0-9._:@-]{1,128}$"
_SESSION_ID = re.compile(SESSION_ID_PATTERN)
QUOTE_MAX = 200


def quote(value: object, limit: int = QUOTE_MAX) -> str:
    """`value` as text, cut to `limit` characters with a note of the full length when longer."""
    text = value if isinstance(value, str) else repr(value)
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text)} characters)"


def is_session_id(value: str) -> bool:
    return _SESSION_ID.fullmatch(value) is not None


def check_session_id(value: str, field: str = "session_id") -> str:
    """The id itself when it has 1-128 characters from SESSION_ID_CHARS; else a 422 naming the field."""
    if is_session_id(value):
        return value
    raise InvalidInputError(
        f"{field}: '{quote(value, 40)}' is not a session id (1-{SESSION_ID_MAX} characters from {SESSION_ID_CHARS}).",
        "Send a session id returned by the API, or omit it to start a new session.",
    )


def session_for_user(user: str) -> str:
    """The session for an OpenAI `user` string: the string itself when it is a valid session id; otherwise (any
    other text: 张三, CR/LF, too long) a stable id derived from it, so the same user keeps the same session."""
    if is_session_id(user):
        return user
    return "user-" + hashlib.sha256(user.encode("utf-8", "surrogatepass")).hexdigest()[:32]
