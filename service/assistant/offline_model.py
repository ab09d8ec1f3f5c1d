"""The offline planner model: a deterministic BaseChatModel that reads the message (service/reader), routes it
through the question-type registry to the same tools an LLM would call, and writes the answer from the tool
artifacts with the phrases in prompts/. No key, no network.

The reading (type, confidence, the other reading, the slots) rides on the tool-calling AIMessage's
additional_kwargs, so the answer can say what else the question could mean and AskResult can carry it."""

from __future__ import annotations

import re
import uuid
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import PrivateAttr, ValidationError

from service.assistant import answer
from service.assistant.compose import compose_answer
from service.assistant.intents.base import Ask, Missing, Previous
from service.assistant.intents.routing import subject_gpu
from service.assistant.previous import previous_call
from service.assistant.prompts import phrases
from service.assistant.registry import REGISTRY
from service.catalog.loader import Catalog
from service.catalog.queries import gpu_index, model_index, normalize
from service.lexicon import language_of, lexicon
from service.reader import merge_slots
from service.reader.read import Reader, Reading
from service.workload import Workload

NEEDS_MODEL = ("plan", "feasibility", "min_gpus", "savings")  # the others decide in their own routing
_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9.\-]*")
_METHOD_WORDS = {
    "zh": {"full": "全参微调 显存 ZeRO-3", "pretrain": "预训练 多机 RDMA", "freeze": "冻结微调 显存",
           "lora": "LoRA 显存", "qlora": "QLoRA 4-bit 显存"},
    "en": {"full": "full fine-tune memory ZeRO-3", "pretrain": "pre-training multi-node RDMA",
           "freeze": "freeze tuning memory", "lora": "LoRA memory", "qlora": "QLoRA 4-bit memory"},
}


def citation_query(slots: dict[str, Any], lang: str) -> str:
    """A retrieval query about what the recommendation rests on: the method's memory and the GPU choice."""
    words = _METHOD_WORDS["zh" if lang == "zh" else "en"]
    method = str(slots.get("method") or "lora")
    size = f"{slots['params_b']:g}B" if slots.get("params_b") else str(slots.get("model") or "")
    tail = "按场景选GPU 费用 计费" if lang == "zh" else "choosing the GPU by scenario cost billing"
    return f"{size} {words.get(method, '')} {tail}".strip()


def _call(name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "args": args, "id": f"call_{uuid.uuid4().hex[:12]}", "type": "tool_call"}


def _reading_kwargs(reading: Reading, **more: Any) -> dict[str, Any]:
    return {"reading": {**reading.as_dict(), "slots": reading.slots, **more}}


class OfflinePlannerModel(BaseChatModel):
    model_aliases: dict[str, str]
    gpu_aliases: dict[str, str]
    instance_names: dict[str, str]
    model_kinds: dict[str, str]
    prompts_dir: Path
    _reader: Reader | None = PrivateAttr(default=None)

    @classmethod
    def from_catalog(cls, catalog: Catalog, prompts_dir: Path) -> OfflinePlannerModel:
        return cls(
            model_aliases={k: m.id for k, m in model_index(catalog.models).items()},
            gpu_aliases={k: g.id for k, (g, _) in gpu_index(catalog.gpus).items()},
            instance_names={normalize(r.instance_type): r.instance_type for r in catalog.instances},
            model_kinds={m.id: m.kind for m in catalog.models},
            prompts_dir=prompts_dir,
        )

    @property
    def reader(self) -> Reader:
        if self._reader is None:
            self._reader = Reader(self.model_aliases, self.gpu_aliases)
        return self._reader

    @property
    def _llm_type(self) -> str:
        return "gpu-advisor-offline"

    def bind_tools(self, tools: Any, **kwargs: Any) -> OfflinePlannerModel:
        return self  # it knows the tools by name

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: CallbackManagerForLLMRun | None = None, **kwargs: Any) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=self.respond(messages))])

    def respond(self, messages: Sequence[BaseMessage]) -> AIMessage:
        last = max((i for i, m in enumerate(messages) if isinstance(m, HumanMessage)), default=-1)
        if last < 0:
            return AIMessage(content="")
        human = str(messages[last].content)
        asked = messages[last].additional_kwargs.get("answer_language")  # the caller's choice (a system message)
        lang = asked if asked in ("zh", "en") else None
        results = [m for m in messages[last + 1:] if isinstance(m, ToolMessage)]
        if results:
            caller = next((m for m in messages[last + 1:] if isinstance(m, AIMessage) and m.tool_calls), None)
            reading = caller.additional_kwargs.get("reading", {}) if caller is not None else {}
            notes = self.reader.parse(human).unparsed_notes
            lang = lang or language_of(human)
            return AIMessage(content=compose_answer(results, reading, notes, phrases(self.prompts_dir, lang), lang))
        return self.plan_calls(human, messages[:last], lang)

    # -- first step: which tools to call ------------------------------------------------------------
    def plan_calls(self, text: str, history: Sequence[BaseMessage], answer_lang: str | None = None) -> AIMessage:
        prev = previous_call(history)
        turns = [str(m.content) for m in history if isinstance(m, HumanMessage)][-2:]
        reading = self.reader.read(text, turns, prev.type if prev is not None else None)
        lang = answer_lang or reading.language
        ph = phrases(self.prompts_dir, lang)
        kwargs = _reading_kwargs(reading)
        parsed = reading.parsed
        if reading.type == "out_of_scope" and not parsed.wants_documents:
            return AIMessage(content=answer.render_scope(ph, lexicon().other_clouds_in(text), lang),
                             additional_kwargs=kwargs)
        if reading.type == "knowledge" and not parsed.wants_documents:
            return self._knowledge_calls(reading, text, prev, lang, kwargs)
        prev_w = (prev.workload if prev is not None else None) or self.workload_from_texts(history)
        own = {**parsed.question_slots, **parsed.slots}
        if not own and not parsed.wants_documents and prev_w is None and reading.type == "plan":
            return self._knowledge_calls(reading, text, prev, lang, kwargs)  # a plain question, no job in it
        merged = merge_slots(prev_w, replace(parsed, slots=own)) if prev_w is not None else dict(own)
        slots = {k: v for k, v in merged.items() if k in Workload.model_fields}
        if not slots.get("model") and not slots.get("params_b") and reading.type in NEEDS_MODEL:
            return AIMessage(content=self._ask("model", ph, parsed.unparsed_notes), additional_kwargs=kwargs)
        if "method" not in own and prev is None and self._kind(slots) in ("encoder", "vision_transformer", "cnn"):
            slots["method"] = "full"  # encoders, ViTs and CNNs are fine-tuned in full unless told otherwise
        qt = REGISTRY["plan"] if parsed.wants_documents else REGISTRY[reading.type]
        routed = qt.route(Ask(reading, slots, prev, text, lang))
        if isinstance(routed, Missing):
            return AIMessage(content=self._ask(routed.slot, ph, parsed.unparsed_notes), additional_kwargs=kwargs)
        if routed is None or qt.tool is None:  # a how-to with a workload in it: answered as knowledge
            kwargs = _reading_kwargs(reading, type="knowledge", confidence="unsure", alternative=reading.type)
            return self._knowledge_calls(reading, text, prev, lang, kwargs)
        args = routed if qt.name == "plan" else {**routed, "question": qt.name, "also": reading.alternative}
        calls = [_call(qt.tool, args)]
        names = {"request_document": "generate_request_document", "launch_bundle": "generate_launch_bundle"}
        calls += [_call(names[d], {**slots, "lang": lang}) for d in parsed.wants_documents]
        calls.append(_call("search_knowledge", {"query": citation_query(slots, lang), "k": 3, "lang": lang}))
        return AIMessage(content="", tool_calls=calls, additional_kwargs=kwargs)

    def _knowledge_calls(self, reading: Reading, text: str, prev: Previous | None, lang: str,
                         kwargs: dict[str, Any]) -> AIMessage:
        """A fact from the catalog when one is asked; the guide's passages; and a workload named in the question
        sized on the GPU it names (both options of 'DeepSpeed 还是 FSDP for a 30B on 16 H800')."""
        calls = []
        ask = Ask(reading, {}, prev, text, lang)
        fact = REGISTRY["knowledge"].route(ask)
        if isinstance(fact, dict):
            calls.append(_call("lookup_fact", {**fact, "question": "knowledge"}))
        calls.append(_call("search_knowledge", {"query": text, "k": 4, "lang": lang}))
        slots = {k: v for k, v in {**reading.parsed.question_slots, **reading.parsed.slots}.items()
                 if k in Workload.model_fields}
        gpu = subject_gpu(ask) if reading.parsed.subject.gpus else None
        if gpu and (slots.get("model") or slots.get("params_b")):
            count = reading.own_slots.get("gpu_count") or 1
            calls.append(_call("check_feasibility", {**{k: v for k, v in slots.items() if k not in ("gpu_include",
                                                                                                  "gpu_count")},
                                                     "gpu": gpu, "gpu_count": count, "question": "knowledge"}))
        elif not fact:
            calls += [_call("lookup_catalog", {"name": n}) for n in self.mentioned_names(text)[:2]]
        return AIMessage(content="", tool_calls=calls, additional_kwargs=kwargs)

    def _ask(self, slot: str, ph: dict[str, Any], notes: list[str]) -> str:
        """One precise question for the slot that changes the answer."""
        head = "".join(f"> {n}\n\n" for n in notes)
        return head + str(ph["ask"].get(slot, ph["ask"]["model"]))

    def workload_from_texts(self, history: Sequence[BaseMessage]) -> Workload | None:
        """Without an earlier tool call (a stateless client's plain-text history), fold the earlier user messages:
        each one that describes or changes a job updates the workload, as the turns did when they were asked."""
        prev: Workload | None = None
        for msg in history:
            if not isinstance(msg, HumanMessage):
                continue
            parsed = self.reader.parse(str(msg.content))
            if not parsed.has_workload:
                continue
            slots = merge_slots(prev, parsed) if prev is not None else dict(parsed.slots)
            if not slots.get("model") and not slots.get("params_b"):
                continue
            try:
                prev = Workload.model_validate(slots)
            except ValidationError:
                continue
        return prev

    def _kind(self, slots: dict[str, Any]) -> str | None:
        """The model's kind: from the catalog, or from the name of one outside it ('bge-small-en': encoder)."""
        name = str(slots.get("model") or "")
        kind = self.model_kinds.get(name)
        if kind is None and name:
            from service.planner.name_hints import guess_from_name

            guess = guess_from_name(name)
            kind = guess.kind if guess is not None else None
        return kind

    def mentioned_names(self, text: str) -> list[str]:
        """GPU and instance names in a question, for catalog look-ups ('A10支持FP8吗' -> A10)."""
        found: list[str] = []
        toks = [t.group(0) for t in _TOKEN.finditer(text)]
        spans = [" ".join(toks[i:i + 2]) for i in range(len(toks))] + toks
        for span in spans:
            key = normalize(span)
            hit = self.instance_names.get(key) or self.gpu_aliases.get(key)
            if hit and hit not in found and not any(hit in f for f in found):
                found.append(span if key in self.gpu_aliases else hit)
        return found
