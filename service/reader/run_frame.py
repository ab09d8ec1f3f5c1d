"""The frame with what a post about a run states beyond the reader's slots: the settings and flags, the machines,
a pasted CUDA error's figures, when and how the run went wrong (service/reader/run_knobs.py, cuda_error.py); for a
server's post, the setups its words contrast and what went wrong (service/reader/serve_setups.py: 'tp4能跑，tp8就
oom', 'HF能跑 vllm OOM', 'TP8 vs TP4'). Only fields the reader left unset are filled: a setup's own knob is kept."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from service.frame import Frame, Outcome, Setup
from service.reader.cuda_error import find_cuda_error
from service.reader.run_knobs import hardware, names_npu, outcome, serve_knobs, train_knobs
from service.reader.serve_setups import ServeRead, read_serve

ASCEND_CARD = "ASCEND-910B2"  # the Ascend card people rent, for an NPU post that names none
GPU_MARK = "\x01"  # the reader blanks a GPU's name with this (service/reader/constraints.py)
_STATUS = {"oom": "oom", "worked": "worked"}


def _fill(model: BaseModel, found: dict[str, Any]) -> Any:
    update = {k: v for k, v in found.items() if getattr(model, k, None) is None}
    return model.model_copy(update=update) if update else model


def _outcome(seen: Outcome | None, found: dict[str, Any], text: str) -> Outcome | None:
    err = find_cuda_error(text)
    figures = {k: getattr(err, k) for k in ("allocate_gb", "card_gb", "free_gb", "process_gb", "other_gb")
               if getattr(err, k) is not None}
    runs = found.pop("runs", False)
    kind = found.pop("kind", None)
    status = found.pop("status", None)
    if seen is None and kind in ("oom", "slow"):
        seen = Outcome(status=status or kind, kind=kind)
    elif seen is not None and seen.kind is None and kind in ("oom", "slow"):
        seen = seen.model_copy(update={"kind": kind, "status": status or seen.status})
    if seen is None:
        if err.found:
            seen = Outcome(status="oom", kind="oom")
        elif kind == "scaling":
            seen = Outcome(status="slow", kind="scaling")
        elif runs:
            seen = Outcome(status="worked")
        else:
            return None
    elif kind == "scaling" and seen.kind in (None, "slow", "hours", "util"):
        seen = seen.model_copy(update={"kind": "scaling", "status": "slow"})
    out: Outcome = _fill(seen, {**found, **figures})
    return out


def _gpu_positions(marked: str, gpus: tuple[str, ...]) -> tuple[tuple[int, str], ...]:
    """Where each GPU the reader named sits in the text: its blanked run, in order."""
    runs: list[int] = []
    i = 0
    while (i := marked.find(GPU_MARK, i)) >= 0:
        runs.append(i)
        while i < len(marked) and marked[i] == GPU_MARK:
            i += 1
    return tuple(zip(runs, gpus, strict=False))


def _is_server(frame: Frame) -> bool:
    return frame.task == "serve" or frame.task != "train" and any(s.knobs.engine for s in frame.setups)


def _served(r: ServeRead, found: dict[str, Any]) -> dict[str, Any]:
    """What a server's post says went wrong (an OOM or error, memory creeping up, a speed, FP8 that runs)."""
    out = dict(found)
    if r.asked in ("oom", "growth"):
        out.setdefault("status", "oom")
        out.setdefault("kind", "oom")
        if r.asked == "growth":
            out["where"] = "inference"
    elif r.asked == "slow":
        out.setdefault("status", "slow")
        out.setdefault("kind", "slow")
    elif r.asked == "why_runs":
        out["runs"] = True
    if r.tokens_per_s is not None:
        out.setdefault("tokens_per_s", r.tokens_per_s)
    return out


def _server_setups(frame: Frame, r: ServeRead) -> tuple[tuple[Setup, ...], int] | None:
    """The setups a server's post contrasts (by TP, engine or card), each with what it did; None for one setup."""
    if len(r.setups) < 2:
        return None
    values = [(x.engine, x.tp, x.gpu) for x in r.setups]
    if len(set(values)) < len(values):
        return None  # the same engine named twice ('vllm ... huggingface.co ... vllm'): no contrast
    base = frame.setup
    out: list[Setup] = []
    for x in r.setups:
        knobs = base.knobs.model_copy(update={k: v for k, v in (("engine", x.engine), ("tp", x.tp)) if v})
        hw = base.hardware.model_copy(update={"gpu": x.gpu}) if x.gpu else base.hardware
        seen = Outcome(status=_STATUS[x.outcome], kind="oom" if x.outcome == "oom" else None) \
            if x.outcome in _STATUS else None
        role = "failed" if x.outcome == "oom" else "worked" if x.outcome == "worked" else "alternative"
        out.append(base.model_copy(update={"knobs": knobs, "hardware": hw, "outcome": seen, "role": role}))
    failing = next((i for i, x in enumerate(r.setups) if x.outcome == "oom"), 0)  # else the one named first
    seen = base.outcome  # what the post saw (memory in use, a speed) stays with the setup asked about
    asked = out[failing].model_copy(update={"role": "asked"})
    if seen is not None and seen.kind is not None:
        asked = asked.model_copy(update={"outcome": seen})
    return tuple(asked if i == failing else s for i, s in enumerate(out)), failing


def with_run_figures(frame: Frame, marked: str, gpus: tuple[str, ...] = ()) -> Frame:
    """`frame` with the run's settings, machines and error figures the text states filled in. `marked`: the text
    with names blanked (model names NUL, GPU names GPU_MARK, as the reader marks them); `gpus`: the GPUs named."""
    if not frame.setups:
        return frame
    text = marked.replace("\x00", " ").replace(GPU_MARK, " ")
    knobs = {**train_knobs(text), **serve_knobs(text)}
    if frame.task == "serve":
        knobs.pop("precision", None)  # a server's bf16 is its weights' dtype, not a training precision
    hw = hardware(text)
    seen = outcome(text)
    npu = names_npu(text)
    if _is_server(frame):
        r = read_serve(text, _gpu_positions(marked, gpus))
        seen = _served(r, seen)
        contrast = _server_setups(frame, r)
        if contrast is not None:
            frame = frame.model_copy(update={"setups": contrast[0], "asked_setup": contrast[1]})
    asked = frame.setup
    setups: list[Setup] = []
    for s in frame.setups:
        h = _fill(s.hardware, hw)
        if h.gpu is None and npu:
            h = h.model_copy(update={"gpu": ASCEND_CARD})
        if h.gpu_count is None and h.gpus_per_node:
            h = h.model_copy(update={"gpu_count": h.gpus_per_node * (h.nodes or 1)})
        out = _outcome(s.outcome, dict(seen), text) if s is asked else s.outcome
        setups.append(s.model_copy(update={"knobs": _fill(s.knobs, knobs), "hardware": h, "outcome": out}))
    return frame.model_copy(update={"setups": tuple(setups)})
