"""The offline reader's frame: the learned task and asked (service/reader/learned.py) over the finders' slots, the
question type derived from them in one table, and the frame itself (service/frame.py) built from the finders'
spans.

    message_features(text, turns, parse, prev)   every feature of the last message (its conversation's slots)
    type_scores(p_task, p_asked, x, frame, decide)  P(question type): the sum over the (task, asked) pairs the
                                                    spine's decision maps to it, read on the message's frame

The frame itself is built by service/reader/frame_build.py; the decision is the spine's
(service/questions/decide.py), passed in: the reader sits below the spine and never imports it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from service.frame import Frame
from service.reader.cues import features as cue_features
from service.reader.learned import features, marked_text
from service.reader.message import ParsedMessage
from service.reader.slots import question_slots

Parse = Callable[[str], ParsedMessage]
# The spine's decision (service/questions/decide.py question_type), passed in: the reader sits below the spine
Decide = Callable[[Frame], str]
_CUE_SKIP = ("prev_", "follow_", "bias")
UNOBSERVED_DIAGNOSIS = 0.2  # a diagnosis's weight when the message observes nothing (no OOM, hours, memory seen)
PAIR_FLOOR = 1e-4  # (task, asked) pairs less likely than this are not read


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


def type_scores(p_task: Mapping[str, float], p_asked: Mapping[str, float], x: Mapping[str, float], frame: Frame,
                decide: Decide) -> tuple[dict[str, float], dict[str, tuple[str, str]]]:
    """P(question type), summed over the (task, asked) pairs that the spine's decision maps to it (each pair read
    on this message's frame), and the likeliest pair of each type."""
    observed = bool(x.get("s:observed"))
    # a job described without a question ('上线一个Llama-3-70B的对话服务'): what to rent for it is what is asked
    described = bool(x.get("s:model")) and bool(x.get("c:statement"))
    if x.get("c:other_cloud_only"):  # only another cloud's console or service, nothing to size: not ours
        return {"out_of_scope": 1.0}, {"out_of_scope": ("none", "other")}
    out: dict[str, float] = {}
    best: dict[str, tuple[float, tuple[str, str]]] = {}
    for task, pt in p_task.items():
        for asked, pa in p_asked.items():
            p = pt * pa
            if p < PAIR_FLOOR:
                continue
            if described and asked == "other" and task in ("train", "serve", "both"):
                asked = "plan"
            t = decide(frame.model_copy(update={"task": task, "asked": asked}))
            out[t] = out.get(t, 0.0) + p
            if p > best.get(t, (0.0, ("", "")))[0]:
                best[t] = (p, (task, asked))
    if not out:
        return {"out_of_scope": 1.0}, {"out_of_scope": ("none", "other")}
    if not observed and "diagnose" in out:
        # a diagnosis explains something that happened: with nothing observed ('只用T4', 'on one A100 80G'),
        # another reading is likelier
        out["diagnose"] *= UNOBSERVED_DIAGNOSIS
    total = sum(out.values())
    return {k: v / total for k, v in out.items()}, {k: v[1] for k, v in best.items()}


def unknowns_for(qtype: str, slots: Mapping[str, Any]) -> tuple[str, ...]:
    """What a right answer to this type needs and the post does not say (the answer states what it assumed)."""
    need = {"serving": ("max_model_len", "input_tokens", "output_tokens", "engine"),
            "plan": ("samples", "seq_len", "epochs", "method"), "feasibility": ("method", "seq_len"),
            "min_gpus": ("method", "seq_len"), "diagnose": ("gpu", "seq_len", "micro_batch"),
            "capacity": ("method", "seq_len")}.get(qtype, ())
    have = set(slots) | ({"samples"} if any(k in slots for k in ("tokens", "dataset_gb")) else set())
    return tuple(k for k in need if k not in have)
