"""The HTML report: one self-contained page (inline CSS, charts as base64 PNG, no scripts or CDN) with every
scenario's diff, gold against got per slot and the top pick against the ground truth."""

from __future__ import annotations

from html import escape
from typing import Any

from service.evals.feedback import share_up
from service.evals.metrics import EXTRA, HEADLINE
from service.evals.report_md import LABELS, fmt, pick_line

CSS = """
body{font:14px/1.45 -apple-system,"Segoe UI","PingFang SC","Microsoft YaHei",sans-serif;margin:24px auto;
max-width:1100px;color:#222;padding:0 16px}
h1{font-size:22px}h2{font-size:18px;border-bottom:1px solid #ddd;padding-bottom:4px;margin-top:32px}
table{border-collapse:collapse;margin:8px 0 16px}td,th{border:1px solid #ddd;padding:3px 8px;text-align:left;
vertical-align:top}th{background:#f4f6f8}.ok{color:#1e7b34}.bad{color:#c0392b;font-weight:600}
.muted{color:#777}details{border:1px solid #e2e2e2;border-radius:4px;margin:6px 0;padding:4px 10px}
details.fail{border-color:#e6b0aa;background:#fdf6f5}summary{cursor:pointer}blockquote{margin:4px 0;
padding:2px 10px;border-left:3px solid #ccc;color:#444}img{max-width:100%}.cards{display:flex;gap:12px;
flex-wrap:wrap}.card{border:1px solid #ddd;border-radius:6px;padding:8px 14px;min-width:120px}
.card b{display:block;font-size:20px}pre{white-space:pre-wrap;background:#f7f7f7;padding:8px;font-size:12px}
"""


def _e(v: Any) -> str:
    return escape(fmt(v))


def _table(header: list[str], rows: list[list[str]]) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def _mark(ok: bool | None) -> str:
    if ok is None:
        return '<span class="muted">n/a</span>'
    return '<span class="ok">✓</span>' if ok else '<span class="bad">✗</span>'


def _img(b64: str | None, alt: str) -> str:
    return f'<img alt="{escape(alt)}" src="data:image/png;base64,{b64}">' if b64 else ""


def _charts(run: dict[str, Any], history_rows: list[dict[str, Any]]) -> dict[str, str | None]:
    """Every chart, or an empty dict when matplotlib is not installed."""
    try:
        from service.evals import charts
    except ImportError:
        return {}
    m = run["metrics"]
    turns = [t for s in run["per_scenario"] for t in s.get("turn_latencies_s", [])]
    anchors = run["anchors"].get("results", [])
    same = [h for h in history_rows if h.get("target") == run["run"]["target"]][-20:]
    return {
        "metrics": charts.rate_bars("Metrics", {k: m.get(k) for k in HEADLINE + EXTRA}, 0.95),
        "fields": charts.rate_bars("Slot accuracy by field", m["slot_accuracy_by_field"], 0.95),
        "latency": charts.latency_histogram(turns) if turns else None,
        "anchors": charts.anchor_ratios(anchors) if anchors else None,
        "history": charts.history_trend(same, ("slot_accuracy", "config_match", "pass_rate"))
        if len(same) > 1 else None,
    }


def _scenario(s: dict[str, Any]) -> str:
    cls = "" if s["passed"] else ' class="fail"'
    status = '<span class="ok">pass</span>' if s["passed"] else '<span class="bad">FAIL</span>'
    failed = [k for k, c in s["checks"].items() if c["ok"] is False]
    bad_slots = [x["field"] for x in s["slots"] if not x["ok"]]
    why = ", ".join(bad_slots + failed + (["error"] if s["error"] else []))
    parts = [f"<details{cls}{' open' if not s['passed'] else ''}><summary>{status} <b>{escape(s['id'])}</b> "
             f"<span class='muted'>{escape(s['lang'])} · {s['latency_s']} s{' · ' + escape(why) if why else ''}"
             "</span></summary>"]
    parts += [f"<blockquote>{escape(t)}</blockquote>" for t in s["turns"]]
    if s["error"]:
        parts.append(f"<p class='bad'>{escape(s['error'])}</p>")
    if s["slots"]:
        parts.append(_table(["field", "gold", "got", ""], [[escape(x["field"]), _e(x["gold"]), _e(x["got"]),
                                                           _mark(x["ok"])] for x in s["slots"]]))
    if s.get("unstated_slots"):
        parts.append(f"<p>Unstated slots the answer set: <code>{_e(s['unstated_slots'])}</code></p>")
    if s["got_top"] is not None or s["truth_top"] is not None:
        parts.append(_table(["", "instance / setup"], [["top pick", escape(pick_line(s["got_top"]))],
                                                       ["ground truth", escape(pick_line(s["truth_top"]))]]))
    checks = [[escape(k), _mark(c["ok"]), escape(c["detail"])] for k, c in s["checks"].items() if c["ok"] is not None]
    if checks:
        parts.append(_table(["check", "", "detail"], checks))
    if s.get("judge"):
        parts.append(f"<p>Judge: {_e(s['judge'].get('score'))} — {escape(str(s['judge'].get('reason', '')))}</p>")
    if s.get("answer_excerpt"):
        parts.append(f"<pre>{escape(s['answer_excerpt'])}</pre>")
    return "".join(parts) + "</details>"


def _regressions(reg: dict[str, Any] | None) -> str:
    if not reg or not reg.get("previous_run"):
        return "<p class='muted'>No earlier run on this target in the history.</p>"
    items = [f"<li class='bad'>passed before, fails now: <code>{escape(i)}</code></li>" for i in reg["newly_failing"]]
    items += [f"<li class='bad'>{escape(d['metric'])}: {d['before']:.3f} → {d['after']:.3f}</li>"
              for d in reg["metric_drops"]]
    items += [f"<li class='ok'>fixed: <code>{escape(i)}</code></li>" for i in reg["newly_passing"]]
    if reg.get("slower_p95_s"):
        items.append(f"<li>p95 latency {reg['slower_p95_s'][0]:.2f} s → {reg['slower_p95_s'][1]:.2f} s</li>")
    head = f"<p>Previous run {escape(reg['previous_run'])} ({escape(reg['previous_at'] or '')}).</p>"
    return head + (f"<ul>{''.join(items)}</ul>" if items else "<p class='ok'>No regression.</p>")


def _anchors(anchors: dict[str, Any], chart: str | None) -> str:
    res = anchors.get("results", [])
    if not res:
        return "<p class='muted'>Not evaluated in this run.</p>"
    rows = [[escape(a["id"]), escape(a["role"]), _e(a["published"]), _e(a["engine"]), escape(a["unit"]),
             _e(a["ratio"]), escape(a["tolerance"]), _mark(a["ok"]) + (f" {escape(a['error'])}" if a["error"] else ""),
             escape(a["source"])] for a in res]
    sm = anchors["summary"]
    return (f"<p>{sm['within_tolerance']} of {sm['evaluated']} within tolerance ({sm['skipped']} skipped).</p>"
            + _img(chart, "anchor ratios")
            + _table(["anchor", "role", "published", "engine", "unit", "ratio", "tolerance", "ok", "source"], rows))


def _retrieval(section: dict[str, Any]) -> str:
    if not section:
        return "<p class='muted'>Not run (--no-retrieval).</p>"
    if section.get("status") != "ok":
        return f"<p class='muted'>Skipped: {escape(section.get('note', ''))}</p>"
    rows = [[escape(mode), escape(lang), _e(x["n"]), _e(x["recall_at_1"]), _e(x["recall_at_3"]),
             _e(x["recall_at_5"]), _e(x["mrr"])] for mode, by in section["report"]["results"].items()
            for lang, x in by.items()]
    misses = section["report"].get("misses", [])
    missed = (f"<p>Hybrid misses at 5: {', '.join(escape(str(x['id'])) + ' (' + _e(x['rank']) + ')' for x in misses)}"
              "</p>") if misses else ""
    gone = section["report"].get("missing_gold", [])
    lost = f"<p class='bad'>Gold ids no longer in the index: {escape(', '.join(gone))}</p>" if gone else ""
    return _table(["mode", "lang", "n", "recall@1", "recall@3", "recall@5", "MRR@10"], rows) + missed + lost


def _by_intent(by: dict[str, Any]) -> str:
    rows = [[escape(k), f"{v['n']} ({v['n_zh']}/{v['n_en']})", _e(v["intent_accuracy"]), _e(v["verdict_accuracy"]),
             _e(v["intent_and_verdict"]), _e(v["slot_accuracy"]), _e(v["pass_rate"])] for k, v in by.items()]
    return _table(["intent", "scenarios (zh/en)", "intent", "verdict", "intent + verdict", "slots", "pass rate"], rows)


def _feedback(feedback: dict[str, Any] | None) -> str:
    """People's 👍/👎 per question type (only when the report was given a data dir)."""
    if not feedback:
        return ""
    head = f"<h2>User feedback</h2><p class='muted'>From {escape(feedback['source'])}.</p>"
    by = feedback["by_intent"]
    if not by:
        return head + "<p>No answer has been rated yet.</p>"
    t = feedback["total"]
    rows = [[escape(k), str(v["up"]), str(v["down"]), _e(share_up(v))] for k, v in by.items()]
    rows.append(["all", str(t["up"]), str(t["down"]), _e(share_up(t))])
    return head + _table(["intent", "👍", "👎", "share 👍"], rows)


def render_html(run: dict[str, Any], history_rows: list[dict[str, Any]]) -> str:
    m, info = run["metrics"], run["run"]
    ch = _charts(run, history_rows)
    n = m.get("n_applicable", {})
    cards = "".join(f"<div class='card'>{escape(k)}<b>{_e(m.get(k))}</b></div>"
                    for k in ("slot_accuracy", "config_match", "pass_rate", "latency_p95_s"))
    metric_rows = [[escape(LABELS[k]), _e(m.get(k)), _e(n.get(k))] for k in HEADLINE + EXTRA]
    metric_rows.append([escape("Latency per turn p50 / p95 (s)"),
                        f"{_e(m.get('latency_p50_s'))} / {_e(m.get('latency_p95_s'))}", ""])
    if "judge_mean" in m:
        metric_rows.append(["LLM judge mean (1-5)", _e(m["judge_mean"]), ""])
    ordered = sorted(run["per_scenario"], key=lambda s: s["passed"])
    body = [
        f"<h1>Eval report {escape(info['run_id'])}</h1>",
        f"<p class='muted'>Target <code>{escape(info['target'])}</code> · {run['n_scenarios']} scenarios · "
        f"{info['duration_s']} s · {escape(info['timestamp'])}</p>",
        "".join(f"<p class='muted'>{escape(x)}</p>" for x in info["notes"]),
        f"<div class='cards'>{cards}</div>",
        "<h2>Metrics</h2>", _table(["metric", "value", "scenarios"], metric_rows), _img(ch.get("metrics"), "metrics"),
        "<h2>By question type</h2>", _by_intent(m.get("by_intent", {})),
        _img(ch.get("fields"), "slot accuracy by field"), _img(ch.get("latency"), "latency"),
        "<h2>Compared with the previous run</h2>", _regressions(run.get("regressions")),
        _img(ch.get("history"), "history"),
        f"<h2>Scenarios ({sum(not s['passed'] for s in ordered)} failing)</h2>",
        "".join(_scenario(s) for s in ordered),
        "<h2>Sizing anchors</h2>", _anchors(run["anchors"], ch.get("anchors")),
        "<h2>Retrieval</h2>", _retrieval(run["retrieval"]),
        _feedback(run.get("feedback")),
    ]
    return ("<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>GPU Advisor eval "
            f"{escape(info['run_id'])}</title><style>{CSS}</style></head><body>{''.join(body)}</body></html>\n")
