"""The LLM reader: one structured-output call reads a message (with the conversation's earlier user messages) into
the question frame (service/reader/llm_schema.py); service/reader/from_frame.py makes it the Reading the spine's
routes read. The LLM never answers: routing, the engine and the renderers are the offline path's own.

    LlmFrameReader(llm, offline, instructions, method).read(text, turns, prev_type) -> Reading

Any failure is ReaderUnavailable (the turn then reads offline and says so): the provider's error or timeout, an
answer that is not the schema (no call, a field of the wrong type or not in the schema, an enum value outside it),
or a frame that does not hold together. A figure the messages do not state is dropped, with a note
(service/reader/figures.py): the LLM reads, it never supplies a number. `method` is how the schema is sent (langchain-openai's
`with_structured_output`): `function_calling` (a forced tool call: DeepSeek, Qwen/DashScope, Hunyuan) or
`json_schema` (response_format: vLLM, Ollama); None for a chat model that takes no `method` (the tests' fakes).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from pydantic import ValidationError

from service.lexicon import language_of
from service.reader.figures import drop_unstated
from service.reader.from_frame import Names, OffSchemaError, reading_from_draft
from service.reader.llm_schema import FrameDraft
from service.reader.message import note
from service.reader.read import Reader, ReaderUnavailable, Reading
from service.redact import failure, for_log, mask

log = logging.getLogger(__name__)

CONTEXT_TURNS = 6  # earlier user messages the LLM sees: enough for a follow-up's subject, never the whole history
REASON_CHARS = 160


def user_prompt(text: str, turns: Sequence[str], prev_type: str | None) -> str:
    """The one user message of the call: the earlier user messages as context, then the message to read."""
    lines: list[str] = []
    if turns:
        lines.append("Earlier messages from the user in this conversation, oldest first (context only):")
        lines += [f"{i}. {t.strip()}" for i, t in enumerate(turns, start=1)]
        if prev_type:
            lines.append(f"(The previous question was answered as: {prev_type}.)")
        lines.append("")
    lines += ["The message to read:", text.strip()]
    return "\n".join(lines)


def _why(exc: BaseException) -> str:
    """The reason a turn read offline, as `backend` and the stored turn carry it: the schema's field and the error
    kind, or the error's class and HTTP status (service/redact.py); never the provider's own words."""
    if isinstance(exc, ValidationError):
        errors = exc.errors()
        loc, kind = (errors[0]["loc"], errors[0]["type"]) if errors else ((), "invalid")
        where = ".".join(str(p) for p in loc if isinstance(p, int) or str(p).isidentifier()) or "frame"
        return f"off-schema answer ({where}: {kind})"[:REASON_CHARS]
    return failure(exc)[:REASON_CHARS]


class LlmFrameReader:
    """A FrameReader (service/reader/read.py) over an OpenAI-compatible chat model."""

    name = "llm"

    def __init__(self, llm: Any, offline: Reader, instructions: str, method: str | None = "function_calling",
                 context_turns: int = CONTEXT_TURNS, secrets: Sequence[str] = ()) -> None:
        kwargs: dict[str, Any] = {"method": method} if method else {}
        self._structured = llm.with_structured_output(FrameDraft, include_raw=True, **kwargs)
        self._offline = offline
        self._names = Names(offline.model_aliases, offline.gpu_aliases)
        self.instructions = instructions
        self.method = method
        self.context_turns = context_turns
        self._secrets = tuple(secrets)  # masked wherever a failure is logged (the configured API key)

    def _unavailable(self, exc: BaseException, reason: str | None = None) -> ReaderUnavailable:
        """The failure logged with its text masked; the reason that leaves this module has no provider text."""
        log.warning("LLM reader failed: %s", for_log(exc, self._secrets))
        return ReaderUnavailable(mask(reason or _why(exc), self._secrets))

    def draft(self, text: str, turns: Sequence[str] = (), prev_type: str | None = None) -> FrameDraft:
        """The provider's frame of the message; ReaderUnavailable when there is none."""
        from langchain_core.messages import HumanMessage, SystemMessage

        messages = [SystemMessage(self.instructions), HumanMessage(user_prompt(text, turns, prev_type))]
        try:
            out = self._structured.invoke(messages)
        except Exception as exc:  # the provider's error, its timeout, a refusal
            raise self._unavailable(exc) from exc
        parsed = out.get("parsed") if isinstance(out, dict) else out
        error = out.get("parsing_error") if isinstance(out, dict) else None
        if error is not None:
            cause = error.__cause__ if isinstance(error.__cause__, ValidationError) else error
            raise self._unavailable(cause, _why(cause) if isinstance(cause, ValidationError)
                                    else f"off-schema answer ({type(error).__name__})")
        if isinstance(parsed, dict):  # a provider that returns the arguments unparsed
            try:
                parsed = FrameDraft.model_validate(parsed)
            except ValidationError as exc:
                raise self._unavailable(exc) from exc
        if not isinstance(parsed, FrameDraft):
            raise ReaderUnavailable("off-schema answer (no frame in the reply)")
        return parsed

    def read(self, text: str, turns: Sequence[str] = (), prev_type: str | None = None) -> Reading:
        draft, dropped = drop_unstated(self.draft(text, turns, prev_type), [text, *turns])
        language = language_of(text)
        notes = [note(language, "unstated_figure", path, f"{value:g}") for path, value in dropped]
        if dropped:
            log.info("LLM reader: dropped figures the messages do not state: %s", dropped)
        try:
            return reading_from_draft(draft, text, self._names, self._offline.decide, notes)
        except (OffSchemaError, ValidationError) as exc:
            raise self._unavailable(exc, _why(exc) if isinstance(exc, ValidationError)
                                    else f"off-schema answer ({exc})") from exc  # our words, from the frame's counts


class UnavailableReader:
    """The LLM reader asked for (GPU_ADVISOR_LLM=openai) but not built (no model name, no langchain-openai): a
    FrameReader that never reads, so every turn reads offline and says why."""

    name = "llm"
    context_turns = 0

    def __init__(self, reason: str) -> None:
        self.reason = reason[:REASON_CHARS]  # our own words (a setting missing) or failure(exc): no provider text

    def read(self, text: str, turns: Sequence[str] = (), prev_type: str | None = None) -> Reading:
        raise ReaderUnavailable(self.reason)
