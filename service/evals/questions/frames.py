"""Stored frames of the labelled questions: what an LLM wrote reading each user message with prompts/reader.md and
the FrameDraft schema, as a provider would (evals/questions/frames/<split>/*.jsonl, one line per case:
{"id", "frames": [one FrameDraft per user message: the earlier turns, then the question]}).

Two readings are served from them (service/evals/questions/frame_server.py):

    stored   the frames as the LLM wrote them: the LLM-reader path with a perfect provider of today's LLMs
    gold     the same frames with the case's own label applied to the question's frame (its task and asked,
             and the slots the label states): the answer layer's ceiling, reading and answering measured apart

The gold frame keeps everything the label does not speak to (knobs, outcomes, setups), so it is as rich as the
LLM's reading and as right as the label.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from pydantic import ValidationError

from service.evals.questions.dataset import QUESTIONS_DIR, Question, Split
from service.reader.llm_schema import FrameDraft
from service.reader.read import TYPE_FRAME

FRAMES_DIR = QUESTIONS_DIR / "frames"
# A label's slots and where they go in a frame draft: (section, field); section "setup" is the asked setup's
# own fields, "knobs" / "hardware" its parts.
_SLOT_PATH = {
    "method": ("setup", "method"), "stage": ("setup", "objective"),
    "gpu": ("hardware", "gpu"), "gpu_count": ("hardware", "gpu_count"), "gpu_memory_gb": ("hardware", "gpu_memory_gb"),
    "seq_len": ("knobs", "seq_len"), "micro_batch": ("knobs", "micro_batch"), "zero_stage": ("knobs", "zero_stage"),
    "lora_rank": ("knobs", "lora_rank"), "quant_bits": ("knobs", "quant_bits"), "engine": ("knobs", "engine"),
    "tp": ("knobs", "tp"), "max_model_len": ("knobs", "max_model_len"), "weights": ("knobs", "weights"),
    "kv_dtype": ("knobs", "kv_dtype"),
    "samples": ("data", "samples"), "tokens": ("data", "tokens"), "epochs": ("data", "epochs"),
    "avg_tokens_per_sample": ("data", "avg_tokens_per_sample"), "dataset_gb": ("data", "dataset_gb"),
    "budget_cny": ("constraints", "budget_cny"), "budget_period": ("constraints", "budget_period"),
    "deadline_hours": ("constraints", "deadline_hours"), "clouds": ("constraints", "clouds"),
    "billing": ("constraints", "billing"), "objective": ("constraints", "objective"),
    "concurrency": ("load", "concurrency"), "request_rate": ("load", "request_rate"),
    "input_tokens": ("load", "input_tokens"), "output_tokens": ("load", "output_tokens"),
    "ttft_ms": ("load", "ttft_ms"), "tpot_ms": ("load", "tpot_ms"), "target": ("frame", "target"),
}
_ENUM_SLOTS = {"engine", "weights", "kv_dtype", "billing", "objective", "budget_period", "method", "stage"}


def frame_files(split: Split, root: Path = FRAMES_DIR) -> list[Path]:
    return sorted((root / split).glob("*.jsonl"))


def load_frames(split: Split, root: Path = FRAMES_DIR) -> dict[str, list[FrameDraft]]:
    """case id -> its frames (one per user message), from every file of the split. A malformed line raises
    ValueError naming the file and the line."""
    out: dict[str, list[FrameDraft]] = {}
    for path in frame_files(split, root):
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                out[str(row["id"])] = [FrameDraft.model_validate(f) for f in row["frames"]]
            except (ValueError, KeyError, TypeError, ValidationError) as exc:
                raise ValueError(f"{path.name} line {n}: {str(exc)[:300]}") from exc
    return out


def _set(data: dict[str, object], section: str, key: str, value: object) -> None:
    if section == "frame":
        data[key] = value
        return
    if section in ("data", "constraints", "load"):
        part = data.setdefault(section, {})
        assert isinstance(part, dict)
        part[key] = value
        return
    setups = data.setdefault("setups", [])
    assert isinstance(setups, list)
    if not setups:
        setups.append({})
    which = data.get("asked_setup", 0)
    setup = setups[which if isinstance(which, int) and which < len(setups) else 0]
    assert isinstance(setup, dict)
    if section == "setup":
        setup[key] = value
    else:
        setup.setdefault(section, {})[key] = value


def gold_draft(q: Question, draft: FrameDraft, frame_type: str | None = None) -> FrameDraft:
    """The question's frame with its label applied: the labelled task and asked (the frame label's, else the ones
    its type implies when the LLM's frame reads as another type), the labelled model and slots in the asked setup.
    `frame_type` is the type the draft reads as (service/questions/decide.py), when known."""
    data = draft.model_dump(exclude_defaults=True)
    if q.frame is not None:
        data["task"], data["asked"] = q.frame.task, q.frame.asked
    elif frame_type is not None and frame_type != q.type and q.type in TYPE_FRAME:
        data["task"], data["asked"] = TYPE_FRAME[q.type]
    slots = q.slots
    if slots.get("model") or slots.get("params_b"):
        model: dict[str, object] = {"name": str(slots.get("model") or f"{slots['params_b']:g}B")}
        if slots.get("params_b") and not slots.get("model"):
            model["params_b"] = float(slots["params_b"])
        _set(data, "setup", "models", [model])
    for key, value in slots.items():
        where = _SLOT_PATH.get(key)
        if where is None or value is None:
            continue
        _set(data, where[0], where[1], str(value) if key in _ENUM_SLOTS else value)
    try:
        return FrameDraft.model_validate(data)
    except ValidationError:
        return draft  # a label outside the schema's vocabulary: the LLM's frame as it is


def gold_frames(questions: Iterable[Question], stored: dict[str, list[FrameDraft]],
                type_of: object = None) -> dict[str, list[FrameDraft]]:
    """The gold frames of the questions that have stored frames: the earlier turns as stored, the question's own
    frame with its label applied. `type_of(draft) -> type` names the type a draft reads as (or None)."""
    out: dict[str, list[FrameDraft]] = {}
    for q in questions:
        frames = stored.get(q.id)
        if not frames:
            continue
        last = frames[-1]
        reads_as = type_of(last) if callable(type_of) else None
        out[q.id] = [*frames[:-1], gold_draft(q, last, reads_as if isinstance(reads_as, str) else None)]
    return out
