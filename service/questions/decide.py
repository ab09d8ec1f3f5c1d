"""The question type, decided in one place from the frame: what is asked (`asked`) about what (`task`), with the few
things beside them that change the type: an observation of the setup asked about (a diagnosis), a measured
baseline with a change to it (a ratio: savings by time), the catalog names or fact asked (the catalog's tables),
the documents asked for (a plan).

    question_type(frame) -> type

Both readers call it (passed in: the reader sits below the spine), the turn calls it again on the conversation's
frame when a message continues the last question. The (task, asked) table is the modules' own declarations
(service/questions/registry.py `frames`), passed in: registry.decide(frame) binds it.
"""

from __future__ import annotations

from collections.abc import Mapping

from service.frame import Frame, asked_observation, has_model, measured_baseline

Table = Mapping[tuple[str, str], str]

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


def question_type(frame: Frame, table: Table) -> str:
    """The question type that answers the frame (the module docstring); `table` is the spine's (task, asked) ->
    type (service/questions/registry.py `frame_table`, and `decide` there binds it)."""
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
    if asked == "savings" and not has_model(frame) and (
            frame.compared == "billing" or frame.fact in ("break_even", "spot", "billing")
            or frame.constraints.usage_hours_per_month):
        return "savings"  # what a billing change saves with no job: the instances' prices ('两台GN7改包月省多少')
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
        gpu_named = any(s.hardware.gpu for s in frame.setups)
        if frame.names or frame.fact in CATALOG_FACTS or (asked == "price" and frame.fact is None) or (
                frame.fact in ("sells", "regions") and (not gpu_named or frame.fact == "regions")):
            return "catalog"  # the tables answer it: a price, a family, which instances, the cheapest, billing
        return "knowledge"  # a GPU's feature, who sells it, where: the fact with the guide's passages
    if asked == "howto":
        return "knowledge"
    hit = table.get((task, asked))
    if hit is not None:
        return hit
    if task == "serve" and asked in _SERVE_ASKS:
        return "serving"
    return _TRAIN_ASKS.get(asked, "knowledge")
