"""The question type, decided in one place from the frame: what is asked (`asked`) about what (`task`), with the few
things beside them that change the type: an observation of the setup asked about (a diagnosis), a measured
baseline with a change to it (a ratio: savings by time), the catalog names or fact asked (the catalog's tables),
the documents asked for (a plan).

    question_type(frame) -> type

Both readers call it (passed in: the reader sits below the spine), the turn calls it again on the conversation's
frame when a message continues the last question. The (task, asked) table is the modules' own declarations
(service/questions/registry.py `frames`).
"""

from __future__ import annotations

from functools import cache

from service.frame import Frame, Outcome

# A question about a run's time or speed with the run's own figure is a diagnosis ('一个epoch要20小时', read as a
# time question); one that asks how many cards or how much memory stays a sizing question whatever the run did
# ('32卡oom了，需要多少张A100': the count), as does 'can 8x40G do it?' after an OOM (the verdict)
# Facts the catalog's tables answer as such (prices, families, instances, billing); a GPU's features and who sells
# it are the knowledge type's facts
CATALOG_FACTS = frozenset({"price", "family", "instances", "cheapest", "break_even", "spot", "side_by_side",
                           "billing"})
_OBSERVED_ASKS = frozenset({"time", "throughput", "latency"})
_SERVE_ASKS = frozenset({"fits", "count", "memory", "concurrency", "throughput", "latency", "cost", "plan", "time",
                         "host"})
_TRAIN_ASKS = {"fits": "feasibility", "count": "min_gpus", "memory": "min_gpus", "plan": "plan", "time": "plan",
               "cost": "plan", "host": "plan", "concurrency": "serving", "throughput": "serving",
               "latency": "serving"}


@cache
def _table() -> dict[tuple[str, str], str]:
    from service.questions.registry import frame_table

    return frame_table()


def asked_observation(frame: Frame) -> Outcome | None:
    """What the user saw of the setup the question is about: its own outcome, or (one setup, or none marked as
    the change) the outcome the post reports. A measured baseline beside an untried alternative is not it."""
    own = frame.setup.outcome
    if own is not None and own.kind is not None:
        return own
    if frame.setup.role in ("alternative",) or any(s.role == "alternative" for s in frame.setups):
        return None
    return frame.observation


def measured_baseline(frame: Frame) -> bool:
    """A run they measured (hours, tokens/s) and another setup they ask about: '4 张 A10 训了 30 小时，换 2 张 A100
    要多久'."""
    if len(frame.setups) < 2 or frame.setup.outcome is not None:
        return False
    return any(s.outcome is not None and (s.outcome.hours or s.outcome.tokens_per_s or s.outcome.step_s)
               for i, s in enumerate(frame.setups) if i != frame.asked_setup)


def has_model(frame: Frame) -> bool:
    return any(s.models for s in frame.setups)


def question_type(frame: Frame) -> str:
    """The question type that answers the frame (the module docstring)."""
    task, asked = frame.task, frame.asked
    if frame.documents and (task in ("train", "both") or has_model(frame)) and asked not in ("cause", "fix"):
        return "plan"
    if asked in ("greeting", "other"):
        return "out_of_scope"
    if asked in ("cause", "fix"):
        return "diagnose"
    if asked in _OBSERVED_ASKS and task != "none" and asked_observation(frame) is not None:
        return "diagnose"  # '一个epoch要20小时正常吗' read as a time question about a run that happened
    if asked == "time" and measured_baseline(frame):
        return "savings"  # a ratio: the measured run scaled to the other setup
    if asked in ("winner", "savings") and not has_model(frame) and (
            frame.compared in ("billing", "instance") or frame.fact in ("break_even", "spot", "billing")
            or frame.names or frame.constraints.usage_hours_per_month):
        return "catalog"  # billing or instances weighed with no job: '包月还是按量', 'GN10X 和 GN10Xp 哪个便宜'
    if asked == "winner":
        return "compare"
    if asked == "savings":
        return "savings"
    if asked == "capacity":
        return "capacity"
    if asked in ("price", "fact"):
        if frame.names or frame.fact in CATALOG_FACTS or (asked == "price" and frame.fact is None):
            return "catalog"  # the tables answer it: a price, a family, which instances, the cheapest, billing
        return "knowledge"  # a GPU's feature, who sells it, where: the fact with the guide's passages
    if asked == "howto":
        return "knowledge"
    hit = _table().get((task, asked))
    if hit is not None:
        return hit
    if task == "serve" and asked in _SERVE_ASKS:
        return "serving"
    return _TRAIN_ASKS.get(asked, "knowledge")
