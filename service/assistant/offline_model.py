"""The offline planner model: a deterministic BaseChatModel that reads the message into a workload, calls the
same tools an LLM would, and writes the answer from the templates in prompts/. No key, no network."""

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
from pydantic import ValidationError

from service.assistant import answer
from service.assistant.intents import render
from service.assistant.intents.route import intent_call, previous_call, question_type
from service.assistant.prompts import phrases
from service.catalog.loader import Catalog
from service.catalog.queries import gpu_index, model_index, normalize
from service.lexicon import language_of
from service.reader import ParsedMessage, merge_slots, parse_message
from service.workload import Workload

# Tools whose arguments are the turn's workload (the question-type tools add their subject and `question`).
WORKLOAD_TOOLS = ("plan_training", "compare_clouds", "generate_request_document", "generate_launch_bundle",
                  "check_feasibility", "find_min_gpus", "compare_options", "estimate_savings")
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


class OfflinePlannerModel(BaseChatModel):
    model_aliases: dict[str, str]
    gpu_aliases: dict[str, str]
    instance_names: dict[str, str]
    model_kinds: dict[str, str]
    prompts_dir: Path

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
    def _llm_type(self) -> str:
        return "gpu-advisor-offline"

    def bind_tools(self, tools: Any, **kwargs: Any) -> OfflinePlannerModel:
        return self  # it knows the tools by name

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
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
            return AIMessage(content=self.compose(human, results, lang))
        return self.plan_calls(human, messages[:last], lang)

    # -- first step: which tools to call ------------------------------------------------------------
    def plan_calls(self, text: str, history: Sequence[BaseMessage], answer_lang: str | None = None) -> AIMessage:
        parsed = parse_message(text, self.model_aliases, self.gpu_aliases)
        lang = answer_lang or parsed.language
        last = previous_call(history, WORKLOAD_TOOLS)
        prev = (last.workload if last is not None else None) or self.workload_from_texts(history)
        intent = question_type(parsed, last)
        asks = intent in ("feasibility", "min_gpus", "compare", "savings")
        if asks and not parsed.has_workload and prev is not None:
            parsed = replace(parsed, slots={**parsed.question_slots, **parsed.slots}, has_workload=True)
        ph = phrases(self.prompts_dir, lang)
        calls: list[dict[str, Any]] = []
        if parsed.has_workload or (parsed.wants_documents and prev is not None):
            slots = merge_slots(prev, parsed) if prev is not None else dict(parsed.slots)
            if not slots.get("model") and not slots.get("params_b"):
                return AIMessage(content=self._need_model(lang, parsed))
            if "method" not in parsed.slots and prev is None and self._kind(slots) in ("encoder", "vision_transformer",
                                                                                    "cnn"):
                slots["method"] = "full"  # encoders, ViTs and CNNs are fine-tuned in full unless told otherwise
            routed = intent_call(intent, slots, parsed, last, text) if asks and intent else None
            if routed is not None and not parsed.wants_documents:
                calls.append(_call(*routed))
                calls.append(_call("search_knowledge", {"query": citation_query(slots, lang), "k": 3, "lang": lang}))
                return AIMessage(content="", tool_calls=calls)
            calls.append(_call("plan_training", slots))
            names = {"request_document": "generate_request_document", "launch_bundle": "generate_launch_bundle"}
            calls += [_call(names[d], {**slots, "lang": lang}) for d in parsed.wants_documents]
            calls.append(_call("search_knowledge", {"query": citation_query(slots, lang), "k": 3, "lang": lang}))
        elif parsed.wants_documents:
            return AIMessage(content=ph["need_workload_for_doc"])
        else:
            calls.append(_call("search_knowledge", {"query": text, "k": 4, "lang": lang}))
            calls += [_call("lookup_catalog", {"name": n}) for n in self.mentioned_names(text)[:3]]
        return AIMessage(content="", tool_calls=calls)

    def workload_from_texts(self, history: Sequence[BaseMessage]) -> Workload | None:
        """Without an earlier tool call (a stateless client's plain-text history), fold the earlier user messages:
        each one that describes or changes a job updates the workload, as the turns did when they were asked."""
        prev: Workload | None = None
        for msg in history:
            if not isinstance(msg, HumanMessage):
                continue
            parsed = parse_message(str(msg.content), self.model_aliases, self.gpu_aliases)
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

    def _need_model(self, lang: str, parsed: ParsedMessage) -> str:
        notes = "".join(f"> {n}\n\n" for n in parsed.unparsed_notes)
        if lang == "zh":
            return notes + "请告诉我要训练的模型（如 Qwen2-7B）或参数量（如 7B），我再给出配置。"
        return notes + "Which model (e.g. Qwen2-7B) or size (e.g. 7B) do you want to train? Then I can size it."

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

    # -- second step: write the answer from the tool artifacts --------------------------------------
    def compose(self, human: str, results: Sequence[ToolMessage], answer_lang: str | None = None) -> str:
        notes = parse_message(human, self.model_aliases, self.gpu_aliases).unparsed_notes
        body = self._compose(human, results, answer_lang)
        return "\n".join(f"> {n}" for n in notes) + "\n\n" + body if notes else body

    def _compose(self, human: str, results: Sequence[ToolMessage], answer_lang: str | None = None) -> str:
        lang = answer_lang or language_of(human)
        ph = phrases(self.prompts_dir, lang)
        arts: dict[str, list[dict[str, Any]]] = {}
        for m in results:
            art = m.artifact if isinstance(m.artifact, dict) else {}
            arts.setdefault(m.name or "", []).append(art)
        passages = [p for a in arts.get("search_knowledge", []) for p in a.get("passages", [])]
        intent_text = self._compose_intent(arts, ph, passages)
        if intent_text is not None:
            return intent_text
        plan_art = next(iter(arts.get("plan_training", [])), None)
        if plan_art is not None:
            if "error" in plan_art:
                err = plan_art["error"]
                return str(ph["error"].format(message=err["message"], fix=err.get("fix", "")))
            text = answer.render_plan(plan_art, lang, ph, passages)
            for doc in arts.get("generate_request_document", []):
                if "markdown" in doc:
                    text += "\n\n" + ph["doc_ready"].format(document=doc["markdown"])
            for bundle in arts.get("generate_launch_bundle", []):
                if "files" in bundle:
                    files = bundle["files"]
                    first = next(iter(files), "")
                    preview = f"```yaml\n{files.get('train.yaml', files.get(first, ''))}\n```"
                    text += "\n\n" + ph["bundle_ready"].format(files=", ".join(files), preview=preview)
            return text
        facts = [answer.gpu_fact(a["gpu"], ph) for a in arts.get("lookup_catalog", []) if "gpu" in a]
        facts += [answer.instance_fact(a["instance"], ph) for a in arts.get("lookup_catalog", []) if "instance" in a]
        return answer.render_knowledge(passages, facts, ph)

    def _compose_intent(self, arts: dict[str, list[dict[str, Any]]], ph: dict[str, Any],
                        passages: list[dict[str, Any]]) -> str | None:
        for name, draw in (("check_feasibility", None), ("find_min_gpus", render.render_min_gpus),
                           ("compare_options", render.render_compare), ("estimate_savings", render.render_savings)):
            art = next(iter(arts.get(name, [])), None)
            if art is None:
                continue
            if "error" in art:
                err = art["error"]
                return str(ph["error"].format(message=err["message"], fix=err.get("fix", "")))
            text = render.render_feasibility(art, ph, art.get("plan_pick")) if draw is None else draw(art, ph)
            return "\n".join([text, "", *answer.render_citations(passages, ph)]).strip()
        return None
