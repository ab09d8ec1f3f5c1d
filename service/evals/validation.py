"""The validation matrix: every measured run beside the engine, fitcheck-llm and the one-line rule, with errors.

Rows come from the measured anchors (evals/anchors.yaml) or from any file in the training-runs format. Each row
keeps its split (fitted / held-out, fixed by source), its basis (allocated / reserved / nvidia-smi memory,
tokens/s per GPU, MFU, or an OOM) and the reason when a method cannot size it. Summaries group the rows by
method, GPU, scale and context.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from service.catalog.loader import Catalog
from service.evals.anchors import MEASURED, Anchor, anchor_case
from service.evals.peers import PeerResult, fitcheck_memory
from service.evals.runs import Case, Outcome, RunRow, evaluate_case, make_case, rule_figure
from service.sizing.expected_error import error_class, method_class
from service.sizing.verdict import fit_verdict

SHARDED_UNDER_LIMIT = -0.15  # no sharded row may be under-estimated by more than 15 % (issue 22)


@dataclass(frozen=True)
class Row:
    case: Case
    ours: Outcome
    peer: PeerResult
    rule: float | None

    @property
    def id(self) -> str:
        return self.case.row.id

    @property
    def is_memory(self) -> bool:
        return self.case.basis in ("allocated", "reserved", "device")

    @property
    def is_throughput(self) -> bool:
        return self.case.basis in ("tokens_per_gpu", "mfu")

    @property
    def is_oom(self) -> bool:
        return self.case.basis == "oom"

    @property
    def sharded(self) -> bool:
        s = self.case.setup
        return bool(s and self.case.row.gpus > 1 and s.zero_stage >= 2)

    def err(self, value: float | None) -> float | None:
        m = self.case.measured
        if value is None or m is None or self.is_oom:
            return None
        return (value - m) / m

    @property
    def ours_err(self) -> float | None:
        return self.err(self.ours.engine)

    @property
    def peer_err(self) -> float | None:
        return self.err(self.peer.gib) if self.is_memory else None

    @property
    def rule_err(self) -> float | None:
        return self.err(self.rule)

    def rule_verdict(self) -> str:
        if self.rule is None or self.case.capacity_gib is None:
            return ""
        return fit_verdict(self.rule, self.case.capacity_gib).status


def build_row(case: Case) -> Row:
    ours = evaluate_case(case)
    peer = fitcheck_memory(case) if case.basis in ("allocated", "reserved", "device", "oom") else PeerResult(None)
    rule = rule_figure(case) if not case.na else None
    return Row(case, ours, peer, rule)


def rows_from_anchors(anchors: Iterable[Anchor], catalog: Catalog) -> list[Row]:
    return [build_row(anchor_case(a, catalog)) for a in anchors if a.kind in MEASURED]


def rows_from_runs(runs: Iterable[RunRow], catalog: Catalog) -> list[Row]:
    return [build_row(make_case(r, catalog)) for r in runs]


@dataclass(frozen=True)
class Stats:
    n: int
    mae: float  # mean |error|, %
    median: float
    bias: float  # mean signed error, %
    worst: float  # largest |error|, %


def stats(errors: list[float]) -> Stats | None:
    if not errors:
        return None
    a = [abs(e) * 100 for e in errors]
    return Stats(len(errors), statistics.mean(a), statistics.median(a), statistics.mean(errors) * 100, max(a))


def context(seq: int) -> str:
    return "<=1k" if seq <= 1024 else "2k-4k" if seq <= 4096 else ">=8k"


def micro_batch_tokens(tokens: int) -> str:
    return "<2k" if tokens < 2048 else "2k-8k" if tokens < 8192 else ">=8k"


def scale(gpus: int) -> str:
    return "1 GPU" if gpus == 1 else "2-8 GPUs" if gpus <= 8 else "9-128 GPUs" if gpus <= 128 else ">128 GPUs"


def method_group(r: Row) -> str:
    s = r.case.setup
    if s is None:
        return r.case.row.method
    return method_class(s, r.case.row.gpus)


def error_group(r: Row) -> str:
    """The class whose expected error the engine carries for a figure like this row's (service/sizing/
    expected_error.py): the method group, MoE models apart for throughput."""
    s = r.case.setup
    if s is None:
        return r.case.row.method
    return error_class("throughput" if r.is_throughput else "memory", s, r.case.model, r.case.row.gpus)


def class_stats(rows: list[Row]) -> dict[str, dict[str, dict[str, float | None]]]:
    """Per kind and class (with the fallbacks: the method alone, MoE, all): rows, MAE, bias, fitted and held-out
    apart. What scripts/validation_report.py writes to service/sizing/error_table.py."""
    out: dict[str, dict[str, dict[str, float | None]]] = {}
    picks: tuple[tuple[str, Callable[[Row], bool]], ...] = (("memory", lambda r: r.is_memory),
                                                          ("throughput", lambda r: r.is_throughput))
    for kind, pick in picks:
        by: dict[str, list[Row]] = defaultdict(list)
        for r in rows:
            if not pick(r) or r.ours_err is None or r.case.setup is None:
                continue
            klass = error_group(r)
            # an MoE row falls back to the MoE class, not to its method's dense runs
            keys = {klass, "MoE" if klass.startswith("MoE ") else r.case.setup.method, "all"}
            for k in keys:
                by[k].append(r)
        table: dict[str, dict[str, float | None]] = {}
        for k in sorted(by):
            errs = [e for r in by[k] if (e := r.ours_err) is not None]
            held = [e for r in by[k] if r.case.split == "held-out" and (e := r.ours_err) is not None]
            fitted = [e for r in by[k] if r.case.split == "fitted" and (e := r.ours_err) is not None]
            st, hs, fs = stats(errs), stats(held), stats(fitted)
            assert st is not None
            table[k] = {"rows": st.n, "mae": round(st.mae, 1), "bias": round(st.bias, 1),
                        "fitted_rows": fs.n if fs else 0, "fitted_mae": round(fs.mae, 1) if fs else None,
                        "held_out_rows": hs.n if hs else 0, "held_out_mae": round(hs.mae, 1) if hs else None}
        out[kind] = table
    return out


def precision_group(r: Row) -> str:
    """The states' precision as the run kept them: amp (fp32 master), pure bf16, DeepSpeed's bf16 master, fp16,
    fp32, fp8; single GPU or sharded apart."""
    s = r.case.setup
    if s is None:
        return "not sized"
    name = {"bf16": "amp-bf16", "pure_bf16": "pure-bf16", "fp16": "fp16", "fp32": "fp32", "fp8": "fp8"}[s.precision]
    if s.precision == "pure_bf16" and s.ds_bf16_master:
        name = "pure-bf16 (DeepSpeed bf16 master)"
    elif s.precision == "pure_bf16" and s.sharding == "deepspeed" and s.zero_stage >= 1:
        name = "pure-bf16 asked, DeepSpeed fp32 master"
    if s.optimizer in ("adamw_8bit", "paged_adamw_8bit"):
        name += ", 8-bit Adam"
    return name + (", sharded" if r.sharded else ", one GPU" if r.case.row.gpus == 1 else ", replicated")


GROUPS: dict[str, Callable[[Row], str]] = {
    "class": error_group,
    "split": lambda r: r.case.split,
    "precision": precision_group,
    "method": method_group,
    "GPU": lambda r: r.case.gpu.id if r.case.gpu else "not stated",
    "scale": lambda r: scale(r.case.row.gpus),
    "context": lambda r: context(r.case.setup.seq_len if r.case.setup else 2048),
    # tokens one GPU runs per micro-batch: the one-line rule's 40 % MFU is a large-GEMM figure
    "micro-batch tokens": lambda r: micro_batch_tokens(r.case.setup.seq_len * r.case.setup.micro_batch
                                                       if r.case.setup else 2048),
    # rows whose sequence length or micro-batch the source leaves out are sized at the engine's defaults
    "shape": lambda r: "seq and batch stated" if r.case.row.seq_len and r.case.row.micro_batch
    else "seq or batch assumed",
}


def oom_violations(rows: list[Row]) -> list[Row]:
    """OOM rows the engine calls "fits"."""
    return [r for r in rows if r.is_oom and r.ours.verdict == "fits"]


def sharded_under(rows: list[Row]) -> list[Row]:
    return [r for r in rows if r.is_memory and r.sharded and r.ours_err is not None
            and r.ours_err < SHARDED_UNDER_LIMIT]
