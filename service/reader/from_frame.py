"""An LLM reader's frame (service/reader/llm_schema.py) as a `Reading` the spine's routes read: the names resolved
by the catalog's own finders, the type decided by the spine from the frame, the slots and the subject from the frame.

    reading_from_draft(draft, text, names, decide, notes=()) -> Reading

The LLM reads; the catalog decides what its names mean. A model the catalog knows is that model (a size the LLM
states for it is dropped: the catalog's count is the engine's), an unknown one is sized by the size stated with it
and labelled estimated; a GPU the catalog does not know is dropped with the offline reader's note. The draft
reads the message in its conversation, so what this message states and what the conversation states are one set
of slots here (`own_slots` == `slots`); the spine still merges the previous question's workload under them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from service.catalog.queries import gpu_variant
from service.frame import Frame
from service.lexicon import language_of, lexicon
from service.reader.frame_reader import Decide, unknowns_for
from service.reader.intent import Subject
from service.reader.llm_schema import FrameDraft, HardwareDraft, ModelDraft, SetupDraft
from service.reader.message import ParsedMessage, note
from service.reader.names import compose_model, find_gpus, find_models, plain_name
from service.reader.read import Reading
from service.reader.run_knobs import hardware
from service.reader.scope import off_scope
from service.reader.slots import for_type, question_slots, with_defaults

_SIZED = re.compile(r"\d(?:\.\d+)?\s*[bBmM](?![A-Za-z0-9])")  # 'FooBar-7B': the name states its size
LINK_FIELDS = ("interconnect", "network_gbps")  # filled from the text where the LLM left them unset
_OBS_STATUS = {"oom": "oom", "host_oom": "oom", "slow": "slow"}


class OffSchemaError(ValueError):
    """The draft validates but does not hold together (an asked setup it does not have)."""


@dataclass(frozen=True)
class Names:
    """The catalog's names (normalised name -> id), as the offline reader holds them."""

    models: Mapping[str, str]
    gpus: Mapping[str, str]

    def model(self, ref: ModelDraft) -> tuple[str | None, float | None, bool]:
        """(the model slot, the params_b slot, estimated) of a model as the LLM named it."""
        hits = find_models(ref.name, self.models)
        if hits and hits[0].known:
            return hits[0].value, None, False
        name = plain_name(ref.name.strip())
        if ref.params_b is not None and not _SIZED.search(name):
            composed = compose_model(name, ref.params_b, self.models) if name else None
            known = composed is not None and composed in self.models.values()
            return composed, None, not known  # 'Llama2' said with '70B': Llama-2-70B, or 'LLaVA-7B' sized by name
        return (name or None), None if name else ref.params_b, True

    def gpu(self, hw: HardwareDraft) -> str | None:
        """The catalog GPU id of a GPU as named, with the memory variant the card's memory names."""
        if not hw.gpu:
            return None
        hits = find_gpus(hw.gpu, self.gpus)
        if not hits:
            return None
        return gpu_variant(hits[0].value, hw.gpu_memory_gb, self.gpus) if hw.gpu_memory_gb else hits[0].value


def _unique(values: list[Any]) -> list[Any]:
    return list(dict.fromkeys(v for v in values if v))


def _subject(draft: FrameDraft, asked: SetupDraft, gpus: list[str | None], included: list[str]) -> Subject:
    """The GPUs the question is about (the asked setup's first), the options compared, a change's before/after."""
    which = draft.setups.index(asked) if asked in draft.setups else 0
    ordered = _unique([gpus[which] if gpus else None, *gpus, *included])
    options: tuple[str, ...] = ()
    kind: Any = None
    clouds = _unique([s.hardware.cloud for s in draft.setups]) or _unique(list(draft.constraints.clouds))
    methods = _unique([s.method for s in draft.setups])
    for k, named in (("gpu", ordered), ("cloud", clouds), ("method", methods)):
        if len(named) >= 2:
            kind, options = k, tuple(named)
            break
    before: dict[str, object] = {}
    after: dict[str, object] = {}
    base = next((i for i, s in enumerate(draft.setups) if s.role == "baseline"), None)
    alt = next((i for i, s in enumerate(draft.setups) if s.role in ("alternative", "asked") and i != base), None)
    if base is not None and alt is not None:
        b, a = draft.setups[base], draft.setups[alt]
        if b.method and a.method and b.method != a.method:
            before, after = {"method": b.method}, {"method": a.method}
        elif gpus[base] and gpus[alt] and gpus[base] != gpus[alt]:
            before, after = {"gpu_include": [gpus[base]]}, {"gpu_include": [gpus[alt]]}
    return Subject(None, tuple(ordered), asked.hardware.gpu_count, kind, options, before, after)


def _observed(setups: list[SetupDraft], asked: SetupDraft) -> dict[str, object] | None:
    """The observation of the asked setup, or of any setup the post reports (the offline reader's `observed`)."""
    for s in (asked, *setups):
        o = s.outcome
        kind = o.kind if o is not None else None
        if o is not None and kind is None and o.status == "oom":
            kind = "oom"
        kind = {"scaling": "slow", "error": None}.get(kind, kind) if kind else None  # the slots' older vocabulary
        if o is not None and kind is not None:
            out: dict[str, object] = {"kind": kind}
            out.update({k: v for k, v in (("hours", o.hours), ("memory_gb", o.memory_gb), ("util_pct", o.util_pct),
                                          ("tokens_per_s", o.tokens_per_s)) if v is not None})
            return out
    return None


def _parsed(draft: FrameDraft, text: str, names: Names, notes: list[str]
            ) -> tuple[ParsedMessage, list[tuple[str | None, float | None, bool]]]:
    """The draft as the finders' ParsedMessage: what the routes read (slots, subject, extra, documents)."""
    language = language_of(text)
    if draft.setups and draft.asked_setup >= len(draft.setups):
        raise OffSchemaError(f"asked_setup {draft.asked_setup} of {len(draft.setups)} setups")
    asked = draft.setups[draft.asked_setup] if draft.setups else SetupDraft()
    gpus = [names.gpu(s.hardware) for s in draft.setups]
    for s, g in zip(draft.setups, gpus, strict=True):
        if s.hardware.gpu and g is None:
            notes.append(note(language, "unknown_gpu", s.hardware.gpu))
    c = draft.constraints
    include = _unique([names.gpu(HardwareDraft(gpu=g)) for g in c.gpu_include])
    exclude = _unique([names.gpu(HardwareDraft(gpu=g)) for g in c.gpu_exclude])
    models = [names.model(m) for s in draft.setups for m in s.models]
    ref = next(iter(asked.models), None) or next((m for s in draft.setups for m in s.models), None)
    model, params_b, _ = names.model(ref) if ref is not None else (None, None, False)
    k, d = asked.knobs, draft.data
    clouds = list(c.clouds) or ([asked.hardware.cloud] if asked.hardware.cloud else [])
    slots: dict[str, object] = {
        "model": model, "params_b": params_b, "method": asked.method, "stage": asked.objective,
        "quant_bits": k.quant_bits, "samples": d.samples, "tokens": d.tokens, "epochs": d.epochs,
        "avg_tokens_per_sample": d.avg_tokens_per_sample, "dataset_gb": d.dataset_gb, "seq_len": k.seq_len,
        "micro_batch": k.micro_batch, "zero_stage": k.zero_stage, "lora_rank": k.lora_rank,
        "budget_cny": c.budget_cny, "budget_period": c.budget_period, "deadline_hours": c.deadline_hours,
        "clouds": clouds, "billing": c.billing, "objective": c.objective, "gpu_include": include,
        "gpu_exclude": exclude, "gpu_count": asked.hardware.gpu_count}
    slots = {key: v for key, v in slots.items() if v not in (None, [])}
    load = draft.load
    extra: dict[str, object] = {
        "gpu_memory_gb": asked.hardware.gpu_memory_gb, "observed": _observed(draft.setups, asked),
        "weights": k.weights, "kv_dtype": k.kv_dtype, "engine": k.engine, "concurrency": load.concurrency,
        "request_rate": load.request_rate, "input_tokens": load.input_tokens, "output_tokens": load.output_tokens,
        "max_model_len": k.max_model_len, "ttft_ms": load.ttft_ms, "tpot_ms": load.tpot_ms, "target": draft.target,
        "stage": asked.objective, "fact": draft.fact}
    extra = {key: v for key, v in extra.items() if v is not None}
    if "max_model_len" in extra and "seq_len" not in slots:
        slots["seq_len"] = extra["max_model_len"]  # the context, whichever kind of job it is (as offline)
    subject = _subject(draft, asked, gpus, include)
    parsed = ParsedMessage(
        slots=slots, language=language, has_workload=bool(slots),
        is_follow_up_only=bool(slots) and "model" not in slots and "params_b" not in slots,
        wants_documents=list(draft.documents), unparsed_notes=list(dict.fromkeys(notes)), subject=subject,
        extra=extra, marked=text,
        named={"gpus": len(subject.gpus), "clouds": len(clouds), "methods": len(_unique([s.method for s in draft.setups])),
               "gpu_filter": int(bool(include or exclude))})
    return parsed, models


def _options(draft: FrameDraft, parsed: ParsedMessage, gpus: list[str | None]) -> tuple[str | None, tuple[str, ...]]:
    """What a comparison weighs: the kind the draft says, with the options read from its setups (or, for billing,
    the two modes)."""
    subject = parsed.subject
    kind = draft.compared or subject.compare_kind
    if kind == "billing":
        return kind, ("on_demand", "monthly")
    if kind == "model":
        return kind, tuple(_unique([m.name for s in draft.setups for m in s.models]))
    if kind in ("engine", "framework"):
        values = [s.knobs.engine if kind == "engine" else s.knobs.framework for s in draft.setups]
        return kind, tuple(_unique([str(v) for v in values if v]))
    if kind == "count":
        return kind, tuple(_unique([str(s.hardware.gpu_count) for s in draft.setups if s.hardware.gpu_count]))
    if subject.options:
        return kind or subject.compare_kind, tuple(subject.options)
    return kind, ()


def _frame(draft: FrameDraft, parsed: ParsedMessage, names: Names, models: list[tuple[str | None, float | None, bool]],
           asked: str, text: str) -> Frame:
    data = {**draft.model_dump(exclude={"setups", "other_clouds", "region"}), "asked": asked}
    data["constraints"].update(gpu_include=parsed.slots.get("gpu_include", []),
                               gpu_exclude=parsed.slots.get("gpu_exclude", []))
    refs = iter(models)
    setups = []
    gpus = [names.gpu(s.hardware) for s in draft.setups]
    links = {k: v for k, v in hardware(text).items() if k in LINK_FIELDS}
    for s, gpu in zip(draft.setups, gpus, strict=True):
        row = s.model_dump()
        # the machines' link as the text states it ('HCC' is Tencent's RDMA cluster, '10GbE' a plain network), where
        # the LLM left it unset: our own reading of the words, never a figure the text lacks
        row["hardware"].update({k: v for k, v in links.items() if row["hardware"].get(k) is None})
        row["models"] = []
        for m in s.models:
            model_id, params_b, estimated = next(refs)
            size = params_b if params_b is not None else m.params_b
            row["models"].append({"name": model_id or m.name, "id": None if estimated else model_id,
                                  "params_b": size if estimated else None,  # a known model: the catalog's size
                                  "estimated": estimated})
        # a card the catalog does not know: its memory when said ('3080ti 12G' is a 12 GB card), else its name
        row["hardware"]["gpu"] = gpu or (None if s.hardware.gpu_memory_gb else s.hardware.gpu)
        o = row.get("outcome")
        if isinstance(o, dict) and o.get("kind") is None and o.get("status") in ("oom", "slow", "error"):
            o["kind"] = o["status"]  # 'it OOMs': what they saw is the outcome itself
        setups.append(row)
    kind, options = _options(draft, parsed, gpus)
    lex = lexicon()
    clouds = lex.other_clouds_in(" ".join(draft.other_clouds)) if draft.other_clouds else lex.other_clouds_in(text)
    return Frame.model_validate({**data, "setups": setups, "compared": kind, "options": options,
                                 "region": lex.region_in(draft.region) if draft.region else lex.region_in(text),
                                 "other_clouds": clouds, "query": text.strip(), "language": parsed.language,
                                 "notes": parsed.unparsed_notes})


def reading_from_draft(draft: FrameDraft, text: str, names: Names, decide: Decide, notes: Sequence[str] = ()
                       ) -> Reading:
    """The Reading of one message read by an LLM into `draft` (the module docstring); `notes` go first (the
    figures the guard dropped, service/reader/figures.py)."""
    parsed, models = _parsed(draft, text, names, list(notes))
    asked = draft.asked
    if asked == "other" and draft.task != "none" and ("model" in parsed.slots or "params_b" in parsed.slots):
        asked = "plan"  # a job described without a question: what to rent for it (as the offline reader reads it)
    frame = _frame(draft, parsed, names, models, asked, text)
    if off_scope(text, frame) is not None:  # an instruction to drop instructions, or not ours: whatever the LLM read
        frame = frame.model_copy(update={"task": "none", "asked": "other"})
    qtype = decide(frame)
    own = question_slots(parsed)
    frame = frame.model_copy(update={"unknowns": unknowns_for(qtype, own)})
    return Reading(text=text, language=parsed.language, parsed=parsed, slots=with_defaults(for_type(own, qtype), qtype),
                   scores={qtype: 1.0}, type=qtype, confidence="sure", own_slots=for_type(own, qtype),
                   frame=frame, task_scores={draft.task: 1.0}, asked_scores={asked: 1.0})
