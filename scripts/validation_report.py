"""Write docs/validation.md: every measured training run beside the engine, fitcheck-llm and the one-line rule.

The matrix is generated, never edited: CI runs this script and compares its output with the committed file
(tests/evals/test_validation_report.py). With --runs it evaluates any file in the training-runs format instead
(e.g. runs kept outside the repo) and prints the same report.

Usage: python scripts/validation_report.py [--anchors evals/anchors.yaml] [--runs FILE] [--out docs/validation.md]
       python scripts/validation_report.py --check   (exit 1 when docs/validation.md is stale)
"""

from __future__ import annotations

import argparse
import pprint
import re
import sys
from collections import defaultdict
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from service.catalog.loader import load_catalog  # noqa: E402
from service.evals.anchors import DEFAULT_ANCHORS, load_anchors  # noqa: E402
from service.evals.runs import HELD_OUT_PERCENT, RunRow  # noqa: E402
from service.evals.validation import (  # noqa: E402
    GROUPS,
    SHARDED_UNDER_LIMIT,
    Row,
    class_stats,
    oom_violations,
    rows_from_anchors,
    rows_from_runs,
    sharded_under,
    stats,
)
from service.sizing.expected_error import MIN_HELD_OUT, MIN_ROWS  # noqa: E402

OUT = REPO / "docs" / "validation.md"
ERROR_TABLE = REPO / "service" / "sizing" / "error_table.py"
SERVING_BEGIN = "<!-- BEGIN serving section (service/evals/serving_matrix.py over evals/serving_runs.yaml) -->"
SERVING_END = "<!-- END serving section -->"


def _fitcheck_version() -> str:
    try:
        return version("fitcheck-llm")
    except PackageNotFoundError:
        return "not installed"


def _pct(x: float | None) -> str:
    return "" if x is None else f"{x * 100:+.1f} %"


def _num(x: float | None, unit: str = "") -> str:
    if x is None:
        return "n/a"
    if unit == "MFU":
        return f"{x:.3f}"
    return f"{x:,.1f}" if abs(x) >= 10 else f"{x:.2f}"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def conditions(r: Row) -> str:
    row, s = r.case.row, r.case.setup
    gpu = r.case.gpu.id if r.case.gpu else f"{row.gpu} (not in catalog)"
    head = f"{row.model} · {gpu} x{row.gpus}" + (f" ({row.nodes} nodes)" if row.nodes > 1 else "")
    if s is None:
        return head
    shard = ""
    if row.gpus > 1 or s.offload != "none":
        shard = {"deepspeed": f"ZeRO-{s.zero_stage}", "fsdp": "FSDP", "fsdp2": "FSDP2"}[s.sharding] \
            if s.zero_stage else "DDP"
        shard += f", offload {s.offload}" if s.offload != "none" else ""
    method = s.method + (f" {s.quant_bits}-bit" if s.method == "qlora" else "") + (
        f" r{s.lora_rank} {s.lora_targets.replace('_', '-')}" if s.method in ("lora", "qlora") else "")
    parts = [method, shard, s.precision.replace("_", "-"), s.optimizer.replace("_", "-"),
             f"ckpt {s.checkpointing}", s.attention, s.loss.replace("_", "-"), f"s{s.seq_len} x b{s.micro_batch}",
             row.framework or ""]
    return head + " · " + ", ".join(p for p in parts if p)


def _summary_table(title: str, rows: list[Row], peer: bool) -> list[str]:
    out = [f"**{title}**", ""]
    head = "| rows | split | ours MAE | ours median | ours bias | ours worst | rule MAE |"
    sep = "|---|---|---|---|---|---|---|"
    if peer:
        head += " fitcheck rows | fitcheck MAE | ours MAE on them |"
        sep += "---|---|---|"
    out += [head, sep]
    for split in ("all", "fitted", "held-out"):
        sub = [r for r in rows if split == "all" or r.case.split == split]
        ours = stats([e for r in sub if (e := r.ours_err) is not None])
        if ours is None:
            continue
        rule = stats([e for r in sub if (e := r.rule_err) is not None])
        line = (f"| {ours.n} | {split} | {ours.mae:.1f} % | {ours.median:.1f} % | {ours.bias:+.1f} % | "
                f"{ours.worst:.1f} % | {rule.mae if rule else 0:.1f} % |")
        if peer:
            both = [r for r in sub if r.peer_err is not None and r.ours_err is not None]
            p = stats([e for r in both if (e := r.peer_err) is not None])
            o = stats([e for r in both if (e := r.ours_err) is not None])
            line += (f" {p.n} | {p.mae:.1f} % | {o.mae:.1f} % |" if p and o else " 0 | | |")
        out.append(line)
    return out + [""]


def _mae(xs: list[float]) -> str:
    st = stats(xs)
    return f"{st.mae:.1f} %" if st else ""


def _group_table(rows: list[Row], key: str, peer: bool = False) -> list[str]:
    """Fitted and held-out rows apart, beside fitcheck-llm (memory, single-GPU rows) and the one-line rule."""
    by: dict[str, list[Row]] = defaultdict(list)
    for r in rows:
        by[GROUPS[key](r)].append(r)
    head = f"| {key} | rows | ours MAE | ours bias | fitted rows | fitted MAE | held-out rows | held-out MAE |"
    sep = "|---|---|---|---|---|---|---|---|"
    if peer:
        head += " fitcheck rows | fitcheck MAE | ours MAE on them |"
        sep += "---|---|---|"
    out = [head + " rule MAE |", sep + "---|"]
    for g in sorted(by):
        errs = [e for r in by[g] if (e := r.ours_err) is not None]
        s = stats(errs)
        if s is None:
            continue
        fitted = [e for r in by[g] if r.case.split == "fitted" and (e := r.ours_err) is not None]
        held = [e for r in by[g] if r.case.split == "held-out" and (e := r.ours_err) is not None]
        line = (f"| {g} | {s.n} | {s.mae:.1f} % | {s.bias:+.1f} % | {len(fitted)} | {_mae(fitted)} | {len(held)} | "
                f"{_mae(held)} |")
        if peer:
            both = [r for r in by[g] if r.peer_err is not None and r.ours_err is not None]
            line += (f" {len(both)} | {_mae([e for r in both if (e := r.peer_err) is not None])} | "
                     f"{_mae([e for r in both if (e := r.ours_err) is not None])} |")
        out.append(line + f" {_mae([e for r in by[g] if (e := r.rule_err) is not None])} |")
    return out + [""]


def error_table_source(rows: list[Row]) -> str:
    """service/sizing/error_table.py: the per-class errors the engine carries on its figures."""
    table = class_stats(rows)
    body = pprint.pformat(table, width=116, sort_dicts=True)
    return ('"""Generated by scripts/validation_report.py from the validation matrix (docs/validation.md); do not edit '
            'by hand.\n\nPer kind and class: measured runs, mean |error| %, mean signed error %, fitted and held-out '
            'runs apart.\n"""\n\nfrom __future__ import annotations\n\n'
            f"ERROR_TABLE: dict[str, dict[str, dict[str, float | None]]] = {body}\n")


def expected_error_section(rows: list[Row]) -> list[str]:
    table = class_stats(rows)
    out = ["## Expected error by class", "",
           "What the engine attaches to its figures (`expected_error` on the memory and time results, "
           "`service/sizing/error_table.py`, generated from this matrix): the mean |error| of the class's runs, or "
           f"of its held-out runs where {MIN_HELD_OUT} or more are held out and read worse; a class with fewer than "
           f"{MIN_ROWS} runs falls back to its method (MoE: all MoE runs), then to all runs, pulled up by its own "
           f"runs' error where worse, by their share of {MIN_ROWS}. The fit verdict's tight band is that error "
           "(5 % to 25 %).", ""]
    for kind in ("memory", "throughput"):
        out += [f"**{kind}**", "", "| class | rows | MAE | bias | fitted rows | fitted MAE | held-out rows | "
                "held-out MAE |", "|---|---|---|---|---|---|---|---|"]
        for k, v in table.get(kind, {}).items():
            fm, hm = v.get("fitted_mae"), v.get("held_out_mae")
            out.append(f"| {k} | {v['rows']:.0f} | {v['mae']:.1f} % | {v['bias']:+.1f} % | {v['fitted_rows']:.0f} | "
                       f"{'' if fm is None else f'{fm:.1f} %'} | {v['held_out_rows']:.0f} | "
                       f"{'' if hm is None else f'{hm:.1f} %'} |")
        out.append("")
    return out


def misses_section(rows: list[Row], top: int = 10) -> list[str]:
    """The largest held-out misses (memory and throughput), each with its cause (service/evals/misses.py)."""
    from service.evals.misses import cause

    held = [r for r in rows if r.case.split == "held-out" and r.ours_err is not None]
    held.sort(key=lambda r: -abs(r.ours_err or 0.0))
    out = ["## Largest held-out misses", "", f"The {top} held-out runs the engine misses most, with the cause as far "
           "as each row shows it. They stay held out: no constant was set from them.", "",
           "| run | figure | measured | ours | error | cause |", "|---|---|---|---|---|---|"]
    for r in held[:top]:
        figure = "memory GiB/GPU" if r.is_memory else ("MFU" if r.case.basis == "mfu" else "tokens/s/GPU")
        out.append(f"| {r.id} | {figure} | {_num(r.case.measured)} | {_num(r.ours.engine)} | {_pct(r.ours_err)} | "
                   f"{_cell(cause(r.id))} |")
    return out + [""]


def _source(r: Row) -> str:
    src = r.case.row.source
    url = src.split(" ")[0]
    return f"[{r.case.row.source_group}]({url})" if url.startswith("http") else _cell(src)


def _measured_text(r: Row) -> str:
    m = r.case.row.measured
    as_written = f"{m.value:g} {m.unit}" if m.value is not None and m.unit else ""
    kind = {"allocated": "allocated", "reserved": "reserved", "device": "nvidia-smi"}.get(r.case.basis, "")
    if r.is_memory and r.case.row.measured.memory_kind == "peak-unknown":
        kind = "peak, kind not stated (vs device total)"
    norm = _num(r.case.measured, "MFU" if r.case.basis == "mfu" else "")
    return f"{as_written} {kind} = {norm}".strip()


def _why(r: Row) -> str:
    return r.ours.error or r.case.na


def memory_rows(rows: list[Row]) -> list[str]:
    out = ["| id | split | source | conditions | measured (as written = GiB/GPU) | ours GiB | ours err | "
           "fitcheck GiB | fitcheck err | rule GiB | rule err | assumed (framework defaults, unstated settings) |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        peer = _num(r.peer.gib) if r.peer.gib is not None else f"n/a: {r.peer.reason}"
        ours = _num(r.ours.engine) if r.ours.engine is not None else f"n/a: {_why(r)}"
        out.append(f"| {r.id} | {r.case.split} | {_source(r)} | {_cell(conditions(r))} | {_measured_text(r)} | "
                   f"{_cell(ours)} | {_pct(r.ours_err)} | {_cell(peer)} | {_pct(r.peer_err)} | {_num(r.rule)} | "
                   f"{_pct(r.rule_err)} | {_cell('; '.join(r.case.assumed))} |")
    return out + [""]


def throughput_rows(rows: list[Row]) -> list[str]:
    out = ["| id | split | source | conditions | measured (as written = per GPU) | ours | ours err | rule | rule err | "
           "assumed |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        unit = "MFU" if r.case.basis == "mfu" else ""
        ours = _num(r.ours.engine, unit) if r.ours.engine is not None else f"n/a: {_why(r)}"
        out.append(f"| {r.id} | {r.case.split} | {_source(r)} | {_cell(conditions(r))} | {_measured_text(r)} | "
                   f"{_cell(ours)} | {_pct(r.ours_err)} | {_num(r.rule, unit)} | {_pct(r.rule_err)} | "
                   f"{_cell('; '.join(r.case.assumed))} |")
    return out + [""]


def oom_rows(rows: list[Row]) -> list[str]:
    out = ["| id | split | source | conditions | card GiB usable | ours need GiB | ours verdict | fitcheck | rule verdict |",
           "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        ours = f"{_num(r.ours.engine)}" if r.ours.engine is not None else f"n/a: {_why(r)}"
        verdict = r.ours.verdict or "n/a"
        if verdict == "fits":
            verdict = "**fits (wrong: the run went out of memory)**"
        peer = (f"{_num(r.peer.gib)} GiB, {r.peer.verdict}" if r.peer.gib is not None else f"n/a: {r.peer.reason}")
        out.append(f"| {r.id} | {r.case.split} | {_source(r)} | {_cell(conditions(r))} | "
                   f"{_num(r.case.capacity_gib)} | {_cell(ours)} | {verdict} | {_cell(peer)} | "
                   f"{r.rule_verdict() or 'n/a'} |")
    return out + [""]


def sources_section(rows: list[Row]) -> list[str]:
    """Every source document: its rows by kind and the split its name fixed."""
    by: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    split: dict[str, str] = {}
    for r in rows:
        g = r.case.row.source_group
        by[g]["memory" if r.is_memory else "throughput" if r.is_throughput else "oom"] += 1
        split[g] = r.case.split
    out = ["## Sources", "", f"{len(by)} source documents; the split follows the document's name (above).", "",
           "| source group | split | memory | throughput | OOM |", "|---|---|---|---|---|"]
    for g in sorted(by):
        c = by[g]
        out.append(f"| {g} | {split[g]} | {c['memory']} | {c['throughput']} | {c['oom']} |")
    return out + [""]


def calibration_section(rows: list[Row]) -> list[str]:
    """Per-class throughput calibration and the 6N prior against the engine, fitted rows left out by source
    (service/evals/calibration.py)."""
    from service.evals.calibration import SHRINK_K, chosen, factor_table, points, scores

    pts = points(rows)
    found = scores(pts)
    if not found:
        return []
    out = ["## Throughput: per-class calibration and the 6N prior", "",
           "Four estimators on the same throughput rows (`service/evals/calibration.py`): the engine's node model; "
           "the engine times its class's measured / engine ratio over the fitted sources (each source weighs once), "
           f"shrunk by S / (S + {SHRINK_K:g}) for S fitted sources; that figure pulled toward the 6N rule by "
           f"{SHRINK_K:g} / (S + {SHRINK_K:g}) (a class with no fitted source is the rule); and the rule alone (6 x N "
           "FLOPs per token at 40 % MFU). Fitted rows are scored leave-one-source-out: a source's own rows never set "
           "its class's factor, so the figure says how each estimator does on a source it was not fitted on. The "
           "product keeps the estimator with the lowest error there; held-out rows are scored with the factors of "
           "every fitted source and never chose anything.", "",
           "| estimator | split | rows | MAE | median | MAE by source |", "|---|---|---|---|---|---|"]
    for s in found:
        out.append(f"| {s.estimator} | {s.split} | {s.n} | {s.mae:.1f} % | {s.median:.1f} % | {s.source_mae:.1f} % |")
    pick = chosen(found)
    out += ["", f"Chosen on the fitted rows: **{pick}**" + (
        " (the per-class factors and the rule's prior do worse on sources they were not fitted on, so the "
        "product's figure is the node model's)." if pick == "engine" else "."), "",
        "| class | fitted sources | measured / engine | weight |", "|---|---|---|---|"]
    out += [f"| {c} | {n} | {f:.2f} | {w:.2f} |" for c, n, f, w in factor_table(pts)]
    return out + [""]


def traces_section() -> list[str]:
    """The engine's activation and state terms against the fake-tensor traces (service/evals/traces.py)."""
    from service.evals.traces import TERMS, TRACES_DIR, comparisons, summary

    rows = comparisons(TRACES_DIR) if TRACES_DIR.exists() else []
    if not rows:
        return []
    excluded = [c for c in rows if c.excluded]
    reasons = sorted({c.excluded.split(":")[0] for c in excluded})
    out = ["## Activation and state terms against traces of the model code", "",
           "One training step of each architecture's transformers code, cut to 2 layers at full width, traced under "
           "PyTorch's FakeTensorMode + MemTracker (`scripts/trace_memory.py` -> `evals/traces/`): the engine sizes "
           "the same cut-down model and setup (`service/evals/traces.py`). Mean |error| % per term (traces): "
           "`layer` what one decoder layer keeps, `activations` the step's transient peak, `peak` the allocated "
           "peak of a later step with gradients held, then the persistent states.", "",
           "| architecture | " + " | ".join(TERMS) + " |", "|---|" + "---|" * len(TERMS)]
    for arch, terms in sorted(summary(rows).items(), key=lambda kv: (kv[0] == "all", kv[0])):
        cells = [f"{terms[t][1]:.1f} % ({terms[t][0]})" if t in terms else "" for t in TERMS]
        out.append(f"| {arch} | " + " | ".join(cells) + " |")
    out += ["", f"Traces left out ({len(excluded)}): " + "; ".join(reasons) + ".", ""]
    return out


def render(rows: list[Row], origin: str) -> str:
    mem = [r for r in rows if r.is_memory]
    thr = [r for r in rows if r.is_throughput]
    oom = [r for r in rows if r.is_oom]
    held = sum(1 for r in rows if r.case.split == "held-out")
    out = [
        "# Validation matrix: training memory and throughput",
        "",
        f"Generated by `scripts/validation_report.py` from `{origin}`; do not edit by hand (CI regenerates it and "
        "fails on any difference). Every measured run is listed, failures included.",
        "",
        "- **Split**: the rows held out of fitting were fixed by source before any constant was set: sha1 of the "
        f"row's source group, first 8 hex digits, mod 100 < {HELD_OUT_PERCENT} (`service/evals/runs.py`). "
        f"{held} of {len(rows)} rows are held out. No constant was tuned on them. A source group is named when its "
        "rows are written, before the engine sizes them, by one rule: an issue or pull-request thread is "
        "`<project>-issue-<n>` / `<project>-pr-<n>`, a file in a repository `<project>-example-<file>` or "
        "`<project>-readme-<section or date>`, a paper `paper-<name>`; a new version of a document (another "
        "commit's table) is a new group (see Sources).",
        "- **Memory** is compared on the row's own basis: `allocated` (torch max_memory_allocated) with the engine's "
        "allocated, `reserved` (max_memory_reserved) with its reserved, `nvidia-smi` with reserved + CUDA context + "
        "NCCL; a peak whose kind the source does not state is compared with the device total (what nvidia-smi shows). Units as written: GB and MB "
        "are 10^9 and 10^6 bytes, GiB and MiB 2^30 and 2^20.",
        "- **Throughput** is tokens/s per GPU (aggregate rates divided by the GPU count; s/it converted with the "
        "stated global batch) or MFU where the source gives MFU.",
        "- **Settings** a row leaves unset are filled with its framework's defaults, read from the framework's "
        "source (`service/sizing/frameworks.py`); the last column lists every one assumed.",
        f"- **fitcheck-llm** {_fitcheck_version()} (PyPI), called offline with the row's architecture "
        "(`service/evals/peers.py`); it sizes one GPU, so multi-GPU rows are n/a.",
        "- **Rule**: memory, LLaMA-Factory's README rule (GB per billion parameters: full 18, pure bf16 8, sharded "
        "under ZeRO-3; LoRA 2; QLoRA 8-bit 1, 4-bit 0.5); throughput, 6 x N FLOPs per token at 40 % MFU.",
        "- **Error** = (estimate - measured) / measured. MAE = mean |error|.",
        "- **Hardware**: no GPU was lent to this work (the device draw was 'not drawn'), so `gpu-advisor calibrate` "
        "has not run on a card: every row is a published measurement, none our own.",
        "",
        "## Summary",
        "",
    ]
    out += _summary_table("Memory per GPU", mem, peer=True)
    out += _summary_table("Throughput per GPU", thr, peer=False)
    violations = oom_violations(rows)
    under = sharded_under(rows)
    peer_oom = sum(1 for r in oom if r.peer.verdict and r.peer.verdict != "does_not_fit")
    out += [
        f"**Runs reported out of memory**: {len(oom)}; the engine says *fits* for {len(violations)}"
        + (f" ({', '.join(r.id for r in violations)})" if violations else "")
        + f"; fitcheck does not call {peer_oom} of the single-GPU ones does_not_fit; the rule says fits for "
        f"{sum(1 for r in oom if r.rule_verdict() == 'fits')}.",
        "",
        f"**Sharded rows (ZeRO-2/3, FSDP) under-estimated by more than {-SHARDED_UNDER_LIMIT:.0%}**: {len(under)}"
        + (f" ({', '.join(r.id for r in under)})" if under else "") + ".",
        "",
        f"Rows the engine cannot size: {sum(1 for r in rows if r.ours.engine is None)} (reason in each row).",
        "",
    ]
    out += misses_section(rows)
    out += calibration_section(thr)
    out += expected_error_section(rows)
    out += traces_section()
    for title, sub in (("Memory", mem), ("Throughput", thr)):
        out += [f"## {title} by group", ""]
        for key in GROUPS:
            out += _group_table(sub, key, peer=title == "Memory")
    out += sources_section(rows)
    out += ["## Memory rows", ""] + memory_rows(mem)
    out += ["## Throughput rows", ""] + throughput_rows(thr)
    out += ["## Out-of-memory rows", ""] + oom_rows(oom)
    out += ["## Serving", "", SERVING_BEGIN, "", serving_section(), SERVING_END, ""]
    return "\n".join(out)


def serving_section(runs_path: Path = REPO / "evals" / "serving_runs.yaml") -> str:
    """The serving engine against the measured serving runs (service/evals/serving_matrix.py), its headings one
    level down so it sits under '## Serving'."""
    from service.evals.serving_matrix import evaluate, render_markdown
    from service.evals.serving_rows import load_runs

    checks, skipped = evaluate(load_runs(runs_path), load_catalog(REPO / "knowledge"))
    text = render_markdown(checks, skipped, str(runs_path.resolve().relative_to(REPO)))
    return re.sub(r"^(#+) ", lambda m: "#" * (len(m.group(1)) + 2) + " ", text, flags=re.M)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--anchors", type=Path, default=DEFAULT_ANCHORS)
    parser.add_argument("--runs", type=Path, help="a training-runs file to evaluate instead of the anchors")
    parser.add_argument("--out", type=Path, default=None, help=f"default {OUT.relative_to(REPO)}; '-' = stdout")
    parser.add_argument("--check", action="store_true", help="exit 1 when the committed matrix is stale")
    args = parser.parse_args()
    catalog = load_catalog(REPO / "knowledge")
    if args.runs:
        runs = [RunRow.model_validate(r) for r in yaml.safe_load(args.runs.read_text(encoding="utf-8"))["runs"]]
        text = render(rows_from_runs(runs, catalog), args.runs.name)
    else:
        origin = str(args.anchors.resolve().relative_to(REPO)) if args.anchors.resolve().is_relative_to(REPO) \
            else args.anchors.name
        rows = rows_from_anchors(load_anchors(args.anchors), catalog)
        text = render(rows, origin)
        table = error_table_source(rows)
    if args.check:
        current = OUT.read_text(encoding="utf-8") if OUT.exists() else ""
        stale = [p for p, new in ((OUT, text), (ERROR_TABLE, None if args.runs else table))
                 if new is not None and (p.read_text(encoding="utf-8") if p.exists() else "") != new]
        if current != text and OUT not in stale:
            stale.append(OUT)
        if stale:
            print(", ".join(str(p.relative_to(REPO)) for p in stale) + " stale: run python scripts/validation_report.py",
                  file=sys.stderr)
            return 1
        return 0
    if not args.runs:
        ERROR_TABLE.write_text(table, encoding="utf-8")
    out = args.out or (OUT if not args.runs else Path("-"))
    if str(out) == "-":
        sys.stdout.write(text)
    else:
        out.write_text(text, encoding="utf-8")
        print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
