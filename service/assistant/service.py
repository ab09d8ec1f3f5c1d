"""The assistant: sessions and turns over the question spine. A turn is one straight function, read -> route -> run
-> render (service/questions/turn.py). Offline (the default, no key) the offline reader reads; with an
OpenAI-compatible LLM (GPU_ADVISOR_LLM=openai) the LLM reader does, in one structured-output call
(service/reader/llm_reader.py), and the same routes, engine and renderers answer. GPU_ADVISOR_LLM_MODE=agent keeps
the older agent instead: the LLM calls the tools derived from the question list and writes the prose
(service/assistant/llm_turn.py). Either way a provider that fails leaves the turn to the offline path, and the
answer says so. Turns are stored once (SQLite, or Postgres with DATABASE_URL). The CLI, the API, Slack and the
evals all call this."""

from __future__ import annotations

import logging
import queue
import threading
import uuid
from collections.abc import Iterator
from typing import Any

from service.assistant import compact, retention
from service.assistant.compact import Detail
from service.assistant.expand import full_result
from service.assistant.open_db import open_database
from service.assistant.prompts import phrases, render_prompt
from service.assistant.prose import citation_url, prose_check, turn_messages
from service.assistant.result import alias_fields, documents_of, recommendation_of, workload_of
from service.assistant.sessions import (
    Rating,
    SessionFullError,
    SessionNotFoundError,
    SessionStore,
    TurnRecord,
    now,
    request_digest,
)
from service.assistant.types import (
    AskResult,
    Citation,
    HistoryTurn,
    Language,
    SessionInfo,
    SessionMessage,
    SessionPage,
    StreamEvent,
)
from service.catalog.loader import Catalog, load_catalog
from service.errors import AdvisorError, IdempotencyConflictError, InvalidInputError
from service.lexicon import language_of
from service.questions.base import Context, Phrases, Previous
from service.questions.turn import Conversation, Names, Turn, answer_message, answer_workload, previous_of
from service.reader.read import FrameReader
from service.redact import failure, for_log
from service.settings import Settings, get_settings
from service.storage import storage_full
from service.workload import Workload

log = logging.getLogger(__name__)
__all__ = ["Assistant", "build_assistant", "citation_url", "prose_check"]
CONTEXT_TURNS = 20  # earlier turns a new turn reads (and the LLM agent sees): a turn's cost is flat in the session
PAGE_TURNS = 50  # turns per page of history by default


class Assistant:
    """The assistant. Conversations are stored turns (service.assistant.sessions), not agent checkpoints:

        ask(message, session_id=None, *, create=False, history=None, owner=None, request_id=None) -> AskResult
        stream(...same...) -> Iterator[StreamEvent]   # token/tool events, then `final` with the AskResult

    - `history`: the earlier turns (HistoryTurn: user text, answer text, and the plan's workload when known) for a
      stateless caller such as the OpenAI-compatible route rebuilding them from `messages`. When given, it is the
      conversation so far (stored turns are not read); without it, the session's stored turns are. Follow-ups
      ("预算改成8000呢") work from either, from the user texts alone when no workload is given.
    - `owner`: the caller's owner token; a session id names a session within its owner's sessions: the same id
      from another owner is another session, and one you do not own is unknown to you (404), whether or not it
      exists. None (CLI, Slack, evals) is trusted: the most recent session with that id, whoever owns it.
    - `request_id`: a client's idempotency key; a retry with the same key gets the stored answer, not a new turn.
    - `detail`: "full" (the default in process) answers with the whole plan; "compact" (the API's default) with
      the chosen candidates (service/assistant/compact.py), as the turn is stored. A stored answer asked for in
      full has its plan recomputed (service/assistant/expand.py).
    - A session holds at most settings.session_max_turns turns (SessionFullError, HTTP 409); sessions untouched
      for settings.session_ttl_days are deleted (service/assistant/retention.py).
    - One writer per session: turns to one session run one at a time (across processes on Postgres), so every
      acknowledged turn is stored, in order. A stream whose consumer goes away still records its turn, marked
      stopped when it was cut short.
    """

    def __init__(self, settings: Settings | None = None, catalog: Catalog | None = None,
                 llm: Any | None = None, retriever_factory: Any | None = None) -> None:
        self.settings = s = settings or get_settings()
        self.catalog = catalog or load_catalog(s.knowledge_dir, s.catalog_overlay_dir, s.prices_file)
        self._retriever: Any = None
        self._retriever_factory = retriever_factory if retriever_factory is not None else self._default_retriever
        self.ctx = Context.of(self.catalog, s.price_max_age_days, self.retriever)
        self.names = Names(self.catalog)
        s.data_dir.mkdir(parents=True, exist_ok=True)
        sqlite_path = s.data_dir / "sessions.sqlite"
        self.db = open_database(s.database_url, sqlite_path)
        self.sessions = SessionStore(self.db)
        self.storage_error: tuple[str, str] | None = None  # (when, why) the last turn failed to store, if it did
        self.llm_agent: Any = None
        self.llm_error = ""
        if llm is None and s.llm == "openai":
            try:
                from service.assistant.llm import build_llm

                llm = build_llm(s)
            except Exception as exc:  # a broken provider setting degrades to the offline path
                # our own words for a setting we check, else the error's class: never the provider's text
                self.llm_error = exc.message if isinstance(exc, AdvisorError) else failure(exc)
                log.warning("LLM backend unavailable, using the offline model: %s", for_log(exc, self._secrets))
        self.llm_reader: FrameReader | None = None
        if llm is not None and s.llm_mode == "agent":
            from langchain.agents import create_agent

            from service.questions.tools import langchain_tools

            self.llm_agent = create_agent(llm, langchain_tools(self.ctx), system_prompt=self._system("follow the user"))
        elif llm is not None:
            self.llm_reader = self._llm_reader(llm)
        elif self.llm_error and s.llm_mode == "reader":  # asked for, not built: every turn reads offline, noted
            from service.reader.llm_reader import UnavailableReader

            self.llm_reader = UnavailableReader(self.llm_error)
        self.known_instances = {r.instance_type for r in self.catalog.instances}
        if self.db.kind == "sqlite":
            from service.assistant.migrate import migrate_checkpoints

            migrate_checkpoints(sqlite_path, self.sessions, self._legacy_result)

    def _legacy_result(self, sid: str, messages: list[Any]) -> dict[str, Any]:
        """A pre-turn-store turn (its agent messages) as a stored AskResult: its text and language."""
        from langchain_core.messages import AIMessage, HumanMessage

        user = next((str(m.content) for m in reversed(messages) if isinstance(m, HumanMessage)), "")
        final = next((m for m in reversed(messages) if isinstance(m, AIMessage) and not m.tool_calls), None)
        text = str(final.content) if final is not None else ""
        return AskResult(session_id=sid, answer_markdown=text, language=language_of(user),
                         backend="offline").model_dump(mode="json")

    def _llm_reader(self, llm: Any) -> FrameReader:
        """The LLM reader over `llm`; the schema goes as the provider takes it (a ChatOpenAI's `method`)."""
        from service.assistant.llm import structured_method
        from service.reader.llm_reader import LlmFrameReader

        try:
            from langchain_openai import ChatOpenAI

            method = structured_method(self.settings) if isinstance(llm, ChatOpenAI) else None
        except ImportError:
            method = None
        instructions = render_prompt(self.settings.prompts_dir, "reader")
        return LlmFrameReader(llm, self.names.reader, instructions, method, secrets=self._secrets)

    @property
    def _secrets(self) -> tuple[str, ...]:
        """What a log line must never hold: the configured API keys (service/redact.py masks them)."""
        s = self.settings
        return tuple(k for k in (s.llm_api_key, s.api_key, s.slack_bot_token, s.slack_signing_secret) if k)

    def _system(self, hint: str) -> str:
        return render_prompt(self.settings.prompts_dir, "system", language_hint=hint)

    def _default_retriever(self) -> Any:
        from service.retrieval.config import RetrievalConfig
        from service.retrieval.hybrid import Retriever

        # A one-shot caller (CLI ask, evals) must not wait minutes for an index build: open the index that
        # `gpu-advisor index` or the server built, else answer from BM25 and say so.
        return Retriever(RetrievalConfig.from_settings(self.settings), refresh=False, build=False)

    def retriever(self) -> Any:
        if self._retriever is None:
            self._retriever = self._retriever_factory()
        return self._retriever

    # -- sessions ----------------------------------------------------------------------------------
    def has_session(self, session_id: str, owner: str | None = None) -> bool:
        return self.sessions.exists(session_id, owner)

    def session_with_answer(self, answer: str, owner: str | None = None) -> str | None:
        """The caller's session that gave `answer` (the OpenAI routes: a client without session ids or our
        comments sends our answer back in `messages`)."""
        return self.sessions.session_with_answer(owner or "", answer)

    def list_sessions(self, owner: str | None = None) -> list[SessionInfo]:
        return self.sessions.list(owner)

    def session_messages(self, session_id: str, owner: str | None = None) -> list[SessionMessage]:
        """The latest page of the conversation (session_page's defaults)."""
        return self.session_page(session_id, owner).messages

    def session_page(self, session_id: str, owner: str | None = None, *, limit: int = PAGE_TURNS,
                     before: int | None = None, detail: Detail = "compact") -> SessionPage:
        """Up to `limit` turns numbered below `before` (the newest when None), oldest first, as messages; with
        `next_before` when older turns exist. detail="full" recomputes each plan turn's whole plan."""
        own = self.sessions.resolve(session_id, owner)
        if own is None or not self.sessions.exists(session_id, own):
            raise SessionNotFoundError(session_id)
        turns, more = self.sessions.page(session_id, own, limit, before)
        if detail == "full":
            turns = [t if t.result is None else t.model_copy(update={"result": full_result(self.ctx, t.result,
                                                                                          t.workload)})
                     for t in turns]
        return SessionPage(messages=turn_messages(turns), next_before=turns[0].seq if more and turns else None)

    def rename_session(self, session_id: str, title: str, owner: str | None = None) -> SessionInfo:
        return self.sessions.rename(session_id, title, owner)

    def delete_session(self, session_id: str, owner: str | None = None) -> None:
        own = self.sessions.resolve(session_id, owner)
        with self.db.lock(self._lock_key(session_id, own or "", None)):
            self.sessions.delete(session_id, own)

    def rate_turn(self, session_id: str, turn: int, rating: Rating, *, rater: str = "", source: str = "") -> None:
        """A person's 👍/👎 on one answered turn (Slack's feedback buttons); counted per intent in the eval report."""
        self.sessions.rate(session_id, turn, rating, rater, source)

    def _check(self, message: str) -> None:
        if not message or not message.strip():
            raise InvalidInputError("The message is empty.", "Ask a question or describe a training job.")
        limit = self.settings.max_message_chars
        if len(message) > limit:
            raise InvalidInputError(f"The message has {len(message)} characters; the limit is {limit}.",
                                    "Shorten it or split it into several messages.")

    def _owner(self, session_id: str | None, owner: str | None) -> str:
        """The owner this turn is stored under: the caller's, or for a trusted caller (None) the session's."""
        if owner is not None:
            return owner
        return (self.sessions.owner_of(session_id) if session_id is not None else None) or ""

    def _lock_key(self, session_id: str | None, owner: str, request_id: str | None) -> str:
        if session_id is not None:
            return f"session:{owner}:{session_id}"
        return f"request:{owner}:{request_id}" if request_id else f"new:{uuid.uuid4().hex}"

    def _begin(self, session_id: str | None, create: bool, owner: str, request_id: str | None,
               digest: str | None = None) -> tuple[str, TurnRecord | None]:
        """Under the turn's lock: (session id, the stored turn when this request id was answered already). The
        same id with another request (another message or workload, another session) is a 409, as Stripe answers."""
        if request_id:
            done = self.sessions.answered(owner, request_id)
            _refuse_reuse(done, session_id, request_id, digest)
            if done is not None and done[1].result is not None:
                return done[0], done[1]
        if session_id is None:
            return uuid.uuid4().hex, None
        info = self.sessions.get(session_id, owner)
        cap = self.settings.session_max_turns
        if info is not None and cap and info.turns >= cap:
            raise SessionFullError(session_id, info.turns)
        if create or info is not None:  # create: this owner's session of that id
            return session_id, None
        raise SessionNotFoundError(session_id)

    def _stored(self, turn: TurnRecord, detail: Detail) -> AskResult:
        """A stored turn's answer (compact as stored), its plan recomputed in full when asked."""
        stored = turn.result or {}
        return AskResult.model_validate(full_result(self.ctx, stored, turn.workload) if detail == "full" else stored)

    def check_request_id(self, message: str, session_id: str | None = None, *, owner: str | None = None,
                         request_id: str | None = None, workload: Workload | None = None) -> None:
        """Refuse now (IdempotencyConflictError, HTTP 409) a request id already used with another request, so a
        stream can be refused before its first byte; the turn's own lock checks again."""
        if request_id:
            own = self._owner(session_id, owner)
            _refuse_reuse(self.sessions.answered(own, request_id), session_id, request_id,
                          _digest(message, workload))

    def _history(self, sid: str, owner: str, history: list[HistoryTurn] | None) -> list[HistoryTurn]:
        if history is not None:
            return list(history)
        return self.sessions.context(sid, owner, CONTEXT_TURNS)

    def _record(self, sid: str, owner: str, message: str, result: AskResult, workload: dict[str, Any] | None,
                request_id: str | None, stopped: bool = False, digest: str | None = None) -> None:
        """Store the turn (one transaction). A full disk is a StorageFullError naming it (HTTP 507): nothing is
        stored for this turn and nothing stored before is touched; /readyz shows it until a turn is stored."""
        try:
            self.sessions.append(sid, owner, TurnRecord(
                user=message, assistant=result.answer_markdown, workload=workload, request_id=request_id,
                request_hash=digest if request_id else None, intent=result.intent,
                result=result.model_dump(mode="json"), stopped=stopped))
        except Exception as exc:
            full = storage_full(exc, self.settings.data_dir, self.db.describe())
            if full is None:
                raise
            self.storage_error = (now(), full.message)
            log.error("turn not stored: %s", full.message)
            raise full from exc
        self.storage_error = None
        retention.maybe_prune(self.sessions, self.settings.session_ttl_days)

    # -- asking ------------------------------------------------------------------------------------
    def ask(self, message: str, session_id: str | None = None, *, create: bool = False,
            history: list[HistoryTurn] | None = None, owner: str | None = None,
            request_id: str | None = None, lang: Language | None = None,
            workload: Workload | None = None, detail: Detail = "full") -> AskResult:
        """Answer one message and store the turn (see the class docstring for the arguments). With `workload`
        (a form's structured workload) the turn plans it as it is and the message is only what the chat shows."""
        self._check(message)
        own = self._owner(session_id, owner)
        digest = _digest(message, workload) if request_id else None
        with self.db.lock(self._lock_key(session_id, own, request_id)):
            sid, done = self._begin(session_id, create, own, request_id, digest)
            if done is not None:
                return self._stored(done, detail)
            turn, backend = self._turn(message, self._history(sid, own, history), lang, workload)
            result = self._result(sid, message, turn, backend)
            self._record(sid, own, message, result, turn.workload, request_id, digest=digest)
            return result if detail == "full" else compact.result(result)

    def phrases(self, lang: str) -> Phrases:
        return phrases(self.settings.prompts_dir, lang)

    def _offline(self, message: str, turns: list[HistoryTurn], lang: Language | None,
                 reader: FrameReader | None = None) -> Turn:
        return answer_message(self.ctx, self.names, self.phrases, message, conversation(turns), lang, reader)

    def _turn(self, message: str, turns: list[HistoryTurn], lang: Language | None,
              workload: Workload | None = None) -> tuple[Turn, str]:
        """(the turn, the backend that answered it). A structured workload is the engine's alone: no reader,
        no LLM."""
        if workload is not None:
            return answer_workload(self.ctx, self.phrases, workload, lang or language_of(message)), "offline"
        if self.llm_agent is not None:
            from service.assistant.llm_turn import llm_turn, to_messages

            try:
                state = self.llm_agent.invoke({"messages": to_messages(turns, message)})
                return llm_turn(state, lang or self.names.reader.parse(message).language), "openai"
            except Exception as exc:  # provider error or timeout: the offline path answers and says so
                log.warning("LLM call failed, falling back to the offline model: %s", for_log(exc, self._secrets))
                return self._offline(message, turns, lang), f"offline (fallback: {failure(exc)})"
        if self.llm_reader is not None:  # read by the LLM, answered by the spine; offline when it cannot read
            turn = self._offline(message, turns, lang, self.llm_reader)
            if turn.fallback is not None:
                log.warning("LLM reader failed, the offline reader read the message: %s", turn.fallback)
            return turn, "openai" if turn.fallback is None else f"offline (fallback: {turn.fallback})"
        backend = f"offline (fallback: {self.llm_error[:120]})" if self.llm_error else "offline"
        return self._offline(message, turns, lang), backend

    def stream(self, message: str, session_id: str | None = None, *, create: bool = False,
               history: list[HistoryTurn] | None = None, owner: str | None = None,
               request_id: str | None = None, lang: Language | None = None,
               workload: Workload | None = None, detail: Detail = "full") -> Iterator[StreamEvent]:
        """The turn runs in its own thread and is stored whether or not the consumer reads to the end; closing
        this iterator early (a dropped connection) stops the stream at its next event and stores the turn so far
        with stopped=True."""
        self._check(message)
        events: queue.Queue[StreamEvent | BaseException | None] = queue.Queue()
        stop = threading.Event()
        worker = threading.Thread(target=self._stream_turn, name="gpu-advisor-turn", daemon=True,
                                  args=(events, stop, message, session_id, create, history, owner, request_id, lang,
                                        workload, detail))
        worker.start()
        try:
            while (item := events.get()) is not None:
                if isinstance(item, BaseException):
                    raise item
                yield item
        finally:
            stop.set()

    def _stream_turn(self, events: queue.Queue[StreamEvent | BaseException | None], stop: threading.Event,
                     message: str, session_id: str | None, create: bool, history: list[HistoryTurn] | None,
                     owner: str | None, request_id: str | None, lang: Language | None,
                     workload: Workload | None = None, detail: Detail = "full") -> None:
        try:
            own = self._owner(session_id, owner)
            digest = _digest(message, workload) if request_id else None
            with self.db.lock(self._lock_key(session_id, own, request_id)):
                sid, done = self._begin(session_id, create, own, request_id, digest)
                if done is not None:
                    events.put(StreamEvent(type="final", data=self._stored(done, detail).model_dump()))
                    return
                turns = self._history(sid, own, history)
                if self.llm_agent is not None and workload is None:
                    turn, backend, text = self._stream_llm(message, turns, lang, events, stop)
                else:
                    turn, backend = self._turn(message, turns, lang, workload)
                    text = _emit(turn, events, stop)
                result = self._result(sid, message, turn, backend)
                if stop.is_set() and text != result.answer_markdown:
                    result = result.model_copy(update={"answer_markdown": text})
                self._record(sid, own, message, result, turn.workload, request_id, stopped=stop.is_set(),
                             digest=digest)
                sent = result if detail == "full" else compact.result(result)
                events.put(StreamEvent(type="final", data=sent.model_dump()))
        except BaseException as exc:  # re-raised in the consumer's thread
            events.put(exc)
        finally:
            events.put(None)

    def _stream_llm(self, message: str, turns: list[HistoryTurn], lang: Language | None,
                    events: queue.Queue[StreamEvent | BaseException | None],
                    stop: threading.Event) -> tuple[Turn, str, str]:
        """(the turn, the backend, the streamed text); stops early when `stop` is set."""
        from service.assistant.llm_turn import llm_turn, to_messages
        from service.assistant.prose import stream_events

        inputs: dict[str, Any] = {"messages": to_messages(turns, message)}
        state: dict[str, Any] = inputs
        text: list[str] = []
        answer_lang = lang or self.names.reader.parse(message).language
        try:
            for mode, chunk in self.llm_agent.stream(inputs, stream_mode=["messages", "updates", "values"]):
                if mode == "values":
                    state = chunk
                    continue
                for event in stream_events(mode, chunk):
                    text.append(event.text if event.type == "token" else "")
                    events.put(event)
                if stop.is_set():
                    break
        except Exception as exc:
            log.warning("LLM stream failed, falling back to the offline model: %s", for_log(exc, self._secrets))
            events.put(StreamEvent(type="error", text=self.phrases(answer_lang)["fallback"].lstrip("> ")))
            turn = self._offline(message, turns, lang)
            return turn, f"offline (fallback: {failure(exc)})", turn.text
        return llm_turn(state, answer_lang), "openai", "".join(text)

    def _result(self, sid: str, message: str, turn: Turn, backend: str) -> AskResult:
        lang: Language = "zh" if turn.language == "zh" else "en"
        text = turn.text
        if backend.startswith("offline (fallback"):  # a fixed phrase: the reason stays in `backend` and the log
            key = "reader_fallback" if turn.fallback is not None else "fallback"  # who stood in: reader or model
            text = self.phrases(lang)[key] + "\n\n" + text
        answer = turn.answer
        cites = [Citation(id=p.id, title=p.title, source=p.source, url=citation_url(p.model_dump()))
                 for p in turn.citations]
        arts = [answer.public()] if answer is not None else []
        return AskResult(
            session_id=sid, answer_markdown=text, language=lang, intent=turn.type,
            answer=answer, **alias_fields(answer), reading=turn.reading.model_dump(), slots=turn.slots,
            workload=workload_of(answer), recommendation=recommendation_of(answer), citations=cites,
            backend=backend, documents=documents_of(answer),
            prose_check=prose_check(text, [*arts, *(p.model_dump() for p in turn.citations)], self.known_instances),
        )


def _refuse_reuse(done: tuple[str, TurnRecord] | None, session_id: str | None, request_id: str,
                  digest: str | None) -> None:
    """The stored turn of this request id, if any, must be this request's: the same session and the same body."""
    if done is None:
        return
    if session_id not in (None, done[0]):
        raise IdempotencyConflictError(request_id, "in another session")
    if digest and done[1].request_hash and digest != done[1].request_hash:
        raise IdempotencyConflictError(request_id, "with another message or workload")


def _digest(message: str, workload: Workload | None) -> str:
    return request_digest(message, workload.model_dump(mode="json", exclude_none=True) if workload else None)


def conversation(turns: list[HistoryTurn]) -> Conversation:
    """What the earlier turns leave for the next: the latest question (its stored arguments, else its type) and
    the user messages."""
    prev: Previous | None = None
    for t in reversed(turns):
        if t.workload:
            prev = previous_of(t.workload, t.intent)
            break
        if t.intent:
            prev = previous_of(None, t.intent)
            break
    return Conversation(prev=prev, user_texts=tuple(t.user for t in turns))


def _emit(turn: Turn, events: queue.Queue[StreamEvent | BaseException | None], stop: threading.Event) -> str:
    """The offline turn as stream events: the question type's tool call, then the text a line at a time; returns
    what was sent before a stop."""
    from service.questions.registry import BY_NAME

    module = BY_NAME.get(turn.type)
    if module is not None and module.tool and turn.args is not None:
        events.put(StreamEvent(type="tool", name=module.tool, data={"args": turn.args}))
    sent: list[str] = []
    for line in turn.text.splitlines(keepends=True):
        if stop.is_set():
            break
        events.put(StreamEvent(type="token", text=line))
        sent.append(line)
    return "".join(sent)


def build_assistant(settings: Settings | None = None, *, catalog: Catalog | None = None,
                    retriever_factory: Any | None = None) -> Assistant:
    return Assistant(settings, catalog=catalog, retriever_factory=retriever_factory)
