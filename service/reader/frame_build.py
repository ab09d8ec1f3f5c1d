"""The offline reader's frame: the finders' slots and spans (service/reader/message.py) as the typed question frame
(service/frame.py) that the spine's routes read, and nothing else of the message. Everything a route needs is put
here: the setups (the asked one, a change's before and after, two clauses that differ in one knob), the options of a
comparison, the catalog names and the fact asked, the region, the other clouds, what the load changes by.

    build_frame(parsed, slots, task, asked, catalog=CatalogNames()) -> Frame
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from service.frame import FACTS, Constraints, Data, Frame, Hardware, Knobs, Load, ModelRef, Outcome, Setup
from service.lexicon import lexicon
from service.reader import catalog_asks
from service.reader.choices import billings_mentioned, methods_mentioned
from service.reader.constraints import GPU_MARK
from service.reader.message import ParsedMessage
from service.reader.run_frame import with_run_figures
from service.reader.scope import off_scope
from service.reader.setups import Contrast, find_contrast

_FRAMEWORKS = ("deepspeed", "fsdp", "megatron", "colossalai", "llamafactory", "ms-swift", "axolotl", "unsloth",
               "trl", "torchtune")
_ENGINES = ("vllm", "sglang", "lmdeploy", "trtllm", "ollama", "tgi", "llamacpp")
_SERVE_WORDS = re.compile(r"部署|推理|上线|跑起来|服务|(?<![A-Za-z])(?:serv(?:e|ing)|inference|deploy\w*|host|ollama|vllm|sglang|"
                    r"llama\.?cpp|run (?:it|the model|locally|on)|can run|to run)(?![A-Za-z])", re.IGNORECASE)
_TRAIN_WORDS = re.compile(r"训|微调|(?<![A-Za-z])(?:train\w*|fine-?tun\w*|finetun\w*|sft|lora|qlora)(?![A-Za-z])", re.IGNORECASE)
# 'is this normal / why' about what a run did: a server's post that asks it wants the cause, not a new deployment
_ASKS_NORMAL = re.compile(r"正常吗|正常的吗|正常么|正常不|是否正常|符合预期|合理吗|合理么|"
                          r"(?<![A-Za-z])(?:is (?:this|that|it) (?:normal|expected)|expected or)(?![A-Za-z])",
                          re.IGNORECASE)
_ASKS_WHY = re.compile(r"为什么|为啥|怎么回事|什么原因|啥原因|(?<![A-Za-z])why(?![A-Za-z])", re.IGNORECASE)
_SEEN = re.compile(r"慢|卡住|卡死|崩|挤掉|爆|报错|溢出|占用|占满|增长|涨到|报显存|超显存|"
                   r"(?<!要求)(?<!要求 )\d\s*秒(?!以内|之内|内)|"  # a time seen, not a target ('2 秒以内')
                   r"(?<![A-Za-z])(?:oom|hangs?|stuck|slow\w*|crash\w*|"
                   r"taking up|uses? (?:almost |nearly )?all|tokens?\s*(?:/|per)\s*s)", re.IGNORECASE)
# ... and one that says it is theirs: a how-to asked in general ('为什么 ZeRO-3 比 ZeRO-2 慢') is not a run
_MINE = re.compile(r"我(?!想问|想知道|想了解|想请教)|自己|实际|实测|测试|发现|"
                   r"(?<![A-Za-z])(?:I(?! (?:wonder|want to know|would like to know))|I'm|my|we|our)(?![A-Za-z])")
# 'A100 支持 FP8 吗', 'does the T4 support bf16': what a card supports, asked outright (a job beside it is sized after)
_ASKS_SUPPORT = re.compile(r"支持[^，。,.?？]{0,10}[吗么嘛]|支不支持|是否支持|有没有\s*(?:bf16|fp8|fp16)|"
                           r"能(?:不能)?用\s*(?:bf16|bfloat16|fp8|flash[\s-]*(?:attn|attention))|"
                           r"(?<![A-Za-z])can (?:i|we) use (?:bf16|bfloat16|fp8|flash[\s-]*(?:attn|attention))|"
                           r"(?<![A-Za-z])(?:does|do|is|are)\b[^.?]{0,40}\bsupport|(?<![A-Za-z])supports?\s+\w+\?", re.IGNORECASE)
_GREETING = re.compile(r"^\s*(?:你好|您好|嗨|哈喽|在吗|早上好|晚上好|谢谢|多谢|感谢|hi|hello|hey|thanks|thank you|good (?:morning|"
                       r"afternoon|evening))[!！。.,，~～\s]*(?:你好|您好|谢谢|thanks)?[!！。.,，~～\s]*$", re.IGNORECASE)
# a count said with a card: '4 张 A10', '2x A100', '8卡A800', '两台H20' (the card's name is a run of GPU_MARK)
_COUNT_BEFORE = re.compile(r"(\d{1,4}|[一二两三四五六七八])\s*(?:张|块|卡|台|个|x|X|×|\*)?\s*(?:的)?\s*$")
_CN_COUNT = {"一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8}
_STATUS = {"oom": "oom", "host_oom": "oom", "slow": "slow", "error": "error", "scaling": "slow"}


@dataclass(frozen=True)
class CatalogNames:
    """The catalog's instance families and types (lower case) and its instance types by normalised name."""

    families: frozenset[str] = frozenset()
    instances: Mapping[str, str] = field(default_factory=dict)
    spelled: Mapping[str, str] = field(default_factory=dict)  # a family in lower case -> as the catalog writes it
    model_ids: frozenset[str] = frozenset()  # the catalog's model ids (a name outside them is sized by its size)


def _model_refs(slots: Mapping[str, Any], parsed: ParsedMessage, known: frozenset[str]) -> tuple[ModelRef, ...]:
    name = slots.get("model")
    if name and (not known or name in known):
        return (ModelRef(name=str(name), id=str(name), params_b=slots.get("params_b")),)
    if name:  # named as written, not a catalog id: sized by the size it states, else asked for
        return (ModelRef(name=str(name), params_b=slots.get("params_b"), estimated=True),)
    if slots.get("params_b"):
        return (ModelRef(name=f"{slots['params_b']:g}B", params_b=float(slots["params_b"]), estimated=True),)
    mention = parsed.extra.get("model_mention")
    if isinstance(mention, str) and mention:
        return (ModelRef(name=mention, estimated=True),)  # 'Hunyuan-Large': named, its size unknown
    return ()


def _outcome(slots: Mapping[str, Any]) -> Outcome | None:
    obs = slots.get("observed")
    if not isinstance(obs, Mapping):
        return None
    kind = obs.get("kind")
    return Outcome(status=_STATUS.get(str(kind), "worked"), kind=kind,
                   memory_gb=obs.get("memory_gb"), hours=obs.get("hours"), tokens_per_s=obs.get("tokens_per_s"),
                   util_pct=obs.get("util_pct"))


def _setup(slots: Mapping[str, Any], parsed: ParsedMessage, known: frozenset[str] = frozenset()) -> Setup:
    engine = slots.get("engine")
    knobs = Knobs(engine=engine if engine in (*_ENGINES, "mindie", "ktransformers", "hf") else None,
                  framework=engine if engine in _FRAMEWORKS else None, max_model_len=slots.get("max_model_len"),
                  zero_stage=slots.get("zero_stage"), seq_len=slots.get("seq_len"),
                  micro_batch=slots.get("micro_batch"), weights=slots.get("weights"), kv_dtype=slots.get("kv_dtype"),
                  lora_rank=slots.get("lora_rank"), quant_bits=slots.get("quant_bits"))
    gpus = parsed.subject.gpus
    clouds = slots.get("clouds") or []
    hw = Hardware(gpu=gpus[0] if gpus else None, gpu_memory_gb=slots.get("gpu_memory_gb"),
                  gpu_count=parsed.subject.gpu_count or slots.get("gpu_count"),
                  cloud=clouds[0] if len(clouds) == 1 else None, nodes=catalog_asks.machines(parsed.marked))
    return Setup(models=_model_refs(slots, parsed, known), method=slots.get("method"), objective=slots.get("stage"),
                 knobs=knobs, hardware=hw, outcome=_outcome(slots))


def _contrast_setups(base: Setup, contrast: Contrast) -> tuple[tuple[Setup, ...], int]:
    """The post's setups: the labelled one per clause, differing in the contrasted knob."""
    out: list[Setup] = []
    for span in contrast.setups:
        outcome = Outcome(status=span.outcome) if span.outcome != "unknown" else None
        if span.knob == "gpu_count":
            s = base.model_copy(update={"hardware": base.hardware.model_copy(update={"gpu_count": span.value})})
        elif span.knob in ("tp", "seq_len", "engine"):
            s = base.model_copy(update={"knobs": base.knobs.model_copy(update={span.knob: span.value})})
        else:
            s = base
        role = "asked" if len(out) == contrast.asked else ("worked" if span.outcome == "worked" else "failed")
        out.append(s.model_copy(update={"outcome": outcome or s.outcome, "role": role}))
    return tuple(out), contrast.asked


def _change_setups(base: Setup, parsed: ParsedMessage) -> tuple[tuple[Setup, ...], int] | None:
    """A change named in the message ('lora改成全参', 'V100换成A100'): the setup before it and after it."""
    before, after = parsed.subject.before, parsed.subject.after
    if not before or not after:
        return None

    def apply(values: Mapping[str, object], role: str) -> Setup:
        s = base.model_copy(update={"role": role})
        if "method" in values:
            s = s.model_copy(update={"method": values["method"]})
        gpus = values.get("gpu_include")
        if isinstance(gpus, list) and gpus:
            s = s.model_copy(update={"hardware": s.hardware.model_copy(update={"gpu": str(gpus[0])})})
        return s

    return (apply(before, "baseline"), apply(after, "alternative")), 1


def card_counts(marked: str) -> list[int | None]:
    """The count said before each card named, in order ('4 张 A10 … 换 2 张 A100' -> [4, 2])."""
    out: list[int | None] = []
    for m in re.finditer(GPU_MARK + "+", marked):
        c = _COUNT_BEFORE.search(marked[max(0, m.start() - 8):m.start()])
        raw = c.group(1) if c else None
        out.append(None if raw is None else int(raw) if raw.isdigit() else _CN_COUNT[raw])
    return out


def _measured_change(base: Setup, parsed: ParsedMessage) -> tuple[tuple[Setup, ...], int] | None:
    """Two cards with a run measured on the first ('4 张 A10 训了 30 小时，换 2 张 A100 要多久'): the measured
    setup as the baseline (its outcome, its count) and the other card, unmeasured, as the one asked about."""
    gpus = parsed.subject.gpus
    if len(gpus) != 2 or base.outcome is None or not (base.outcome.hours or base.outcome.tokens_per_s):
        return None
    counts = card_counts(parsed.marked) + [None, None]
    hw = base.hardware
    before = base.model_copy(update={"role": "baseline", "hardware": hw.model_copy(
        update={"gpu": gpus[0], "gpu_count": counts[0] or hw.gpu_count})})
    after = base.model_copy(update={"role": "alternative", "outcome": None, "hardware": hw.model_copy(
        update={"gpu": gpus[1], "gpu_count": counts[1] or counts[0] or hw.gpu_count, "gpu_memory_gb": None})})
    return (before, after), 1


def _compared(parsed: ParsedMessage, text: str) -> tuple[str | None, tuple[str, ...]]:
    subject = parsed.subject
    if subject.compare_kind is not None:
        return subject.compare_kind, tuple(subject.options)
    low = text.lower()
    frameworks = [f for f in _FRAMEWORKS if f in low.replace("-", "").replace(" ", "")]
    if len(frameworks) >= 2:
        return "framework", tuple(frameworks)
    return None, ()


def settle(frame: Frame, text: str) -> Frame:
    """The finders' word on what is asked, where it is surer than the learned parts: out of scope (an instruction to
    drop the instructions, or a subject not ours: service/reader/scope.py); a greeting; a catalog family named with
    what it is ('GT4和PNV4有啥区别'); a measured run and another card ('4 张 A10 训了 30 小时，换 2 张 A100 要多久':
    the time on the other card, not a diagnosis of the first)."""
    task, asked = frame.task, frame.asked
    if off_scope(text, frame) is not None:
        task, asked = "none", "other"
    elif _GREETING.search(text):
        task, asked = "none", "greeting"
    elif frame.names and frame.fact in ("family", "side_by_side", "instances", "price") and asked in (
            "howto", "other", "winner", "plan"):
        asked = "fact"
    elif (len(frame.setups) == 2 and frame.setups[0].role == "baseline" and frame.setups[0].outcome is not None
          and frame.setups[1].outcome is None and asked in ("cause", "fix", "plan", "time", "other", "winner")):
        task, asked = ("train" if task in ("none", "both") else task), "time"
    elif (frame.fact is not None and frame.fact.startswith("supports_") and _ASKS_SUPPORT.search(text)
          and task != "serve" and asked in ("fits", "howto", "other")):  # a count or a plan beside it stays that
        asked = "fact"  # 'A100 支持 FP8 吗？想训 qwen2 7b lora': the fact first, the job sized below it
    elif (task == "serve" and asked in ("fits", "memory", "plan", "cost", "concurrency", "count", "throughput")
          and (_ASKS_WHY.search(text) or _ASKS_NORMAL.search(text))
          and (frame.setup.outcome is not None or _SEEN.search(text))):
        asked = "cause"  # 'vLLM 部署后 8 并发内存到 60G，这符合预期么': what the server did, explained
    elif (asked in ("howto", "fact", "other") and (_ASKS_WHY.search(text) or _ASKS_NORMAL.search(text))
          and (frame.setup.outcome is not None or _SEEN.search(text) and _MINE.search(text))):
        # '我 8 张 3090 zero3 显存也在 17G 左右，这是什么原因': their run, explained, not the guide's general answer
        task = task if task in ("train", "serve") else (
            "serve" if _SERVE_WORDS.search(text) and not _TRAIN_WORDS.search(text) else "train")
        asked = "cause"
    if (task, asked) == (frame.task, frame.asked):
        return frame
    return frame.model_copy(update={"task": task, "asked": asked})


def build_frame(parsed: ParsedMessage, slots: Mapping[str, Any], task: str, asked: str,
                catalog: CatalogNames | None = None, text: str = "") -> Frame:
    """The typed frame of one message in its conversation (`slots`: the conversation's, the message's on top)."""
    catalog = catalog or CatalogNames()
    text = text or parsed.marked.replace("\x00", " ").replace("\x01", " ")
    if asked == "capacity" and task != "serve" and _SERVE_WORDS.search(text) and not _TRAIN_WORDS.search(text):
        task = "serve"  # '4090能部署多大的模型': the largest model an inference engine starts
    base = _setup(slots, parsed, catalog.model_ids)
    contrast = find_contrast(parsed.marked.replace("\x00", " ").replace("\x01", " ") or "")
    setups: tuple[Setup, ...] = (base,)
    which = 0
    change = _measured_change(base, parsed) or _change_setups(base, parsed)
    if contrast:
        setups, which = _contrast_setups(base, contrast)
    elif change is not None:
        setups, which = change
    compared, options = _compared(parsed, text)
    gpus = list(parsed.subject.gpus)
    clouds = [c for c in slots.get("clouds") or [] if c in ("tencent", "jdcloud")]
    names = catalog_asks.catalog_names(text, catalog.spelled, catalog.instances)
    names = tuple(n for n in names if n.upper() not in {g.split("-")[0].upper() for g in gpus})
    fact = catalog_asks.catalog_fact(text, gpus, names, clouds, billings_mentioned(text), slots.get("fact"))
    if fact not in FACTS:
        fact = None
    objective = slots.get("objective")
    if asked in ("winner", "savings") and objective is None and catalog_asks.asks_speed(text):
        objective = "fastest"  # 'A800和H800哪个快', 'V100换成A100能快多少': compared by time
    if setups[which].hardware.gpu_memory_gb is None and fact == "cheapest":
        least = catalog_asks.least_memory_gb(text)
        if least is not None:
            hw = setups[which].hardware.model_copy(update={"gpu_memory_gb": least})
            setups = tuple(s if i != which else s.model_copy(update={"hardware": hw}) for i, s in enumerate(setups))
    stated = {**parsed.question_slots, **parsed.slots}
    load = Load(concurrency=slots.get("concurrency"), request_rate=slots.get("request_rate"),
                input_tokens=slots.get("input_tokens"), output_tokens=slots.get("output_tokens"),
                ttft_ms=slots.get("ttft_ms"), tpot_ms=slots.get("tpot_ms"), scale=catalog_asks.load_scale(text))
    data = Data(samples=slots.get("samples"), tokens=slots.get("tokens"),
                avg_tokens_per_sample=slots.get("avg_tokens_per_sample"), dataset_gb=slots.get("dataset_gb"),
                epochs=slots.get("epochs"))
    constraints = Constraints(budget_cny=slots.get("budget_cny"), budget_period=slots.get("budget_period"),
                              deadline_hours=slots.get("deadline_hours"), clouds=tuple(clouds),
                              billing=slots.get("billing"), objective=objective,
                              gpu_include=tuple(stated.get("gpu_include") or ()),  # type: ignore[arg-type]
                              gpu_exclude=tuple(stated.get("gpu_exclude") or ()),  # type: ignore[arg-type]
                              needs=catalog_asks.needs(text) if fact == "cheapest" else (),
                              usage_hours_per_month=catalog_asks.usage_hours(text))
    if compared is None and len(methods_mentioned(text)) >= 2:
        compared, options = "method", tuple(methods_mentioned(text))
    lex = lexicon()
    frame = Frame(task=task, asked=asked, setups=setups, asked_setup=which,
                  data=data, load=load, constraints=constraints, documents=tuple(parsed.wants_documents),
                  fact=fact, target=slots.get("target"), compared=compared, options=options,
                  names=names, region=lex.region_in(text), other_clouds=tuple(lex.other_clouds_in(text)),
                  query=text.strip(), language=parsed.language, notes=tuple(parsed.unparsed_notes))
    return with_run_figures(frame, parsed.marked, tuple(parsed.subject.gpus))  # a run's knobs, links, CUDA error
