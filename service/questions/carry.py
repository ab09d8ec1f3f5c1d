"""A conversation keeps only what continues. A message that continues the last question (the frame's `continues`:
'那两张呢', 'what about two of them?', 'and on JD Cloud?', 'with FP8?', '那全参呢') is that question with its own
changes on top; a message that asks something new starts from defaults and carries nothing. What a continuation
carried over is named, so the answer can say it ("按上文：预算 ¥5,000/月、只用京东云").

    continued(frame, prev, bare) -> (frame, carried)

`bare` is a follow-up with no question of its own: it asks the previous question again (its task and asked). A
continuation to another task ('Qwen2-7B LoRA 10万条' then '那上线呢') carries the model only: a training budget
or dataset says nothing about a serving deployment.
"""

from __future__ import annotations

from typing import TypeVar

from pydantic import BaseModel

from service.frame import Frame, Load, Setup

M = TypeVar("M", bound=BaseModel)
# What a continuation carried, by the path of the field taken, as the answer names it
_LABELS = {"models": "model", "method": "method", "objective": "method", "hardware.gpu": "gpu",
           "hardware.gpu_memory_gb": "gpu", "hardware.instance": "gpu", "hardware.gpu_count": "gpu_count",
           "hardware.cloud": "clouds", "constraints.clouds": "clouds", "constraints.budget_cny": "budget",
           "constraints.budget_period": "budget", "constraints.deadline_hours": "deadline",
           "constraints.billing": "billing", "constraints.gpu_include": "gpu_filter",
           "constraints.gpu_exclude": "gpu_filter", "constraints.objective": "objective"}


def _stated(value: object) -> bool:
    return value is not None and value != () and value != [] and value is not False


def overlay(base: M, top: M, skip: frozenset[str] = frozenset()) -> tuple[M, list[str]]:
    """`top` with every field it leaves unsaid taken from `base` (nested parts field by field); the names of the
    fields taken."""
    update: dict[str, object] = {}
    taken: list[str] = []
    for name in type(top).model_fields:
        if name in skip:
            continue
        mine, theirs = getattr(top, name), getattr(base, name)
        if isinstance(mine, BaseModel) and isinstance(theirs, BaseModel):
            merged, sub = overlay(theirs, mine)
            if sub:
                update[name] = merged
                taken += [f"{name}.{s}" for s in sub]
        elif not _stated(mine) and _stated(theirs):
            update[name] = theirs
            taken.append(name)
    return (top.model_copy(update=update) if update else top), taken


def _setup(prev: Setup, cur: Setup, same_task: bool) -> tuple[Setup, list[str]]:
    if not same_task:  # another task: the model only
        if cur.models or not prev.models:
            return cur, []
        return cur.model_copy(update={"models": prev.models}), ["models"]
    skip = frozenset({"role", "outcome"})
    if cur.hardware.gpu is not None or cur.hardware.gpu_memory_gb is not None:
        # another card: its memory is the new card's, never the old one's
        prev = prev.model_copy(update={"hardware": prev.hardware.model_copy(
            update={"gpu": None, "gpu_memory_gb": None, "instance": None})})
    return overlay(prev, cur, skip)


def _names(taken: list[str]) -> tuple[str, ...]:
    out: list[str] = []
    for path in taken:
        label = _LABELS.get(path) or {"data": "data", "load": "load", "knobs": "knobs"}.get(path.split(".")[0])
        if label and label not in out:
            out.append(label)
    return tuple(out)


def _scaled(load: Load, prev: Load) -> Load:
    """'并发翻倍呢': the previous load times the factor the message says."""
    if load.scale is None:
        return load
    update: dict[str, object] = {"scale": None}
    if load.concurrency is None and prev.concurrency is not None:
        update["concurrency"] = max(1, round(prev.concurrency * load.scale))
    if load.request_rate is None and prev.request_rate is not None:
        update["request_rate"] = prev.request_rate * load.scale
    return load.model_copy(update=update)


def continued(frame: Frame, prev: Frame | None, bare: bool = False) -> tuple[Frame, tuple[str, ...]]:
    """The question the message asks in its conversation (the module docstring), and what it carried."""
    if prev is None or not frame.continues:
        return frame, ()
    task = prev.task if bare or frame.task == "none" else frame.task
    asked = prev.asked if bare or frame.asked == "other" else frame.asked
    same_task = task == prev.task
    setup, taken = _setup(prev.setup, frame.setup, same_task)
    carried = list(taken)
    setups = list(frame.setups) or [setup]
    setups[frame.asked_setup if frame.setups else 0] = setup
    update: dict[str, object] = {"task": task, "asked": asked, "setups": tuple(setups)}
    if not frame.setups and len(prev.setups) > 1:
        update["setups"] = tuple(s if i != prev.asked_setup else setup for i, s in enumerate(prev.setups))
        update["asked_setup"] = prev.asked_setup
    if same_task:
        data, d_taken = overlay(prev.data, frame.data)
        constraints, c_taken = overlay(prev.constraints, frame.constraints)
        load, l_taken = overlay(prev.load, _scaled(frame.load, prev.load))
        update.update(data=data, constraints=constraints, load=load)
        carried += [f"data.{k}" for k in d_taken] + [f"constraints.{k}" for k in c_taken]
        carried += [f"load.{k}" for k in l_taken]
        for key in ("fact", "target", "compared"):
            if getattr(frame, key) is None and getattr(prev, key) is not None:
                update[key] = getattr(prev, key)
        if not frame.options and prev.options:
            update["options"] = prev.options
        if not frame.names and prev.names and frame.fact is None:
            update["names"] = prev.names
    return frame.model_copy(update=update), _names(carried)
