"""Run the candidate causes of one observation, rank them by the gap each explains against the user's own figures,
and settle what the figures allow: the engine's figure beside theirs, whether the observation is what the setup
gives, the one unstated figure that would decide it, and a figure the setup cannot produce.

Ranking: a cause that stops a server from starting (a layout the engine refuses, a kernel the card lacks, weights
beyond the card) comes first; then by the gap explained (GiB for memory, times slower for speed), a cause resting
on an assumed setting weighted ASSUMED_WEIGHT of one the user stated; one that holds only if an unstated setting
is off (`maybe_...`) last.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import TypeVar

from service.planner.causes import host, serve_memory, serve_speed, train_memory, train_speed
from service.planner.causes.cases import RL_STAGES, ServeRun, TrainCase
from service.planner.causes.types import Cause, Diagnosis, Impossible, Misreading, Observed, Quantity
from service.sizing.vision import is_vision

ASSUMED_WEIGHT = 0.6
MEMORY_BAND = (0.7, 1.35)  # nvidia-smi's memory against the estimate: the caching allocator holds more than it uses
SPEED_BAND = (0.5, 1.6)  # an observed rate within this of the engine's is what the setup gives
SERVE_SPEED_BAND = (0.5, 2.0)
OVER_CARD = 1.05  # memory seen above the card by more than this is impossible for one card
SHOULD_SCALE = 1.3  # N cards the engine rates this much faster than the reference: slower is not the setup's doing

C = TypeVar("C")


def _applying(fns: Iterable[Callable[[C], Cause]], case: C) -> list[Cause]:
    return [c for c in (f(case) for f in fns) if c.applies]


def _score(c: Cause) -> float:
    v = c.explains.value if c.explains is not None else 0.0
    return v * (1.0 if c.stated else ASSUMED_WEIGHT)


def ranked(causes: list[Cause], first: Iterable[str] = ()) -> list[Cause]:
    """Blocking causes (`first`) ahead, then by the weighted gap each explains, one cause per code."""
    order = {code: i for i, code in enumerate(first)}
    seen: set[str] = set()
    out = []
    # a cause that holds only if an unstated setting is off ('maybe_') is listed, never put first
    for c in sorted(causes, key=lambda c: (order.get(c.code, len(order)), c.code.startswith("maybe_"), -_score(c))):
        if c.code not in seen:
            seen.add(c.code)
            out.append(c)
    return out


def impossible_memory(seen_gb: float | None, card_gib: float, gpus: int, host_gb: float | None) -> Impossible | None:
    """Memory 'in use' on one card beyond the card itself, and what the figure most likely was."""
    if seen_gb is None or seen_gb <= card_gib * OVER_CARD:
        return None
    why: Misreading
    if gpus > 1 and seen_gb <= card_gib * gpus * OVER_CARD:
        why = "total_not_per_card"
    elif host_gb is not None and abs(seen_gb - host_gb) <= 0.2 * host_gb:
        why = "host_not_gpu"
    elif seen_gb >= 1000 and seen_gb / 1024 <= card_gib * OVER_CARD:
        why = "mb_not_gb"
    else:
        why = "total_not_per_card" if gpus > 1 else "host_not_gpu"
    return Impossible(seen=Quantity.of(seen_gb, "GiB", 1), limit=Quantity.of(card_gib, "GiB", 1), misreading=why)


def _impossible_util(util: float | None) -> Impossible | None:
    if util is None or util <= 100:
        return None
    return Impossible(seen=Quantity.of(util, "x", 0), limit=Quantity.of(100, "x", 0), misreading="percent_over_100")


# --- training ---------------------------------------------------------------------------------------------------


def _train_ask(case: TrainCase) -> str | None:
    """The one unstated figure that decides a training OOM the estimate does not explain."""
    if case.stage in RL_STAGES and case.knobs.num_generations is None:
        return "num_generations"
    if not case.is_stated("micro_batch"):
        return "micro_batch"
    if not case.is_stated("seq_len"):
        return "seq_len"
    if is_vision(case.model) and case.knobs.max_pixels is None and case.knobs.image_slices is None:
        return "max_pixels"
    return None


def train_memory_diagnosis(case: TrainCase, kind: Observed) -> Diagnosis:
    causes = _applying(train_memory.OOM_CAUSES, case)
    need = case.per_gpu_gib
    card = case.seen.card_gb or case.capacity_gib
    other = next((c.explains.value for c in causes if c.code == "other_processes" and c.explains), 0.0)
    expected = Quantity.of(need, "GiB")
    seen = case.seen.memory_gb
    impossible = impossible_memory(seen, case.gpu.memory_gib, case.gpus, case.hardware.host_ram_gb)
    if kind == "train_oom":
        verdict = need > card - other
        first = ("other_processes",) if other and need <= card and need > card - other else ()
        out = ranked(causes, first)
        ask = None if verdict else _train_ask(case)
        observed = Quantity.of(card, "GiB")
        return Diagnosis(observed_kind=kind, causes=out, expected=expected, observed=observed, verdict=verdict,
                         ask=ask, impossible=impossible)
    ratio = (seen / need) if seen and need else None
    settled: bool | None = None if ratio is None or impossible else MEMORY_BAND[0] <= ratio <= MEMORY_BAND[1]
    ask = _train_ask(case) if ratio is not None and ratio > MEMORY_BAND[1] and not impossible else None
    return Diagnosis(observed_kind=kind, causes=ranked(causes), expected=expected,
                     observed=None if seen is None else Quantity.of(seen, "GiB", 1), verdict=settled, ask=ask,
                     impossible=impossible)


def train_slow_diagnosis(case: TrainCase, avg_tokens: int | None, observed_tps: float | None,
                         data_known: bool = True, expected_tps: float | None = None) -> Diagnosis:
    """Slow training: the engine's tokens/s for the setup beside the user's (`observed_tps`: theirs, from tokens/s,
    step time or hours over the data), the causes that slow this setup."""
    causes = _applying(train_speed.SLOW_CAUSES, case) + [c for c in [train_speed.padding(case, avg_tokens)]
                                                          if c.applies]
    rate = expected_tps or case.rate()  # the estimate's rate over the run's mean sequence, where it has one
    expected = Quantity.of(rate, "tok/s", 0)
    impossible = _impossible_util(case.seen.util_pct)
    if observed_tps is None:
        structural = any(c.stated and c.code in ("offload", "zero3_link", "no_bf16", "allreduce_link")
                         for c in causes)
        return Diagnosis(observed_kind="train_slow", causes=ranked(causes), expected=expected,
                         verdict=True if structural else None,
                         ask=None if structural or not data_known else "tokens_per_s", impossible=impossible)
    ratio = rate / observed_tps if observed_tps > 0 else None
    verdict = None if ratio is None else SPEED_BAND[0] <= ratio <= SPEED_BAND[1]
    return Diagnosis(observed_kind="train_slow", causes=ranked(causes), expected=expected,
                     observed=Quantity.of(observed_tps, "tok/s", 0), verdict=verdict, impossible=impossible)


def scaling_diagnosis(case: TrainCase) -> Diagnosis:
    """More GPUs or nodes no faster: the engine's speed-up over one node (a multi-node run) or one card."""
    ref = case.gpus_per_node if case.nodes > 1 else 1
    many, one = case.rate(), case.rate(gpus=ref)
    speedup = many / one if one else 0.0
    causes = ranked(_applying(train_speed.SCALING_CAUSES, case))
    explained = any(c.stated and c.explains is not None and c.explains.value >= SHOULD_SCALE for c in causes)
    verdict = bool(explained or speedup < SHOULD_SCALE)
    return Diagnosis(observed_kind="scaling", causes=causes, expected=Quantity.of(many, "tok/s", 0),
                     reference=Quantity.of(one, "tok/s", 0), reference_gpus=ref, verdict=verdict)


def host_diagnosis(case: TrainCase) -> Diagnosis:
    causes = _applying(host.HOST_CAUSES, case)
    if not causes and case.setup.method in ("full", "pretrain") and case.setup.offload == "none":
        assumed = host.offload_host(replace(case, setup=replace(case.setup, offload="optimizer",
                                                                zero_stage=max(2, case.setup.zero_stage))))
        causes = [assumed.model_copy(update={"stated": False})] if assumed.applies else []
    out = ranked(causes)
    ram = host.host_ram_gb(case)
    top = out[0].explains.value if out and out[0].explains else None
    verdict = True if top is not None and (ram is None or top * 2**30 / 1e9 >= 0.8 * ram) else None
    return Diagnosis(observed_kind="host_oom", causes=out,
                     expected=None if top is None else Quantity.of(top, "GiB", 1),
                     observed=None if ram is None else Quantity.of(ram, "GiB", 0), verdict=verdict)


# --- serving ----------------------------------------------------------------------------------------------------


# The settings that decide an engine's memory beyond the start-up sum, asked when that sum says it starts (the
# phrase table's `ask` keys; vLLM's is max_model_len)
RUNTIME_ASK = {"sglang": "runtime_sglang", "lmdeploy": "runtime_lmdeploy", "tgi": "runtime_tgi",
               "trtllm": "runtime_trtllm"}


def serve_memory_diagnosis(run: ServeRun, kind: Observed) -> Diagnosis:
    m = run.mem
    held = serve_memory.held_gib(run)
    seen = run.seen.memory_gb
    impossible = impossible_memory(seen, run.card_gib, run.setup.gpus, run.hardware.host_ram_gb)
    if kind == "serve_memory":
        causes = ranked(_applying(serve_memory.MEMORY_CAUSES, run))
        reserved = bool(causes) and causes[0].code == "reservation"
        verdict = (True if reserved else None) if seen is None or impossible else (
            m.weights_gib * 0.8 <= seen <= run.card_gib * OVER_CARD)
        return Diagnosis(observed_kind=kind, causes=causes, expected=Quantity.of(held, "GiB", 1),
                         observed=None if seen is None else Quantity.of(seen, "GiB", 1), verdict=verdict,
                         impossible=impossible)
    causes = _applying(serve_memory.OOM_CAUSES, run)
    other = next((c.explains.value for c in causes if c.code == "other_processes" and c.explains), 0.0)
    starts = m.starts and held <= run.card_gib - other
    runtime = run.seen.where == "inference"
    if m.starts:  # what remains a cause of a server that starts on an empty card: others on it, its headroom
        keep = ("other_processes", "no_mla", "runtime_headroom") + (("reservation",) if other else ())
        causes = [c for c in causes if c.code in keep or c.code == "startup_profile" and not runtime]
    blocking = [c.code for c in causes if c.code in serve_memory.BLOCKING]
    out = ranked(causes, [*blocking, "kv_short", "graphs", "other_processes", "runtime_headroom"])
    headroom = any(c.code == "runtime_headroom" for c in out)
    verdict = True if headroom else None if starts and (runtime or not out) else not starts
    ask = RUNTIME_ASK.get(run.engine, "max_model_len") if starts and not out and not runtime else None
    return Diagnosis(observed_kind=kind, causes=out, expected=Quantity.of(m.weights_gib, "GiB", 1),
                     verdict=verdict, ask=ask, impossible=impossible)


def serve_slow_diagnosis(run: ServeRun) -> Diagnosis:
    if not run.mem.starts and run.engine not in serve_memory.UNSIZED:  # slow, yet it does not start as stated
        blocking = [c for c in _applying(serve_memory.OOM_CAUSES, run)
                    if c.code in serve_memory.BLOCKING or c.code in ("kv_short", "graphs")]
        return Diagnosis(observed_kind="serve_slow", causes=ranked(blocking, [c.code for c in blocking]),
                         expected=Quantity.of(run.mem.weights_gib, "GiB", 1))
    causes = _applying(serve_speed.SLOW_CAUSES, run)
    single = serve_speed.single_stream_tps(run)
    load = serve_speed.at_load_tps(run)
    seen_tps = run.seen.tokens_per_s
    seen_ttft = run.seen.ttft_ms or run.load.ttft_ms
    ttft = next((c for c in causes if c.code in serve_speed.TTFT_CODES), None)
    if seen_ttft is not None and ttft is not None and ttft.explains is not None:
        # a TTFT at or under the engine's is what the setup gives; a saturated server's grows with the burst's
        # length, so any TTFT from its prefill up is what it gives
        verdict: bool | None = seen_ttft <= ttft.explains.value * SERVE_SPEED_BAND[1] or (
            ttft.code == "ttft_saturated" and seen_ttft >= ttft.detail["prefill_ms"] * SERVE_SPEED_BAND[0])
        return Diagnosis(observed_kind="serve_slow", causes=ranked(causes, list(serve_speed.TTFT_CODES)),
                         expected=ttft.explains, observed=Quantity.of(seen_ttft, "ms", 0), verdict=verdict)
    est = load if (load and run.load.concurrency) else single
    if seen_tps is None or not est:
        first = ["cpu_offload", "no_mla", "pcie_allreduce", "tp_replicas", *serve_speed.TTFT_CODES]
        return Diagnosis(observed_kind="serve_slow", causes=ranked(causes, first),
                         expected=None if not est else Quantity.of(est, "tok/s", 1),
                         verdict=True if any(c.code == "cpu_offload" for c in causes) else None,
                         ask=None if est is None else "tokens_per_s")
    ratio = seen_tps / est
    verdict = ratio >= SERVE_SPEED_BAND[0]
    if verdict:  # what the setup gives: the bandwidth bound names the figure
        first = ["cpu_offload", "decode_bandwidth"]
    else:
        first = ["cpu_offload", "no_mla", "pcie_allreduce", "tp_replicas", "fp8_weight_only"]
    return Diagnosis(observed_kind="serve_slow", causes=ranked(causes, first), expected=Quantity.of(est, "tok/s", 1),
                     observed=Quantity.of(seen_tps, "tok/s", 1), verdict=verdict)
