"""Read a chat message (Chinese or English) into workload slots, deterministically: regexes and small word lists.

This is the offline planner model's reader. `parse_message` returns only the `Workload` fields the message
mentions, already in schema units; `merge_slots` applies a follow-up ('预算改成8000呢', 'what if I use QLoRA
instead?') to the previous workload, changing only what it mentions.

Budget period rule: 'total' when the words around the amount say 总/一共/total/overall, 'month' when they say
月/每月/月均/per month/monthly; with neither, 'total' only when the job is explicitly one-off (the message has a
deadline, or says 一次性/跑完/this run); otherwise the period is left out of the slots, which means 'month' for a
new workload (the schema default) and 'unchanged' for a follow-up.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date
from typing import Literal

from service.catalog.queries import gpu_variant, normalize
from service.catalog.user_prices import UserPrice
from service.lexicon import language_of
from service.reader.asked import find_fact, find_gpu_memory, find_stage, find_target
from service.reader.choices import (
    billings_mentioned,
    methods_mentioned,
    read_billing,
    read_documents,
    read_method,
    read_objective,
)
from service.reader.colloquial import NOTES as COLLOQUIAL_NOTES
from service.reader.colloquial import Quoted, approximate_amounts, find_relative_deadline, find_user_price
from service.reader.constraints import (
    GPU_MARK,
    find_budget,
    find_deadline_hours,
    find_gpu_count,
    find_usd_cny_rate,
)
from service.reader.intent import Subject, read_subject
from service.reader.knobs import find_micro_batch, find_zero_stage
from service.reader.names import (
    STRONG_INCLUDE,
    NameHit,
    compose_model,
    find_clouds,
    find_gpus,
    find_models,
    model_mentions,
    other_clouds,
    plain_name,
    stances,
)
from service.reader.numbers import DEC, halfwidth
from service.reader.observe import find_observation
from service.reader.quantities import (
    blank,
    find_avg_tokens,
    find_dataset_gb,
    find_epochs,
    find_lora_rank,
    find_params_b,
    find_samples,
    find_seq_len,
    find_tokens,
)
from service.reader.ranges import Refused, check
from service.reader.serving import find_serving
from service.workload import Workload

MAX_CHARS = 4000
ALL_CLOUDS = ("tencent", "jdcloud")
# Slots that only narrow the search; on their own, in a plain question, they are not a workload.
_SOFT = frozenset({"clouds", "gpu_include", "gpu_exclude", "billing", "objective", "method", "quant_bits",
                   "gpu_count", "zero_stage", "micro_batch", "lora_rank", "stage"})
_DATA_SIZE = ("samples", "tokens", "dataset_gb")

_QUESTION = re.compile(
    r"[?？]|吗|是什么|为什么|怎么|如何|是否|哪个|哪些|会不会|要不要|有没有|咋|啥|多少|多大|多久"
    r"|^\s*(?:what|why|how|does|do|is|are|can|could|should|which)\b|\b(?:which|should i|should we)\b",
    re.IGNORECASE,
)
_FOLLOW_UP = re.compile(r"呢|改|换|如果|要是|那就|那么|(?<![A-Za-z])(?:what if|instead|how about|switch|change|make it"
                        r"|go with|let'?s|what about|and (?:on|for|with))(?![A-Za-z])", re.IGNORECASE)
_STRONG = re.compile(rf"{STRONG_INCLUDE}|不要|不用|排除|exclude|without", re.IGNORECASE)
_UNKNOWN_GPU = re.compile(
    r"(?:只用|不要|不用|用|使用|(?<![A-Za-z])(?:only|use|exclude|no|without|on))\s*((?:RTX\s?)?[A-Z]{1,2}\d{2,4}[A-Za-z]{0,3})"
    r"(?![A-Za-z0-9])"
)

# A Hugging Face repo id or URL ('someorg/awesome-llm', 'https://huggingface.co/org/name').
_REPO = re.compile(r"(?<![\w/.:])(?:https?://(?:huggingface\.co|hf-mirror\.com|modelscope\.cn/models)/)?"
                   r"([A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*)")
_NOTES = {
    "qlora_bits": ("QLoRA {0}-bit is not supported (use 4 or 8); planning with 4-bit.",
                   "不支持 QLoRA {0}-bit（可选 4 或 8），按 4-bit 规划。"),
    "usd_no_rate": ("The budget is in USD ({0}); tell me the USD to CNY rate (e.g. 'at 7.2') or give it in CNY.",
                    "预算是美元（{0}），请给出美元兑人民币汇率（如“按7.2汇率”）或直接给人民币金额。"),
    "other_cloud": ("{0} is not covered; only Tencent Cloud and JD Cloud are.",
                    "{0} 不在范围内，目前只覆盖腾讯云和京东云。"),
    "several_models": ("Several models named ({0}); planning for {1}.", "提到了多个模型（{0}），按 {1} 规划。"),
    "unknown_gpu": ("GPU '{0}' is not in the catalog; ignored.", "目录里没有 GPU '{0}'，已忽略。"),
    "unstated_figure": ("The LLM reader gave {0} = {1}, a figure the message does not state; ignored.",
                        "LLM 解析给出的 {0} = {1} 在消息里找不到，已忽略。"),
    **COLLOQUIAL_NOTES,
    "unknown_repo": ("'{0}' is not in the catalog and its name gives no size: give the size (e.g. 7B) or the path "
                     "to its Hugging Face config.json.",
                     "目录中没有“{0}”，名称里也看不出参数量：请给出参数量（如 7B）或它的 Hugging Face config.json 路径。"),
    "negative": ("'{0}' is negative and was ignored: budgets, data sizes, epochs and deadlines must be positive.",
                 "“{0}”是负数，已忽略：预算、数据量、轮数和期限都必须是正数。"),
}
# A minus sign before a number that starts a value ("预算-500", "budget -500", "= -5"), not a range ("3000-5000")
# or a name ("Qwen2-7B", "Llama-2", "4-bit").
# '-3000', '预算-5000': a negative figure. Not a list bullet ('- 2x 3090') nor an exit code or signal ('exitcode: -9')
_NEGATIVE = re.compile(r"(?:^|(?<=[\s:：,，=(（\u3400-\u9fff]))[-−](?:" + DEC + r"(?![\d,.])|\d[\d,.]*)(?:\s?[kKwW万千])?")
_NOT_A_FIGURE = re.compile(r"(?:exit\s*code|exitcode|return\s*code|returncode|code|signal|errno|rc|status)\s*[:=：]?\s*$",
                           re.IGNORECASE)


def _negatives(text: str) -> list[re.Match[str]]:
    return [m for m in _NEGATIVE.finditer(text) if not _NOT_A_FIGURE.search(text[max(0, m.start() - 16):m.start()])]


# '4xH100', '8*A100': a count glued to a GPU name reads as the count and the name ('8x7B' is a model, not this)
_COUNT_GLUED = re.compile(r"(?<![A-Za-z0-9.])(\d{1,4})\s*([xX×*])(?=[A-Za-z])")


@dataclass(frozen=True)
class ParsedMessage:
    slots: dict[str, object]  # only the Workload fields the message mentions, in schema units
    language: Literal["zh", "en"]
    has_workload: bool  # the message describes a training job or changes one
    is_follow_up_only: bool  # it changes slots without naming a model or a size
    wants_documents: list[str] = field(default_factory=list)  # "request_document", "launch_bundle"
    unparsed_notes: list[str] = field(default_factory=list)  # recognised but not usable
    subject: Subject = field(default_factory=lambda: Subject(None))  # the question type and what it is about
    question_slots: dict[str, object] = field(default_factory=dict)  # soft slots a plain question also named
    # What else the words state, whatever the question type: an observation ('OOM', '20小时一个epoch'), serving
    # load and dtypes, the capacity target, the training objective, a card's memory size, the catalog fact asked.
    extra: dict[str, object] = field(default_factory=dict)
    named: dict[str, int] = field(default_factory=dict)  # how many GPUs, clouds and methods the text names
    marked: str = ""  # the text with model names blanked (\x00) and GPU names marked (GPU_MARK): what the learned
    #                  parts of the reader read, so a name never stands for a phrasing
    user_price: UserPrice | None = None  # '京东云的A800每卡每小时只要8元': the user's price for this turn, not a budget


def note(language: str, key: str, *args: object) -> str:
    """One of the reader's notes (a name not in the catalog, an unsupported QLoRA width ...) in the language."""
    en, zh = _NOTES[key]
    return (zh if language == "zh" else en).format(*args)


def _blank_all(text: str, hits: list[NameHit], ch: str = "\x00") -> str:
    for h in hits:
        text = blank(text, h.start, h.end, ch)
    return text


_FULL_R1 = re.compile(r"满血")
_NAME_MEMORY = re.compile(r"(\d{1,3})\s*(?:G|GB|GiB|Gb)(?![A-Za-z])", re.IGNORECASE)
_GLUED_SIZE = re.compile(r"\d(?:\.\d+)?[bBmM](?![A-Za-z0-9])")


@dataclass
class _Named:
    mention: str | None = None  # a model named without a size the reader can use
    memory: float | None = None  # a memory size named inside a GPU's name ('A800 40GB')
    gpus: list[str] = field(default_factory=list)  # named and not excluded, text order
    gpu_at: list[tuple[int, str]] = field(default_factory=list)  # (where, id) of each GPU named and not excluded
    clouds: list[str] = field(default_factory=list)
    marked: str = ""  # the text with models blanked and GPUs marked


def _read_names(work: str, slots: dict[str, object], model_aliases: Mapping[str, str],
                gpu_aliases: Mapping[str, str], notes: list[tuple[str, tuple[object, ...]]],
                named: _Named) -> str:
    models = find_models(work, model_aliases)
    mentions = model_mentions(work, models)
    glued = [h for h in mentions if _GLUED_SIZE.search(h.value)]  # 'llama70b': sized by its name
    if glued and not models:
        models = glued[:1]
    elif not models and _FULL_R1.search(work) and normalize("DeepSeek-R1") in model_aliases:
        slots["model"] = model_aliases[normalize("DeepSeek-R1")]  # '满血版': the full 671B DeepSeek-R1, as people say it
    elif mentions and not models:
        named.mention = mentions[0].value  # 'LLaMA2', 'Vicuna': named, not sizable
    if not models:
        for m in _REPO.finditer(work):
            if "-" in m.group(1) or m.group(0).startswith("http"):  # 'A10/A100', 'LoRA/QLoRA' are not repos
                notes.append(("unknown_repo", (m.group(1),)))
    if models:
        slots["model"] = models[0].value if models[0].known else plain_name(models[0].value)
        names = list(dict.fromkeys(h.value for h in models))
        if len(names) > 1:
            notes.append(("several_models", (", ".join(names), names[0])))
    work = _blank_all(work, models)

    gpus = find_gpus(work, gpu_aliases)
    for hit in gpus:  # 'A800 40GB', '3060-12G': the memory named inside the GPU's name
        if (size := _NAME_MEMORY.search(work[hit.start:hit.end])) is not None:
            named.memory = float(size.group(1))
    for hit, stance in zip(gpus, stances(work, gpus, None), strict=True):
        if stance != "exclude":
            named.gpus.append(hit.value)
            named.gpu_at.append((hit.start, hit.value))
        if stance is not None:
            key = "gpu_include" if stance == "include" else "gpu_exclude"
            chosen = slots.setdefault(key, [])
            if isinstance(chosen, list) and hit.value not in chosen:
                chosen.append(hit.value)
    work = _blank_all(work, gpus, GPU_MARK)
    named.marked = work

    clouds = find_clouds(work)
    if clouds:
        marked = list(zip(clouds, stances(work, clouds, "include"), strict=True))
        include = list(dict.fromkeys(h.value for h, s in marked if s == "include"))
        exclude = {h.value for h, s in marked if s == "exclude"}
        named.clouds = [h.value for h, s in marked if s != "exclude"]
        slots["clouds"] = include or [c for c in ALL_CLOUDS if c not in exclude]
    for name in other_clouds(work):
        notes.append(("other_cloud", (name,)))
    for m in _UNKNOWN_GPU.finditer(work):
        notes.append(("unknown_gpu", (m.group(1),)))
    return _blank_all(work, clouds)


def _read_sizes(work: str, slots: dict[str, object], refused: list[Refused]) -> str:
    zero, work = find_zero_stage(work)
    micro, work = find_micro_batch(work)
    seq_len, work = find_seq_len(work, refused)
    lora_rank, work = find_lora_rank(work, refused)
    avg, work = find_avg_tokens(work, refused)
    tokens, work = find_tokens(work, refused)
    if tokens is not None and tokens < 100_000 and avg is None:
        avg, tokens = round(tokens), None  # '平均1000 token' said loosely: no corpus is that small
    params_b, work = find_params_b(work, refused)
    epochs, work = find_epochs(work, refused)
    samples, work = find_samples(work, refused)
    dataset_gb, work = find_dataset_gb(work, refused)
    found = {"seq_len": seq_len, "avg_tokens_per_sample": avg, "tokens": tokens, "params_b": params_b,
             "epochs": epochs, "samples": samples, "dataset_gb": dataset_gb, "lora_rank": lora_rank,
             "zero_stage": zero, "micro_batch": micro}
    slots.update({k: v for k, v in found.items() if v is not None})
    return work


def parse_message(
    text: str,
    model_aliases: Mapping[str, str],
    gpu_aliases: Mapping[str, str],
    usd_cny_rate: float | None = None,
    today: date | None = None,
) -> ParsedMessage:
    """Read one chat message. `model_aliases` and `gpu_aliases` map normalised names (see
    `service.catalog.queries.normalize`) to canonical ids. Only the first 4000 characters are read. Relative
    deadlines ('周五前', 'by Friday') count from `today` (default: the date today)."""
    text = _COUNT_GLUED.sub(r"\1\2 ", halfwidth(text[:MAX_CHARS]))
    language = language_of(text)
    slots: dict[str, object] = {}
    notes: list[tuple[str, tuple[object, ...]]] = []
    refused: list[Refused] = []  # figures out of their slot's range, said as notes

    for m in _negatives(text):
        notes.append(("negative", (m.group(0).strip(),)))
        text = text[:m.start()] + " " * len(m.group(0)) + text[m.end():]
    text, approx = approximate_amounts(text)
    notes += approx
    named = _Named()
    work = _read_names(text, slots, model_aliases, gpu_aliases, notes, named)
    extra, work = _read_extra(work, text, refused)
    if named.mention is not None:
        extra["model_mention"] = named.mention
    if named.memory is not None:
        extra.setdefault("gpu_memory_gb", named.memory)
    if isinstance(memory := extra.get("gpu_memory_gb"), float):  # 'A100 80G', '4090 48G', 'V100 16GB'
        named.gpus = [gpu_variant(g, memory, gpu_aliases) for g in named.gpus]
        named.gpu_at = [(at, gpu_variant(g, memory, gpu_aliases)) for at, g in named.gpu_at]
        for key in ("gpu_include", "gpu_exclude"):
            if isinstance(chosen := slots.get(key), list):
                slots[key] = list(dict.fromkeys(gpu_variant(g, memory, gpu_aliases) for g in chosen))
    relative, work = find_relative_deadline(work, today or date.today())
    quoted, work = find_user_price(work)
    rate, work = find_usd_cny_rate(work)
    user_price = _user_price(quoted, named, rate or usd_cny_rate)
    if quoted is not None and user_price is None:
        notes.append(("user_price", (quoted.said,)))
    work = _read_sizes(work, slots, refused)
    if "model" not in slots and named.mention is not None and isinstance(size := slots.get("params_b"), float | int):
        slots["model"] = compose_model(named.mention, float(size), model_aliases)  # 'Llama2 ... 70B'
        del slots["params_b"]
    if "stage" in extra:
        slots["stage"] = extra["stage"]  # 'DPO对齐', 'ORPO': the objective's memory model
    if "max_model_len" in extra and "seq_len" not in slots:
        slots["seq_len"] = extra["max_model_len"]  # '4k上下文': the context, whichever kind of job it is
    deadline, work = find_deadline_hours(work, refused)
    if relative is not None:
        deadline = relative.hours
        notes.append(relative.note)
    money, work = find_budget(work, one_off=deadline is not None)
    gpu_count, work = find_gpu_count(work, refused)
    if deadline is not None:
        slots["deadline_hours"] = deadline
    if gpu_count is not None:
        slots["gpu_count"] = gpu_count
    if money is not None:
        rate = rate or usd_cny_rate
        if money.currency == "USD" and rate is None:
            notes.append(("usd_no_rate", (f"${money.amount:g}",)))
        elif check("budget_cny", budget := money.amount * (rate if money.currency == "USD" and rate else 1.0),
                   money.said, refused):
            slots["budget_cny"] = round(budget, 2)
            if money.period is not None:
                slots["budget_period"] = money.period

    method = read_method(work)
    if method.method is not None:
        slots["method"] = method.method
    if method.quant_bits is not None:
        slots["quant_bits"] = method.quant_bits
    if method.unsupported_bits is not None:
        notes.append(("qlora_bits", (method.unsupported_bits,)))
    for key, value in (("billing", read_billing(work)), ("objective", read_objective(work))):
        if value is not None:
            slots[key] = value

    subject = read_subject(named.marked, text, named.gpus, named.clouds, methods_mentioned(text),
                           billings_mentioned(text), gpu_count)
    pure_question = _QUESTION.search(text) and not _FOLLOW_UP.search(text) and not _STRONG.search(text)
    question_slots: dict[str, object] = {}
    if pure_question and set(slots) <= _SOFT:
        question_slots, slots = slots, {}
    has_workload = bool(slots)
    return ParsedMessage(
        slots=slots,
        language=language,
        has_workload=has_workload,
        is_follow_up_only=has_workload and "model" not in slots and "params_b" not in slots,
        wants_documents=read_documents(text),
        unparsed_notes=list(dict.fromkeys([*(note(language, key, *args) for key, args in notes),
                                           *(r.note(language) for r in refused)])),
        subject=subject,
        question_slots=question_slots,
        extra=extra,
        marked=named.marked,
        user_price=user_price,
        named={"gpus": len(dict.fromkeys(named.gpus)), "clouds": len(dict.fromkeys(named.clouds)),
               "methods": len(methods_mentioned(text)),
               "gpu_filter": int("gpu_include" in slots or "gpu_exclude" in slots or "gpu_include" in question_slots
                                 or "gpu_exclude" in question_slots)},
    )


def _user_price(quoted: Quoted | None, named: _Named, usd_cny_rate: float | None) -> UserPrice | None:
    """The quoted price tied to the GPU named last before it (else the first named after it) and the one cloud
    named; None when no GPU is named, or a dollar price has no rate."""
    if quoted is None or not named.gpu_at or quoted.amount <= 0:
        return None
    before = [g for at, g in named.gpu_at if at < quoted.start]
    gpu = before[-1] if before else named.gpu_at[0][1]
    if quoted.currency == "USD" and usd_cny_rate is None:
        return None
    cny = quoted.amount * (usd_cny_rate if quoted.currency == "USD" and usd_cny_rate else 1.0)
    clouds = list(dict.fromkeys(named.clouds))
    return UserPrice(gpu, round(cny, 4), clouds[0] if len(clouds) == 1 else None, quoted.said)


def _read_extra(work: str, text: str, refused: list[Refused]) -> tuple[dict[str, object], str]:
    """The slots beyond the workload, read before the sizes so their figures are not read as sizes: a card's
    memory ('3090 24G' is the card's, never 24 GB of data), an observation, the serving load."""
    extra: dict[str, object] = {}
    memory, work = find_gpu_memory(work)
    if memory is not None:
        extra["gpu_memory_gb"] = memory
    observed, work = find_observation(work)
    if observed is not None:
        extra["observed"] = observed.as_dict()
    serving, work = find_serving(work, refused)
    extra.update(serving)
    # the fact asked reads the message itself: '京东云上有A100吗' needs the cloud's name, which `work` has blanked
    for key, value in (("target", find_target(work)), ("stage", find_stage(work)), ("fact", find_fact(text))):
        if value is not None:
            extra[key] = value
    return extra, work


def merge_slots(previous: Workload | None, parsed: ParsedMessage) -> dict[str, object]:
    """The previous workload with the message's slots applied. Lists are replaced, not appended. Naming a model
    drops an earlier bare size (and the reverse); a new dataset size in one unit drops the others; a method
    other than qlora drops quant_bits."""
    merged: dict[str, object] = previous.model_dump() if previous is not None else {}
    slots = parsed.slots
    if previous is not None:
        if "model" in slots and "params_b" not in slots:
            merged["params_b"] = None
        if "params_b" in slots and "model" not in slots:
            merged["model"] = None
        if any(k in slots for k in _DATA_SIZE):
            merged.update({k: None for k in _DATA_SIZE if k not in slots})
        if slots.get("method", "qlora") != "qlora" and "quant_bits" not in slots:
            merged["quant_bits"] = None
    merged.update({k: list(v) if isinstance(v, list) else v for k, v in slots.items()})
    return merged
