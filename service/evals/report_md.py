"""The Markdown report: headline metrics, regressions, failing scenarios with their diffs, anchors, retrieval, and\npeople's feedback when a data dir was given."""

from __future__ import annotations

import json
from typing import Any

from service.evals.feedback import share_up
from service.evals.metrics import EXTRA, HEADLINE

LABELS = {
    "slot_accuracy": "Slot accuracy (gold fields)", "config_match": "Config match (instance + method + ZeRO)",
    "feasibility": "Feasibility (engine re-check)", "budget_verdict": "Budget verdict = truth",
    "deadline_verdict": "Deadline verdict = truth", "warnings": "Required warnings present",
    "citations": "Citations when expected", "language": "Answer language", "expectations": "Expected properties",
    "no_workload": "No plan for plain questions", "pass_rate": "Scenarios passing every check",
    "intent": "Question type named", "verdict": "Question-type verdict = engine",
}


def fmt(v: Any) -> str:
    if v is None:
        return "–"
    if isinstance(v, float):
        return f"{v:,.0f}" if abs(v) >= 10 and v.is_integer() or abs(v) >= 1000 else f"{v:.3f}"
    if isinstance(v, list | dict):
        return json.dumps(v, ensure_ascii=False)
    return str(v)


def cell(v: Any) -> str:
    return fmt(v).replace("|", "\\|").replace("\n", " ")


def table(header: list[str], rows: list[list[Any]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(cell(x) for x in row) + " |" for row in rows]
    return out + [""]


def pick_line(p: dict[str, Any] | None) -> str:
    if p is None:
        return "no candidate"
    return (f"{p['instance_type']} ({p['cloud']}, {p['total_gpus']}x {p['gpu']}, {p['label']}, "
            + (f"¥{p['total_cost_cny']:,.0f}" if p.get('total_cost_cny') is not None else "price on request")
            + f", {p['training_hours']} h)")


def scenario_md(s: dict[str, Any]) -> list[str]:
    out = [f"### {s['id']} ({s['lang']})", ""]
    out += [f"> {t}" for t in s["turns"]] + [""]
    if s["error"]:
        out += [f"**Error:** {s['error']}", ""]
    if s["slots"]:
        out += table(["field", "gold", "got", ""], [[x["field"], x["gold"], x["got"], "✓" if x["ok"] else "✗"]
                                                   for x in s["slots"]])
    if s.get("unstated_slots"):
        out += [f"Unstated slots the answer set: `{fmt(s['unstated_slots'])}`", ""]
    failed = {k: c for k, c in s["checks"].items() if c["ok"] is False}
    out += [f"- **{k}** failed: {c['detail']}" for k, c in failed.items()]
    if s["got_top"] is not None or s["truth_top"] is not None:
        out += [f"- top pick: {pick_line(s['got_top'])}", f"- truth: {pick_line(s['truth_top'])}"]
    return out + [""]


def render_markdown(run: dict[str, Any]) -> str:
    m, info = run["metrics"], run["run"]
    out = [f"# Eval report {info['run_id']}", "",
           f"Target `{info['target']}` · {run['n_scenarios']} scenarios · {info['duration_s']} s · {info['timestamp']}",
           ""]
    out += [f"> {note}" for note in info["notes"]] + ([""] if info["notes"] else [])
    n = m.get("n_applicable", {})
    out += ["## Metrics", ""]
    out += table(["metric", "value", "scenarios"], [[LABELS[k], m.get(k), n.get(k)] for k in HEADLINE + EXTRA])
    out += table(["latency", "p50 (s)", "p95 (s)"], [["per turn", m.get("latency_p50_s"), m.get("latency_p95_s")]])
    if "judge_mean" in m:
        out += [f"LLM judge mean score (1-5): {fmt(m['judge_mean'])}", ""]
    out += ["### Slot accuracy by field", ""]
    out += table(["field", "accuracy"], [[k, v] for k, v in m["slot_accuracy_by_field"].items()])
    out += ["### Accuracy by question type", ""]
    out += table(["intent", "scenarios (zh/en)", "intent", "verdict", "intent + verdict", "slots", "pass rate"],
                 [[k, f"{v['n']} ({v['n_zh']}/{v['n_en']})", v["intent_accuracy"], v["verdict_accuracy"],
                   v["intent_and_verdict"], v["slot_accuracy"], v["pass_rate"]]
                  for k, v in m.get("by_intent", {}).items()])
    out += table(["language", "scenarios", "pass rate", "slot accuracy"],
                 [[k, v["n"], v["pass_rate"], v["slot_accuracy"]] for k, v in m.get("by_lang", {}).items()])
    out += regressions_md(run.get("regressions"))
    failing = [s for s in run["per_scenario"] if not s["passed"]]
    out += [f"## Failing scenarios ({len(failing)})", ""]
    for s in failing:
        out += scenario_md(s)
    out += anchors_md(run["anchors"]) + retrieval_md(run["retrieval"]) + feedback_md(run.get("feedback"))
    return "\n".join(out).rstrip() + "\n"


def feedback_md(feedback: dict[str, Any] | None) -> list[str]:
    """People's 👍/👎 per question type (only when the report was given a data dir)."""
    if not feedback:
        return []
    out = ["## User feedback", "", f"From {feedback['source']}.", ""]
    rows = [[k, v["up"], v["down"], share_up(v)] for k, v in feedback["by_intent"].items()]
    if not rows:
        return out + ["No answer has been rated yet.", ""]
    t = feedback["total"]
    return out + table(["intent", "👍", "👎", "share 👍"], [*rows, ["all", t["up"], t["down"], share_up(t)]])


def regressions_md(reg: dict[str, Any] | None) -> list[str]:
    out = ["## Compared with the previous run", ""]
    if not reg or not reg.get("previous_run"):
        return out + ["No earlier run on this target in the history.", ""]
    out += [f"Previous run {reg['previous_run']} ({reg['previous_at']}).", ""]
    if not reg["regressed"]:
        out += ["No regression."]
    if reg["newly_failing"]:
        out += ["Passed before, fail now: " + ", ".join(f"`{i}`" for i in reg["newly_failing"])]
    out += [f"- {d['metric']} dropped {d['before']:.3f} → {d['after']:.3f}" for d in reg["metric_drops"]]
    if reg["newly_passing"]:
        out += ["Fixed since: " + ", ".join(f"`{i}`" for i in reg["newly_passing"])]
    if reg.get("slower_p95_s"):
        before, after = reg["slower_p95_s"]
        out += [f"- p95 latency rose {before:.2f} s → {after:.2f} s"]
    return out + [""]


def anchors_md(anchors: dict[str, Any]) -> list[str]:
    out = ["## Sizing anchors", ""]
    res = anchors.get("results", [])
    if not res:
        return out + ["Not evaluated in this run.", ""]
    sm = anchors["summary"]
    out += [f"{sm['within_tolerance']} of {sm['evaluated']} within tolerance ({sm['skipped']} skipped).", ""]
    return out + table(["anchor", "role", "published", "engine", "unit", "ratio", "tolerance", "ok", "source"],
                       [[a["id"], a["role"], a["published"], a["engine"], a["unit"], a["ratio"], a["tolerance"],
                         "✓" if a["ok"] else ("skipped: " + a["error"] if a["ok"] is None else "✗"), a["source"]]
                        for a in res])


def retrieval_md(section: dict[str, Any]) -> list[str]:
    out = ["## Retrieval", ""]
    if not section:
        return out + ["Not run (--no-retrieval).", ""]
    if section.get("status") != "ok":
        return out + [f"Skipped: {section.get('note', '')}", ""]
    rows = [[mode, lang, x["n"], x["recall_at_1"], x["recall_at_3"], x["recall_at_5"], x["mrr"]]
            for mode, by in section["report"]["results"].items() for lang, x in by.items()]
    out += table(["mode", "lang", "n", "recall@1", "recall@3", "recall@5", "MRR@10"], rows)
    misses = section["report"].get("misses", [])
    if misses:
        out += [f"Hybrid misses at 5 ({len(misses)}): " + ", ".join(f"`{x['id']}` (rank {fmt(x['rank'])})"
                                                                   for x in misses), ""]
    if section["report"].get("missing_gold"):
        out += ["Gold ids no longer in the index: " + ", ".join(f"`{g}`" for g in section["report"]["missing_gold"]),
                ""]
    if section.get("note"):
        out += [f"> {section['note']}", ""]
    return out
