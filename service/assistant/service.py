"""The assistant: one agent (create_agent) over the tools, with the offline planner model by default or any
OpenAI-compatible LLM; sessions persist in SQLite. The CLI, the API, Slack and the evals all call this."""

from __future__ import annotations

import logging
import re
import uuid
from collections.abc import Iterator
from typing import Any

from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, HumanMessage, ToolMessage

from service.assistant.offline_model import OfflinePlannerModel, language_of
from service.assistant.prompts import phrases, render_prompt
from service.assistant.sessions import SessionNotFoundError, SessionStore
from service.assistant.tools import ToolContext, make_tools
from service.assistant.types import AskResult, Citation, Language, SessionInfo, StreamEvent
from service.catalog.loader import Catalog, load_catalog
from service.errors import InvalidInputError
from service.settings import Settings, get_settings

log = logging.getLogger(__name__)
_INSTANCE = re.compile(r"\b[A-Za-z][A-Za-z0-9]*\.[A-Za-z0-9]*[0-9][A-Za-z0-9.\-]*\b")
_YUAN = re.compile(r"(?:¥|￥)\s*([0-9][0-9,]*(?:\.[0-9]+)?)|([0-9][0-9,]*(?:\.[0-9]+)?)\s*元")


def _money_values(obj: Any) -> Iterator[float]:
    """Every yuan figure in the artifacts: values of keys ending in _cny."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            if isinstance(k, str) and k.endswith("_cny") and isinstance(v, int | float):
                yield float(v)
            else:
                yield from _money_values(v)
    elif isinstance(obj, list | tuple):
        for v in obj:
            yield from _money_values(v)


def prose_check(text: str, artifacts: list[Any], known_instances: set[str]) -> list[str]:
    """Instance names and yuan figures in the prose that no tool artifact of this turn contains."""
    blob = repr(artifacts)
    numbers = set(_money_values(artifacts))
    flags = [f"instance {m}" for m in dict.fromkeys(_INSTANCE.findall(text))
             if m in known_instances and m not in blob]
    for m in _YUAN.finditer(text):
        if m.group(0).strip() in blob:  # quoted verbatim from an artifact (e.g. a price note)
            continue
        raw = (m.group(1) or m.group(2)).replace(",", "")
        value = float(raw)
        if not any(abs(value - n) <= max(1.0, 0.005 * n) for n in numbers):
            flags.append(f"yuan {m.group(0).strip()}")
    return flags


class Assistant:
    def __init__(self, settings: Settings | None = None, catalog: Catalog | None = None,
                 llm: Any | None = None, retriever_factory: Any | None = None) -> None:
        from langchain.agents import create_agent

        from service.assistant.checkpoints import open_checkpointer

        self.settings = s = settings or get_settings()
        self.catalog = catalog or load_catalog(s.knowledge_dir, s.catalog_overlay_dir, s.prices_file)
        self._retriever: Any = None
        self._retriever_factory = retriever_factory if retriever_factory is not None else self._default_retriever
        ctx = ToolContext(self.catalog, s.price_max_age_days, self.retriever)
        tools = make_tools(ctx)
        s.data_dir.mkdir(parents=True, exist_ok=True)
        db = s.data_dir / "sessions.sqlite"
        self.sessions = SessionStore(db)
        self.checkpointer, self.checkpoint_store = open_checkpointer(s.database_url, db)
        self.offline_model = OfflinePlannerModel.from_catalog(self.catalog, s.prompts_dir)
        self.agent: Any = create_agent(self.offline_model, tools, system_prompt=self._system("zh or en"),
                                  checkpointer=self.checkpointer)
        self.llm_agent: Any = None
        self.llm_error = ""
        if llm is None and s.llm == "openai":
            try:
                from service.assistant.llm import build_llm

                llm = build_llm(s)
            except Exception as exc:  # a broken provider setting degrades to the offline model
                self.llm_error = str(exc)
                log.warning("LLM backend unavailable, using the offline model: %s", exc)
        if llm is not None:
            self.llm_agent = create_agent(llm, tools, system_prompt=self._system("follow the user"),
                                          checkpointer=self.checkpointer)
        self.known_instances = {r.instance_type for r in self.catalog.instances}

    def _system(self, hint: str) -> str:
        return render_prompt(self.settings.prompts_dir, "system", language_hint=hint)

    def _default_retriever(self) -> Any:
        from service.retrieval.config import RetrievalConfig
        from service.retrieval.hybrid import Retriever

        return Retriever(RetrievalConfig.from_settings(self.settings), refresh=False)

    def retriever(self) -> Any:
        if self._retriever is None:
            self._retriever = self._retriever_factory()
        return self._retriever

    # -- sessions ----------------------------------------------------------------------------------
    def has_session(self, session_id: str) -> bool:
        return self.sessions.exists(session_id)

    def list_sessions(self) -> list[SessionInfo]:
        return self.sessions.list()

    def rename_session(self, session_id: str, title: str) -> SessionInfo:
        return self.sessions.rename(session_id, title)

    def delete_session(self, session_id: str) -> None:
        self.sessions.delete(session_id)
        self.checkpointer.delete_thread(session_id)

    def _session(self, message: str, session_id: str | None, create: bool = False) -> str:
        if not message or not message.strip():
            raise InvalidInputError("The message is empty.", "Ask a question or describe a training job.")
        limit = self.settings.max_message_chars
        if len(message) > limit:
            raise InvalidInputError(f"The message has {len(message)} characters; the limit is {limit}.",
                                    "Shorten it or split it into several messages.")
        if session_id is not None and not create and not self.sessions.exists(session_id):
            raise SessionNotFoundError(session_id)
        return session_id or uuid.uuid4().hex

    # -- asking ------------------------------------------------------------------------------------
    def ask(self, message: str, session_id: str | None = None, *, create: bool = False,
            lang: Language | None = None) -> AskResult:
        """Answer one message. `create=True` starts a session under the caller's id when it is new; `lang` answers
        in that language whatever the message's (a client's system message asked for it)."""
        sid = self._session(message, session_id, create)
        backend, state = self._run(message, sid, lang)
        self.sessions.touch(sid, message)
        return self._result(sid, message, state, backend, lang)

    def _run(self, message: str, sid: str, lang: Language | None = None) -> tuple[str, dict[str, Any]]:
        config = {"configurable": {"thread_id": sid}}
        inputs = {"messages": [human_message(message, lang)]}
        if self.llm_agent is not None:
            try:
                return "openai", self.llm_agent.invoke(inputs, config)
            except Exception as exc:  # provider error or timeout: the offline model answers and says so
                log.warning("LLM call failed, falling back to the offline model: %s", exc)
                return f"offline (fallback: {type(exc).__name__}: {str(exc)[:120]})", self.agent.invoke(inputs, config)
        backend = f"offline (fallback: {self.llm_error[:120]})" if self.llm_error else "offline"
        return backend, self.agent.invoke(inputs, config)

    def stream(self, message: str, session_id: str | None = None, *, create: bool = False,
               lang: Language | None = None) -> Iterator[StreamEvent]:
        sid = self._session(message, session_id, create)
        config = {"configurable": {"thread_id": sid}}
        agent = self.llm_agent or self.agent
        backend = "openai" if self.llm_agent is not None else "offline"
        try:
            for mode, chunk in agent.stream({"messages": [human_message(message, lang)]}, config,
                                            stream_mode=["messages", "updates"]):
                yield from self._events(mode, chunk)
        except Exception as exc:
            if self.llm_agent is None:
                raise
            backend = f"offline (fallback: {type(exc).__name__})"
            yield StreamEvent(type="error", text=f"LLM unavailable, the offline model answers: {exc}")
            self.agent.invoke({"messages": [human_message(message, lang)]}, config)
        state = agent.get_state(config).values if backend == "openai" else self.agent.get_state(config).values
        self.sessions.touch(sid, message)
        yield StreamEvent(type="final", data=self._result(sid, message, state, backend, lang).model_dump())

    def _events(self, mode: str, chunk: Any) -> Iterator[StreamEvent]:
        if mode == "messages":
            msg, meta = chunk
            if meta.get("langgraph_node") == "model" and isinstance(msg, AIMessageChunk | AIMessage) and msg.content:
                for line in str(msg.content).splitlines(keepends=True):
                    yield StreamEvent(type="token", text=line)
        elif mode == "updates":
            for node, update in chunk.items():
                for m in (update or {}).get("messages", []):
                    if node == "model" and isinstance(m, AIMessage):
                        for call in m.tool_calls:
                            yield StreamEvent(type="tool", name=call["name"], data={"args": call["args"]})
                    elif isinstance(m, ToolMessage):
                        yield StreamEvent(type="tool", name=m.name or "", text=str(m.content)[:300])

    def _result(self, sid: str, message: str, state: dict[str, Any], backend: str,
                answer_lang: Language | None = None) -> AskResult:
        messages: list[BaseMessage] = state["messages"]
        last = max(i for i, m in enumerate(messages) if isinstance(m, HumanMessage))
        turn = messages[last + 1:]
        tools = [m for m in turn if isinstance(m, ToolMessage)]
        final = next((m for m in reversed(turn) if isinstance(m, AIMessage) and not m.tool_calls), None)
        text = str(final.content) if final is not None else ""
        arts = [m.artifact for m in tools if isinstance(m.artifact, dict)]
        plan = next((m.artifact for m in reversed(tools) if m.name in ("plan_training", "compare_clouds")
                     and isinstance(m.artifact, dict) and "error" not in m.artifact), None)
        if plan is not None and "plan" in plan:
            plan = plan["plan"]
        docs: dict[str, Any] = {}
        cites: list[Citation] = []
        for m in tools:
            art = m.artifact if isinstance(m.artifact, dict) else {}
            if m.name == "generate_request_document" and "markdown" in art:
                docs["request_document"] = art["markdown"]
            if m.name == "generate_launch_bundle" and "files" in art:
                docs["launch_bundle"] = art["files"]
            for p in art.get("passages", []):
                cites.append(Citation(id=p["id"], title=p.get("title", ""), source=p.get("source", ""),
                                      url=citation_url(p)))
        lang: Language = answer_lang or ("zh" if language_of(message) == "zh" else "en")
        if backend.startswith("offline (fallback"):
            reason = backend.split("fallback: ", 1)[1].rstrip(")")
            text = phrases(self.settings.prompts_dir, lang)["fallback"].format(reason=reason) + "\n\n" + text
        return AskResult(
            session_id=sid, answer_markdown=text, language=lang,
            workload=plan["workload"] if plan else None, recommendation=plan, citations=cites,
            backend=backend, documents=docs, prose_check=prose_check(text, arts, self.known_instances),
        )


def human_message(message: str, lang: Language | None) -> HumanMessage:
    """The user's message; a requested answer language rides along for the offline model."""
    return HumanMessage(message, additional_kwargs={"answer_language": lang} if lang else {})


def citation_url(passage: dict[str, Any]) -> str:
    """Where a person reads the cited section: the API's /knowledge route, or the passage's external link."""
    source, _, anchor = str(passage["id"]).partition("#")
    if source.startswith(("guide/", "catalog/")) and source.endswith(".md"):
        return f"/knowledge/{source}" + (f"#{anchor}" if anchor else "")
    return str(passage.get("ref", ""))


def build_assistant(settings: Settings | None = None, *, catalog: Catalog | None = None,
                    retriever_factory: Any | None = None) -> Assistant:
    return Assistant(settings, catalog=catalog, retriever_factory=retriever_factory)
