"""The straight path: one function answers one message, read -> route -> run -> render. No agent, no tool
messages: the message is parsed once and its language detected once.

    answer_message(ctx, names, phrases_of, message, conversation, lang, reader=None) -> Turn

`reader` is the FrameReader (service/reader/read.py) that reads the message: the offline reader by default
(`names.reader`), or the LLM reader (service/reader/llm_reader.py). Whichever reads, the same routes, engine and
renderers answer. A reader that cannot read the message (ReaderUnavailable: its provider failed, timed out or
answered off the schema) leaves it to the offline reader for that turn; the Turn says so (`fallback`).

`Conversation` is what earlier turns left: the last question (type, routed arguments, workload) and the earlier
user messages (a stateless client's history: follow-ups are folded from them when no question is stored).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from service.catalog.loader import Catalog
from service.catalog.queries import gpu_index, model_index, normalize
from service.catalog.unsized import unsized_index
from service.catalog.user_prices import UserPrice
from service.checks.invariants import log_violations
from service.errors import AdvisorError, InvalidInputError, UnknownModelError, validation_line
from service.frame import Frame
from service.questions import knowledge
from service.questions.base import EXTRA_ARGS, Ask, Context, Missing, Phrases, Previous
from service.questions.carry import continued
from service.questions.clarify import ClarifyAnswer
from service.questions.compose import compose, error_text, unique_passages, with_notes
from service.questions.diagnose_serving import explains_observation, wants_serving_diagnosis
from service.questions.parts import PassageRef
from service.questions.precision import without_fp8
from service.questions.registry import BY_NAME, WORKLOAD_TYPES, AnyAnswer, decide
from service.questions.texts import carried_line
from service.questions.user_price import priced_context
from service.questions.view import frame_of, workload_fields
from service.reader import catalog_asks
from service.reader.frame_build import CatalogNames
from service.reader.invisible import visible
from service.reader.read import FrameReader, Reader, ReaderUnavailable, Reading
from service.retrieval.passages import first_sentence, passage_body
from service.workload import Workload

FOLD_TURNS = 6  # earlier user messages a stateless conversation's last question is read from
# Types whose question may be a server's run to explain, answered by `diagnose` (service/questions/diagnose_serving.py)
REDIAGNOSED = frozenset({"serving", "compare", "capacity", "feasibility", "knowledge"})
_METHOD_WORDS = {
    "zh": {"full": "全参微调 显存 ZeRO-3", "pretrain": "预训练 多机 RDMA", "freeze": "冻结微调 显存",
           "lora": "LoRA 显存", "qlora": "QLoRA 4-bit 显存"},
    "en": {"full": "full fine-tune memory ZeRO-3", "pretrain": "pre-training multi-node RDMA",
           "freeze": "freeze tuning memory", "lora": "LoRA memory", "qlora": "QLoRA 4-bit memory"},
}


@dataclass(frozen=True)
class Conversation:
    """What the earlier turns left for this one."""

    prev: Previous | None = None
    user_texts: tuple[str, ...] = ()


class ReadingInfo(BaseModel):
    """How the message was read (AskResult.reading)."""

    type: str
    confidence: str
    alternative: str | None = None
    scores: dict[str, float] = Field(default_factory=dict)


class Turn(BaseModel):
    """One answered message: its reading, the question type answered, the routed arguments (what a follow-up
    continues), the typed answer, the text, the citations and the language."""

    type: str
    reading: ReadingInfo
    slots: dict[str, object] = Field(default_factory=dict, description="what the words state (the question schema)")
    args: dict[str, object] | None = Field(default=None, description="the routed arguments, with `question`")
    answer: AnyAnswer | None = None
    text: str
    citations: list[PassageRef] = Field(default_factory=list)
    language: str
    error: dict[str, str] | None = None
    reader: str = Field(default="offline", description="the reader that read the message: offline | llm")
    fallback: str | None = Field(default=None, description="why the chosen reader did not read it (the offline "
                                 "reader did)")
    frame: Frame | None = Field(default=None, description="the question's frame (the conversation's, when the "
                                "message continued the last question): what a follow-up continues")

    @property
    def workload(self) -> dict[str, object] | None:
        """The routed arguments with the question's frame (stored, so the next turn continues from them)."""
        if self.args is None and self.frame is None:
            return None
        args = {k: v for k, v in (self.args or {}).items() if k not in ("lang", "documents")}
        if self.frame is not None:
            args["frame"] = self.frame.model_dump(mode="json", exclude_defaults=True)
        if self.args is None or self.type not in WORKLOAD_TYPES:
            args.setdefault("question", self.type)
        return args


def citation_query(slots: dict[str, object], lang: str) -> str:
    """A retrieval query about what the recommendation rests on: the method's memory and the GPU choice."""
    words = _METHOD_WORDS["zh" if lang == "zh" else "en"]
    method = str(slots.get("method") or "lora")
    size = f"{slots['params_b']:g}B" if slots.get("params_b") else str(slots.get("model") or "")
    tail = "按场景选GPU 费用 计费" if lang == "zh" else "choosing the GPU by scenario cost billing"
    return f"{size} {words.get(method, '')} {tail}".strip()


class Names:
    """The catalog's names as the reader and the look-ups need them (built once per catalog)."""

    def __init__(self, catalog: Catalog) -> None:
        self.models = {k: m.id for k, m in model_index(catalog.models).items()}
        # releases known but not sized ('DeepSeek-V4-Flash'): read as themselves, refused with the reason downstream
        self.models.update({k: r.id for k, r in unsized_index().items() if k not in self.models})
        self.gpus = {k: g.id for k, (g, _) in gpu_index(catalog.gpus).items()}
        self.instances = {normalize(r.instance_type): r.instance_type for r in catalog.instances}
        self.instance_gpus = {r.instance_type: (r.gpu, r.gpu_count) for r in catalog.instances}
        self.kinds: dict[str, str] = {m.id: m.kind for m in catalog.models}
        self.sizes: dict[str, float] = {m.id: m.params_published_b for m in catalog.models}
        families = frozenset({r.family.lower() for r in catalog.instances} |
                             {r.instance_type.lower() for r in catalog.instances} |
                             {f.family.lower() for f in catalog.families})  # named only ('PNV5是什么卡')
        spelled = {f.family.lower(): f.family for f in catalog.families} | {r.family.lower(): r.family
                                                                            for r in catalog.instances}
        self.reader = Reader(self.models, self.gpus, decide,
                             catalog=CatalogNames(families, dict(self.instances), spelled))

    def mentioned(self, text: str) -> list[str]:
        """GPU and instance names in a question, for catalog look-ups ('A10支持FP8吗' -> A10)."""
        return catalog_asks.gpus_and_instances(text, self.instances, self.gpus)

    def members(self, family: str) -> list[str]:
        """The catalog's models of a family named without a size ('LLaVA' -> [LLaVA-1.5-7B], 'BLOOM' -> [BLOOM-560M,
        BLOOM-7B1]): the ids whose name starts with it, smallest first."""
        key = normalize(family)
        if len(key) < 3:
            return []
        ids = sorted({i for i in self.models.values() if normalize(i).startswith(key) and i in self.sizes},
                     key=lambda i: self.sizes[i])
        return ids

    def kind(self, name: str) -> str | None:
        """The model's kind: from the catalog, or from the name of one outside it ('bge-small-en': encoder)."""
        kind: str | None = self.kinds.get(name)
        if kind is None and name:
            from service.planner.name_hints import guess_from_name

            guess = guess_from_name(name)
            kind = guess.kind if guess is not None else None
        return kind


def previous_of(args: dict[str, object] | None, intent: str | None) -> Previous | None:
    """The earlier turn's question from what it stored: its routed arguments (with `question` and its `frame`) and
    its type."""
    if not args:
        return Previous(intent, {}, None) if intent else None
    fields = {k: v for k, v in args.items() if k not in EXTRA_ARGS and k in Workload.model_fields}
    try:
        w: Workload | None = Workload.model_validate(fields)
    except ValidationError:
        w = None
    frame: Frame | None = None
    if isinstance(args.get("frame"), dict):
        try:
            frame = Frame.model_validate(args["frame"])
        except ValidationError:
            frame = None
    rest = {k: v for k, v in args.items() if k != "frame"}
    return Previous(str(args.get("question") or intent or "plan"), rest, w, frame)


def frame_from_texts(reader: Reader, texts: Sequence[str]) -> Frame | None:
    """Without a stored question (a stateless client's plain-text history), the last question the earlier user
    messages asked: each read in its turn, a continuation on top of the question before it."""
    frame: Frame | None = None
    prev_type: str | None = None
    recent = list(texts[-FOLD_TURNS:])
    for i, text in enumerate(recent):
        r = reader.read(text, recent[max(0, i - reader.context_turns):i], prev_type)
        frame = continued(r.frame, frame, r.bare)[0] if frame is not None else r.frame
        prev_type = r.type
    return frame


@dataclass
class _Plan:
    """What routing decided: the type answered, its arguments or the slot to ask for, and what the question
    carried from the last one."""

    type: str
    args: BaseModel | None = None
    missing: str | None = None
    name: str | None = None
    confidence: str | None = None
    alternative: str | None = None
    frame: Frame | None = None
    carried: tuple[str, ...] = ()
    family: str | None = None  # 'LLaVA→LLaVA-1.5-7B': a family read as its one catalog member, said


def _compat(frame: Frame, text: str, names: Names) -> tuple[dict[str, object], dict[str, object]]:
    """What the diagnosis's route still reads beside the frame: the workload slots and the names mentioned."""
    mentioned = names.mentioned(text)
    named = [n for n in mentioned if n in names.instance_gpus]
    extra = {"mentioned": mentioned, "instances": named, "instance_gpus": [names.instance_gpus[n] for n in named]}
    return workload_fields(frame), extra


def _with(args: BaseModel, **values: Any) -> BaseModel:
    """The routed arguments with the fields they take set (`question`, `also`)."""
    update = {k: v for k, v in values.items() if k in type(args).model_fields and v is not None}
    return args.model_copy(update=update) if update else args


def _route(reading: Reading, conv: Conversation, names: Names, lang: str, text: str) -> _Plan:
    prev = conv.prev
    prev_frame = prev.frame if prev is not None else None
    if prev_frame is None and prev is not None and prev.workload is not None:
        prev_frame = frame_of(prev.workload)  # a turn stored before frames were: its workload
    if prev_frame is None and conv.user_texts and reading.frame.continues:
        prev_frame = frame_from_texts(names.reader, conv.user_texts)
    frame, carried = continued(reading.frame, prev_frame, reading.bare)
    frame, family = _family_member(frame, names)
    qtype = decide(frame)
    slots, extra = _compat(frame, text, names)
    ask = Ask(frame, prev, lang, reading, slots, text, extra)
    if qtype in REDIAGNOSED and (wants_serving_diagnosis(ask) or (qtype == "serving" and explains_observation(ask))):
        qtype = "diagnose"  # '9 tokens/s 正常吗', 'TP8 vs TP4', 'why does FP8 run on A100': a server's run
    module = BY_NAME[qtype]
    routed = module.route(ask)
    if isinstance(routed, Missing):
        name, slot = routed.name, routed.slot
        if slot == "model_size" and name and (members := names.members(name)):
            slot, name = "model_which", name + "|" + ("、" if lang == "zh" else ", ").join(members[:4])
        return _Plan(module.name, missing=slot, name=name, frame=frame, carried=carried)
    if routed is None:  # a how-to with a workload in it: answered as knowledge
        routed = BY_NAME["knowledge"].route(ask)
        assert isinstance(routed, BaseModel)
        return _Plan("knowledge", routed, confidence="unsure", alternative=qtype, frame=frame, carried=carried)
    args = routed if isinstance(routed, BaseModel) else module.args.model_validate(routed)  # type: ignore[union-attr]
    args = _with(args, question=module.name, also=reading.alternative, asked=frame.asked)
    if isinstance(args, Workload) and "method" not in args.model_fields_set and names.kind(
            str(args.model or "")) in ("encoder", "vision_transformer", "cnn"):
        args = args.model_copy(update={"method": "full"})  # encoders, ViTs and CNNs are fine-tuned in full
    return _Plan(module.name, args, frame=frame, carried=carried, family=family)


def _family_member(frame: Frame, names: Names) -> tuple[Frame, str | None]:
    """A model named by its family alone ('LLaVA') that the catalog has one member of: that member, said. Several
    members ('BLOOM'): left for the route to ask which, with the sizes the catalog knows."""
    s = frame.setup
    ref = s.models[0] if s.models else None
    if ref is None or ref.id or ref.params_b:
        return frame, None
    members = names.members(ref.name)
    if len(members) != 1:
        return frame, None
    setup = s.model_copy(update={"models": (ref.model_copy(update={"id": members[0], "name": members[0],
                                                                   "estimated": False}), *s.models[1:])})
    setups = tuple(setup if i == frame.asked_setup else x for i, x in enumerate(frame.setups))
    return frame.model_copy(update={"setups": setups}), f"{ref.name}→{members[0]}"


GENERAL_SLOTS = ("model", "observation", "gpu")  # asked back, with what the guide says in general meanwhile


def _general(ctx: Context, message: str, lang: str, ph: Phrases) -> tuple[list[PassageRef], str]:
    """What the guide says about the question in general (its best passages, cited), to read while the one slot
    the figures need is asked for."""
    passages, _ = knowledge.search_passages(ctx, message, 3, lang)
    passages = unique_passages(passages)
    if not passages:
        return [], ""
    body = passage_body(passages[0].text, passages[0].title)
    lines = [str(ph["meanwhile"]), "", first_sentence(body, 240)]
    lines += ["", *_cite_lines(passages, ph)]
    return passages, "\n".join(lines).strip()


def _ask_back(slot: str, name: str | None, ph: Phrases, notes: Sequence[str]) -> str:
    """One precise question for the slot that changes the answer (naming what it asks about)."""
    head = "".join(f"> {n}\n\n" for n in notes)
    said, _, members = (name or "").partition("|")
    return head + str(ph["ask"].get(slot, ph["ask"]["model"])).format(name=said, members=members)


def _context(reader: FrameReader, conv: Conversation) -> tuple[str, ...]:
    return conv.user_texts[-reader.context_turns:] if reader.context_turns > 0 else ()


def read_message(reader: FrameReader, offline: Reader, message: str, conv: Conversation
                 ) -> tuple[Reading, str, str | None]:
    """(the reading, the reader that made it, why the chosen one did not): `reader`, else the offline one."""
    prev_type = conv.prev.type if conv.prev is not None else None
    try:
        return reader.read(message, _context(reader, conv), prev_type), reader.name, None
    except ReaderUnavailable as exc:
        if reader is offline:
            raise
        return offline.read(message, _context(offline, conv), prev_type), offline.name, exc.reason


def answer_message(ctx: Context, names: Names, phrases_of: Callable[[str], Phrases], message: str,
                   conv: Conversation, lang: str | None = None, reader: FrameReader | None = None) -> Turn:
    """Read the message, route it, run the engine and write the answer (the module docstring)."""
    message = visible(message)  # zero-width and bidi controls are read as the text they hide in
    reading, read_by, fallback = read_message(reader or names.reader, names.reader, message, conv)
    turn = _answer(ctx, names, phrases_of, message, conv, lang, reading)
    return turn.model_copy(update={"reader": read_by, "fallback": fallback})


def _answer(ctx: Context, names: Names, phrases_of: Callable[[str], Phrases], message: str, conv: Conversation,
            lang: str | None, reading: Reading) -> Turn:
    lang = lang or reading.language
    ph = phrases_of(lang)
    notes = list(reading.frame.notes)
    price = reading.parsed.user_price or _frame_price(reading.frame)
    if price is not None:  # '每卡每小时只要8元': this turn is costed at the user's price
        ctx, price_note = priced_context(ctx, price, lang)
        notes = [price_note, *notes]
    try:
        plan = _route(reading, conv, names, lang, message)
    except ValidationError as exc:
        plan = _Plan(reading.type, frame=reading.frame)
        line = validation_line(exc)
        error = InvalidInputError(line, "Say the figure again in its unit (e.g. 7B, 4k, 2 张).",
                                  message_zh=f"有个数字不在可用的范围内：`{line}`", fix_zh="请带上单位再说一遍（如 7B、4k、2 张）。")
        info = _info(reading, plan)
        return Turn(type=plan.type, reading=info, slots=reading.slots, text=with_notes(error_text(error, ph), notes),
                    language=lang, error=error.to_dict(), frame=reading.frame)
    info = _info(reading, plan)
    slots = reading.slots
    if plan.type == "out_of_scope":
        notes = []  # nothing of the message is echoed back (an injected instruction, a tag, a figure)
    if plan.missing is not None or plan.args is None:
        slot = plan.missing or "model"
        general = _general(ctx, message, lang, ph) if slot in GENERAL_SLOTS else ([], "")
        text = _ask_back(slot, plan.name, ph, notes) + (f"\n\n{general[1]}" if general[1] else "")
        return Turn(type=plan.type, reading=info, slots=slots,
                    answer=ClarifyAnswer(question_type=plan.type, slot=slot, passages=general[0]),
                    text=text, citations=general[0], language=lang, frame=plan.frame)
    if plan.args is not None:  # FP8 training on cards without it: answered in BF16, said
        args, fp8_note = without_fp8(ctx, plan.args, ph)
        plan = replace(plan, args=args)
        if fp8_note is not None:
            notes = [*notes, fp8_note]
    if plan.carried:
        notes = [*notes, carried_line(plan.frame or reading.frame, plan.carried, ph, lang)]
    if plan.family:
        said, meant = plan.family.split("→")
        notes = [*notes, str(ph["family_member"]).format(family=said, model=meant)]
    return _answered(ctx, plan, info, slots, notes, ph, lang, ask_unknown=True)


def _frame_price(frame: Frame) -> UserPrice | None:
    """The user's own price as a frame states it (the LLM reader's), for the card of the setup asked about."""
    cny = frame.constraints.user_price_cny_per_gpu_hour
    gpu = frame.setup.hardware.gpu or next(iter(frame.constraints.gpu_include), None)
    if cny is None or not gpu:
        return None
    clouds = frame.constraints.clouds
    return UserPrice(gpu, cny, clouds[0] if len(clouds) == 1 else None, f"¥{cny:g}")


def _info(reading: Reading, plan: _Plan) -> ReadingInfo:
    return ReadingInfo(type=plan.type if plan.alternative else reading.type,
                       confidence=plan.confidence or reading.confidence,
                       alternative=plan.alternative or reading.alternative,
                       scores={k: round(v, 3) for k, v in sorted(reading.scores.items(), key=lambda kv: -kv[1])[:3]})


def answer_workload(ctx: Context, phrases_of: Callable[[str], Phrases], workload: Workload, lang: str) -> Turn:
    """A structured workload (the page's form, an API client): planned as it is, nothing read from prose."""
    from service.questions.plan import PlanArgs

    args = PlanArgs.model_validate(workload.model_dump(exclude_none=True, exclude_defaults=True))
    info = ReadingInfo(type="plan", confidence="sure")
    plan = _Plan("plan", args, frame=frame_of(workload))
    return _answered(ctx, plan, info, args.model_dump(mode="json", exclude_unset=True), [], phrases_of(lang), lang)


def _answered(ctx: Context, plan: _Plan, info: ReadingInfo, slots: dict[str, object], notes: Sequence[str],
              ph: Phrases, lang: str, ask_unknown: bool = False) -> Turn:
    """Run the routed question and write its answer (or the engine's error, cited). With `ask_unknown` (a message,
    not a structured workload), a model that neither the catalog nor its name sizes is asked about by name
    ('openchat_3.5 多大？'), never refused with the closest names."""
    assert plan.args is not None
    module = BY_NAME[plan.type]
    stored = plan.args.model_dump(mode="json", exclude_unset=True)
    try:
        answer = module.call(ctx, plan.args)
    except UnknownModelError as exc:
        if not ask_unknown:
            return _failed(ctx, plan, info, slots, notes, ph, lang, stored, exc)
        return Turn(type=plan.type, reading=info, slots=slots, args=stored,
                    answer=ClarifyAnswer(question_type=plan.type, slot="model_size", passages=[]),
                    text=_ask_back("model_size", exc.name, ph, notes), language=lang, frame=plan.frame)
    except AdvisorError as exc:
        return _failed(ctx, plan, info, slots, notes, ph, lang, stored, exc)
    if plan.frame is not None and answer.asked is None:
        answer.asked = plan.frame.asked
    passages = (list(answer.passages) if isinstance(answer, knowledge.KnowledgeAnswer)
                else _citations(ctx, plan, lang))
    if plan.type == "plan":
        answer.citations = unique_passages(passages)
    text = compose(module, answer, passages, info.alternative if info.confidence == "unsure" else None, notes, ph)
    log_violations(answer, text, lang, ctx.catalog)  # issue 40 item 6: logged, never blocking
    return Turn(type=plan.type, reading=info, slots=slots, args=stored, answer=answer, text=text,
                citations=unique_passages(passages), language=lang, frame=plan.frame)


def _failed(ctx: Context, plan: _Plan, info: ReadingInfo, slots: dict[str, object], notes: Sequence[str],
            ph: Phrases, lang: str, stored: dict[str, object], exc: AdvisorError) -> Turn:
    """The engine's error as the answer, in the answer's language, with the passages that bear on it."""
    passages = _citations(ctx, plan, lang)
    text = "\n".join([error_text(exc, ph), "", *_cite_lines(passages, ph)]).strip()
    log_violations(None, text, lang)
    return Turn(type=plan.type, reading=info, slots=slots, args=stored, text=with_notes(text, notes),
                citations=passages, language=lang, error=exc.to_dict(), frame=plan.frame)


_SERVING_QUERY = {"zh": "推理引擎 vLLM 显存 gpu_memory_utilization KV 缓存 max_model_len 张量并行",
                  "en": "serving engine vLLM memory gpu_memory_utilization KV cache max_model_len tensor parallel"}


def _citations(ctx: Context, plan: _Plan, lang: str) -> list[PassageRef]:
    if plan.type in ("knowledge", "out_of_scope"):
        return []
    slots = plan.args.model_dump(exclude_none=True) if plan.args is not None else {}
    served = plan.type == "serving" or bool(slots.get("serving"))
    query = _SERVING_QUERY["zh" if lang == "zh" else "en"] if served else citation_query(slots, lang)
    found, _ = knowledge.search_passages(ctx, query, 3, lang)
    return found


def _cite_lines(passages: Sequence[PassageRef], ph: Phrases) -> list[str]:
    from service.questions import plan_text

    return plan_text.render_citations(unique_passages(passages), ph)
