"""The scorers: pure functions from (what the answer says, what the engine says) to a verdict.

Each returns a `Check`: ok True/False, or None when it does not apply to the scenario (no budget stated, no
warning expected), with a one-line detail for the report.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from service.catalog.loader import Catalog
from service.errors import AdvisorError
from service.evals.dataset import Expect
from service.evals.truth import recheck_fit, top


@dataclass(frozen=True)
class Check:
    ok: bool | None  # None: not applicable to this scenario
    detail: str = ""


NA = Check(None)


@dataclass(frozen=True)
class SlotResult:
    field: str
    gold: Any
    got: Any
    ok: bool


# --- slots --------------------------------------------------------------------------------------------------


def _ids(values: Any, resolve: Callable[[str], str]) -> list[str]:
    out = set()
    for v in values or []:
        try:
            out.add(resolve(str(v)))
        except AdvisorError:
            out.add(str(v))
    return sorted(out)


def normalize_slot(field: str, value: Any, catalog: Catalog) -> Any:
    """Canonical form for comparison: model and GPU names as catalog ids, lists as sorted sets, numbers as float."""
    from service.catalog.queries import resolve_gpu, resolve_model

    if value is None:
        return None
    if field == "model":
        try:
            return resolve_model(str(value), catalog.models).id
        except AdvisorError:
            return str(value)
    if field in ("gpu_include", "gpu_exclude"):
        return _ids(value, lambda name: resolve_gpu(name, catalog.gpus)[0].id)
    if field == "gpu":  # a serving workload's pinned GPU
        return _ids([value], lambda name: resolve_gpu(name, catalog.gpus)[0].id)[0]
    if isinstance(value, list):
        return sorted({str(v) for v in value})
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return value


def same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=1e-3, abs_tol=1e-9)
    return bool(a == b)


def score_slots(gold: dict[str, Any], got: dict[str, Any] | None, catalog: Catalog) -> list[SlotResult]:
    """One result per gold field: the answer's workload value against the gold one, both normalised."""
    out = []
    for name, want in gold.items():
        have = None if got is None else got.get(name)
        a, b = normalize_slot(name, want, catalog), normalize_slot(name, have, catalog)
        out.append(SlotResult(name, want, have, same(a, b)))
    return out


def unstated_slots(gold: dict[str, Any], got: dict[str, Any] | None, serving: bool = False) -> dict[str, Any]:
    """Fields the answer's workload sets away from the schema default that the gold does not state: not scored
    (the config match catches what matters), shown in the report to diagnose a reader that read too much.
    `serving`: the workload is a serving one (ServingWorkload's defaults)."""
    from service.serving_workload import ServingWorkload
    from service.workload import Workload

    fields = (ServingWorkload if serving else Workload).model_fields
    out: dict[str, Any] = {}
    got = got or {}
    for name, value in got.items():
        spec = fields.get(name)
        if name in gold or spec is None:
            continue
        if name == "quant_bits" and value == 4 and got.get("method") == "qlora":
            continue  # QLoRA's default width, made explicit by the reader
        if value != spec.get_default(call_default_factory=True):
            out[name] = value
    return out


# --- the plan -----------------------------------------------------------------------------------------------


def describe(c: dict[str, Any] | None) -> str:
    if c is None:
        return "no candidate"
    s = c["strategy"]
    return f"{c['instance_type']} ({s['method']}, ZeRO-{s['zero_stage']}, {c['total_gpus']} GPU)"


def config_match(got_plan: dict[str, Any] | None, truth_plan: dict[str, Any] | None) -> Check:
    """Same top instance, method and ZeRO stage as the ground truth (or both without a candidate)."""
    if truth_plan is None:
        return NA
    if got_plan is None:
        return Check(False, "the answer has no plan")
    g, t = top(got_plan), top(truth_plan)
    if g is None or t is None:
        return Check(g is None and t is None, f"got {describe(g)}, truth {describe(t)}")
    keys = (g["instance_type"], g["strategy"]["method"], g["strategy"]["zero_stage"])
    want = (t["instance_type"], t["strategy"]["method"], t["strategy"]["zero_stage"])
    return Check(keys == want, f"got {describe(g)}, truth {describe(t)}")


def feasibility(got_plan: dict[str, Any] | None, workload: dict[str, Any] | None, catalog: Catalog) -> Check:
    g = top(got_plan)
    if g is None or workload is None:
        return NA
    try:
        fit = recheck_fit(g, workload, catalog)
    except (AdvisorError, KeyError, ValueError) as exc:
        return Check(False, f"cannot re-size the top pick: {type(exc).__name__}: {exc}")
    return Check(fit.fits, fit.detail)


def verdict(key: str, got_plan: dict[str, Any] | None, truth_plan: dict[str, Any] | None) -> Check:
    """The top pick's `within_budget` / `meets_deadline` against the ground truth's."""
    if truth_plan is None:
        return NA
    if got_plan is None:
        return Check(False, "the answer has no plan")
    g, t = top(got_plan), top(truth_plan)
    have = None if g is None else g.get(key)
    want = None if t is None else t.get(key)
    return Check(have == want and (g is None) == (t is None), f"{key}: got {have}, truth {want}")


def warning_codes(c: dict[str, Any] | None) -> list[str]:
    return [] if c is None else [w["code"] for w in c.get("warnings", [])]


def warnings(expect: Expect, got_plan: dict[str, Any] | None) -> Check:
    if not expect.must_warn:
        return NA
    codes = warning_codes(top(got_plan))
    missing = expect.missing_warnings(codes)
    return Check(not missing, f"missing {', '.join(missing)}" if missing else f"present: {', '.join(codes)}")


def citations(must_cite: bool | list[str] | None, cited: list[dict[str, Any]]) -> Check:
    if must_cite is None or must_cite is False:
        return NA
    ids = [str(c.get("id", "")) for c in cited]
    if must_cite is True:
        return Check(bool(ids), f"{len(ids)} citation(s)")
    hit = [i for i in ids if any(part in i for part in must_cite)]
    return Check(bool(hit), f"cited {', '.join(ids) or 'nothing'}; wanted one of {', '.join(must_cite)}")


_CJK = re.compile(r"[\u3400-\u9fff]")
_CODE = re.compile(r"```.*?```|`[^`]*`|\([^)]*\)|https?://\S+", re.DOTALL)
_WORD = re.compile(r"[A-Za-z]{2,}")


def prose_language(text: str) -> str | None:
    """'zh' or 'en' from the prose (code, links and parenthesised sources left out); None when empty."""
    prose = _CODE.sub(" ", text)
    cjk, words = len(_CJK.findall(prose)), len(_WORD.findall(prose))
    if not cjk and not words:
        return None
    return "zh" if cjk >= 0.5 * words else "en"


def language(expected: str, result: dict[str, Any]) -> Check:
    """The answer's declared language and its prose are both the user's."""
    declared, prose = result.get("language"), prose_language(str(result.get("answer_markdown", "")))
    return Check(declared == expected and prose == expected, f"declared {declared}, prose {prose}")


def expectation_failures(expect: Expect, plan: dict[str, Any] | None) -> list[str]:
    """The expected plan properties that `plan` does not have (the answer's, or the ground truth's)."""
    failures = []
    c = top(plan)
    if expect.infeasible is not None and (c is None) != expect.infeasible:
        failures.append(f"infeasible: expected {expect.infeasible}, got {describe(c)}")
    if expect.must_not_fit_single_gpu is not None:
        multi = c is not None and int(c["total_gpus"]) > 1
        if multi != expect.must_not_fit_single_gpu:
            failures.append(f"must_not_fit_single_gpu: top pick is {describe(c)}")
    for key in ("within_budget", "meets_deadline", "top_cloud"):
        want = getattr(expect, key)
        have = None if c is None else c.get("cloud" if key == "top_cloud" else key)
        if want is not None and have != want:
            failures.append(f"{key}: expected {want}, got {have}")
    return failures


def expectations(expect: Expect, got_plan: dict[str, Any] | None) -> Check:
    wanted = [expect.infeasible, expect.must_not_fit_single_gpu, expect.within_budget, expect.meets_deadline,
              expect.top_cloud]
    if all(w is None for w in wanted):
        return NA
    failures = expectation_failures(expect, got_plan)
    return Check(not failures, "; ".join(failures) or "all hold")
