"""The offline reader's frame: the learned task and asked (service/reader/learned.py) over the finders' slots, the
question type derived from them in one table, and the frame itself (service/frame.py) built from the finders'
spans.

    message_features(text, turns, parse, prev)   every feature of the last message (its conversation's slots)
    type_scores(p_task, p_asked, x, table)       P(question type): the sum over the (task, asked) pairs the table
                                                 maps to it; an observation turns a time or memory question into a
                                                 diagnosis
    build_frame(parsed, slots, task, asked, ...) the typed frame

The table is the question spine's (service/questions/registry.py `frame_table`), passed in: the reader sits below
the spine and never imports it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from service.frame import Constraints, Data, Frame, Hardware, Knobs, Load, ModelRef, Outcome, Setup
from service.reader.cues import features as cue_features
from service.reader.learned import features, marked_text
from service.reader.message import ParsedMessage
from service.reader.run_frame import with_run_figures
from service.reader.setups import Contrast, find_contrast
from service.reader.slots import question_slots

Parse = Callable[[str], ParsedMessage]
Table = Mapping[tuple[str, str], str]
_CUE_SKIP = ("prev_", "follow_", "bias")
UNOBSERVED_DIAGNOSIS = 0.2  # a diagnosis's weight when the message observes nothing (no OOM, hours, memory seen)
# (task, asked) pairs no module claims: the type that answers them
_FALLBACK = {"cause": "diagnose", "fix": "diagnose", "howto": "knowledge", "fact": "knowledge", "price": "knowledge",
             "other": "out_of_scope", "winner": "compare", "capacity": "capacity", "savings": "savings"}
_SERVE_ASKS = ("fits", "count", "memory", "concurrency", "throughput", "latency", "cost", "plan", "time")
_TRAIN_ASKS = {"fits": "feasibility", "count": "min_gpus", "memory": "min_gpus", "plan": "plan", "time": "plan",
               "cost": "plan", "concurrency": "serving", "throughput": "serving", "latency": "serving"}


def conversation_slots(text: str, turns: Sequence[str], parse: Parse) -> tuple[ParsedMessage, dict[str, Any]]:
    """The last message parsed, and the slots of the conversation (earlier turns', then its own on top)."""
    merged: dict[str, Any] = {}
    for turn in turns:
        merged.update(question_slots(parse(turn)))
    parsed = parse(text)
    return parsed, {**merged, **question_slots(parsed)}


_NAME_TOKEN = re.compile(r"(?<![A-Za-z0-9.])[A-Za-z][A-Za-z0-9]*(?:\.[A-Za-z0-9]+)*")


def names_catalog(text: str, families: frozenset[str]) -> bool:
    """The message names an instance family or type of the catalog (GT4, HCCPNV4sn, GN10Xp.2XLARGE40,
    p.n1v100.10xlarge): a question about the catalog itself is likely."""
    for tok in _NAME_TOKEN.findall(text):
        low = tok.lower()
        if any(ch.isdigit() for ch in low) and (low in families or low.split(".", 1)[0] in families
                                                or ".".join(low.split(".")[:2]) in families):
            return True
    return False


def message_features(text: str, turns: Sequence[str], parse: Parse,
                     prev: Mapping[str, str] | None = None, families: frozenset[str] = frozenset()
                     ) -> dict[str, float]:
    """The learned parts' features: n-grams of the marked message, the conversation's slots, the frozen cue
    families (what the words signal, as the earlier reader wrote them: no new one per phrasing), the previous
    turn's frame, and whether it names the catalog's own instance families (`families`, lower case)."""
    parsed, slots = conversation_slots(text, turns, parse)
    x = features(marked_text(parsed.marked), slots, parsed.named, prev)
    if families and names_catalog(parsed.marked, families):
        x["s:catalog_name"] = 1.0
    for k, v in cue_features(text, slots, parsed.named, None).items():
        if v and not k.startswith(_CUE_SKIP):
            x[f"c:{k}"] = float(v)
    return x


def type_of(task: str, asked: str, observed: bool, table: Table) -> str:
    """The question type of a (task, asked) pair; a time or memory question about a run that happened (an
    observation) is a diagnosis."""
    if observed and asked in ("time", "memory", "fits") and task in ("train", "serve", "both"):
        return "diagnose"
    hit = table.get((task, asked)) or table.get(("train" if task in ("both", "none") else task, asked))
    if hit is not None:
        return hit
    if asked in _FALLBACK:
        return _FALLBACK[asked]
    if task == "serve" and asked in _SERVE_ASKS:
        return "serving"
    return _TRAIN_ASKS.get(asked, "knowledge")


def type_scores(p_task: Mapping[str, float], p_asked: Mapping[str, float], x: Mapping[str, float],
                table: Table) -> dict[str, float]:
    """P(question type), summed over the (task, asked) pairs that map to it."""
    observed = bool(x.get("s:observed"))
    # a job described without a question ('上线一个Llama-3-70B的对话服务'): what to rent for it is what is asked
    described = bool(x.get("s:model")) and bool(x.get("c:statement"))
    if x.get("c:other_cloud_only"):  # only another cloud's console or service, nothing to size: not ours
        return {"out_of_scope": 1.0}
    out: dict[str, float] = {}
    for task, pt in p_task.items():
        for asked, pa in p_asked.items():
            if described and asked == "other" and task in ("train", "serve", "both"):
                asked = "plan"
            t = type_of(task, asked, observed, table)
            out[t] = out.get(t, 0.0) + pt * pa
    if not observed and "diagnose" in out:
        # a diagnosis explains something that happened: with nothing observed ('只用T4', 'on one A100 80G'),
        # another reading is likelier
        out["diagnose"] *= UNOBSERVED_DIAGNOSIS
        total = sum(out.values())
        out = {k: v / total for k, v in out.items()}
    return out


def _model_ref(slots: Mapping[str, Any], parsed: ParsedMessage) -> tuple[ModelRef, ...]:
    name = slots.get("model")
    if name:
        return (ModelRef(name=str(name), id=str(name), params_b=slots.get("params_b")),)
    if slots.get("params_b"):
        return (ModelRef(name=f"{slots['params_b']:g}B", params_b=float(slots["params_b"]), estimated=True),)
    return ()


def _outcome(slots: Mapping[str, Any]) -> Outcome | None:
    obs = slots.get("observed")
    if not isinstance(obs, Mapping):
        return None
    kind = obs.get("kind")
    status = {"oom": "oom", "host_oom": "oom", "slow": "slow"}.get(str(kind), "worked")
    return Outcome(status=status, kind=kind, memory_gb=obs.get("memory_gb"), hours=obs.get("hours"),
                   tokens_per_s=obs.get("tokens_per_s"), util_pct=obs.get("util_pct"))


def _setup(slots: Mapping[str, Any], parsed: ParsedMessage) -> Setup:
    knobs = Knobs(engine=slots.get("engine"), max_model_len=slots.get("max_model_len"), zero_stage=slots.get("zero_stage"),
                  seq_len=slots.get("seq_len"), micro_batch=slots.get("micro_batch"), weights=slots.get("weights"),
                  kv_dtype=slots.get("kv_dtype"), lora_rank=slots.get("lora_rank"), quant_bits=slots.get("quant_bits"))
    hw = Hardware(gpu=slots.get("gpu"), gpu_memory_gb=slots.get("gpu_memory_gb"), gpu_count=slots.get("gpu_count"),
                  cloud=(slots.get("clouds") or [None])[0] if len(slots.get("clouds") or []) == 1 else None)
    return Setup(models=_model_ref(slots, parsed), method=slots.get("method"), objective=slots.get("stage"),
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


def unknowns_for(qtype: str, slots: Mapping[str, Any]) -> tuple[str, ...]:
    """What a right answer to this type needs and the post does not say (the answer states what it assumed)."""
    need = {"serving": ("max_model_len", "input_tokens", "output_tokens", "engine"),
            "plan": ("samples", "seq_len", "epochs", "method"), "feasibility": ("method", "seq_len"),
            "min_gpus": ("method", "seq_len"), "diagnose": ("gpu", "seq_len", "micro_batch"),
            "capacity": ("method", "seq_len")}.get(qtype, ())
    have = set(slots) | ({"samples"} if any(k in slots for k in ("tokens", "dataset_gb")) else set())
    return tuple(k for k in need if k not in have)


def build_frame(parsed: ParsedMessage, slots: Mapping[str, Any], task: str, asked: str, qtype: str) -> Frame:
    """The typed frame of one message in its conversation."""
    base = _setup(slots, parsed)
    contrast = find_contrast(parsed.marked.replace("\x00", " ").replace("\x01", " ") or "")
    setups, which = _contrast_setups(base, contrast) if contrast else ((base,), 0)
    load = Load(concurrency=slots.get("concurrency"), request_rate=slots.get("request_rate"),
                input_tokens=slots.get("input_tokens"), output_tokens=slots.get("output_tokens"),
                ttft_ms=slots.get("ttft_ms"), tpot_ms=slots.get("tpot_ms"))
    data = Data(samples=slots.get("samples"), tokens=slots.get("tokens"),
                avg_tokens_per_sample=slots.get("avg_tokens_per_sample"), dataset_gb=slots.get("dataset_gb"),
                epochs=slots.get("epochs"))
    constraints = Constraints(budget_cny=slots.get("budget_cny"), budget_period=slots.get("budget_period"),
                              deadline_hours=slots.get("deadline_hours"), clouds=tuple(slots.get("clouds") or ()),
                              billing=slots.get("billing"), objective=slots.get("objective"))
    frame = Frame(task=task, asked=asked, setups=setups, asked_setup=which, data=data, load=load,
                  constraints=constraints, unknowns=unknowns_for(qtype, slots),
                  documents=tuple(parsed.wants_documents), fact=slots.get("fact"), target=slots.get("target"),
                  language=parsed.language, notes=tuple(parsed.unparsed_notes))
    return with_run_figures(frame, parsed.marked, tuple(parsed.subject.gpus))
