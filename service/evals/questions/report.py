"""The real-question eval as Markdown: both splits side by side (type, type + verdict, slots, per type, by kind
and confidence), each split's confusion matrix, the test split's fingerprint, and the working split's failures.
The frozen test split's questions are not printed unless asked (`reveal_test`)."""

from __future__ import annotations

from typing import Any

from service.evals.questions.dataset import TYPES


def _pct(x: float | None) -> str:
    return "—" if x is None else f"{x:.3f}"


def _matrix(confusion: dict[str, int]) -> list[str]:
    seen = sorted({k.split("->")[0] for k in confusion} | {k.split("->")[1] for k in confusion},
                  key=lambda t: TYPES.index(t) if t in TYPES else 99)
    head = "| label \\ read | " + " | ".join(t[:8] for t in seen) + " |"
    rows = [head, "|" + "---|" * (len(seen) + 1)]
    for a in seen:
        if any(k.startswith(f"{a}->") for k in confusion):
            rows.append(f"| {a} | " + " | ".join(str(confusion.get(f"{a}->{b}", "") or "") for b in seen) + " |")
    return rows


def render_markdown(data: dict[str, Any], reveal_test: bool = False) -> str:
    splits = data["splits"]
    names = list(splits)
    lines = ["# Real questions: the reader measured", "",
             "| | " + " | ".join(f"{s} (n={splits[s]['n']})" for s in names) + " |",
             "|---|" + "---|" * len(names)]
    for key, label in (("answer", "answers right by their facts"), ("confident_other", "confident answer to another "
                                                                                   "question"),
                       ("type", "question type"), ("type_verdict", "question type + verdict"),
                       ("slots", "slots (labelled)"), ("verdicts_scored", "verdicts scored"),
                       ("errors", "errors")):
        lines.append(f"| {label} | " + " | ".join(str(splits[s][key]) if key in ("verdicts_scored", "errors")
                                                  else _pct(splits[s][key]) for s in names) + " |")
    for kind in ("thread", "chat"):
        lines.append(f"| answers right, {kind} questions | "
                     + " | ".join(_pct(splits[s]["answer_by_kind"].get(kind)) for s in names) + " |")
    lines.append("| answers scored | " + " | ".join(str(splits[s]["answers_scored"]) for s in names) + " |")
    lines.append("| turn latency p50 / p95 (s) | " + " | ".join(
        f"{splits[s]['latency_p50_s']} / {splits[s]['latency_p95_s']}" for s in names) + " |")
    for kind in ("thread", "chat"):
        lines.append(f"| type + verdict, {kind} questions | "
                     + " | ".join(_pct(splits[s]["by_kind"].get(kind)) for s in names) + " |")
    for conf in ("sure", "unsure"):
        lines.append(f"| type right when {conf} | "
                     + " | ".join(_pct(splits[s]["by_confidence"].get(conf)) for s in names) + " |")
    lines.append("| read by (llm / offline / fallback) | " + " | ".join(
        " / ".join(str(splits[s].get("read_by", {}).get(k, 0)) for k in ("llm", "offline", "fallback"))
        for s in names) + " |")
    if "test" in splits:
        lines += ["", f"Test split sha256: `{splits['test']['hash']}`"]
    lines += ["", "## Per question type", "", "| type | " + " | ".join(
        f"{s}: n / answer / type / type+verdict / slots" for s in names) + " |", "|---|" + "---|" * len(names)]
    for t in TYPES:
        cells = []
        for s in names:
            p = splits[s]["per_type"].get(t)
            cells.append("—" if p is None else f"{p['n']} / {_pct(p.get('answer'))} / {_pct(p['type'])} / "
                                               f"{_pct(p['type_verdict'])} / {_pct(p['slots'])}")
        lines.append(f"| {t} | " + " | ".join(cells) + " |")
    for s in names:
        lines += ["", f"## Confusion matrix, {s} split", "", *_matrix(splits[s]["confusion"])]
    shown = [o for o in data["outcomes"] if o["split"] == "working" or reveal_test]
    misses = [o for o in shown if not (o["type_ok"] and o["verdict"] is not False) or o.get("answer_ok") is False]
    if misses:
        lines += ["", "## Misses" + ("" if reveal_test else " (working split)"), ""]
        for o in misses:
            failed = ", ".join(k for k, ok in (o.get("answer") or {}).items() if not ok)
            lines.append(f"- `{o['id']}` {o['type']} → {o['got']} (verdict {o['verdict']}; facts missed: "
                         f"{failed or '—'}) {o['error']}")
    return "\n".join(lines) + "\n"


_READER_ROWS = (("answer", "answers right by their facts"), ("thread", "answers right, real posts (threads)"),
                ("chat", "answers right, chat questions"), ("type", "question type"),
                ("confident_other", "confident answer to another question"), ("latency_p50_s", "turn latency p50 (s)"),
                ("latency_p95_s", "turn latency p95 (s)"))


def _cell(split: dict[str, Any], key: str) -> str:
    if key in ("thread", "chat"):
        return _pct(split["answer_by_kind"].get(key))
    value = split.get(key)
    return str(value) if key.startswith("latency") else _pct(value)


def render_readers(runs: dict[str, dict[str, Any]], reveal_test: bool = False) -> str:
    """Several readers of the same questions side by side (reading and answering measured apart): the answer
    rate by split and kind, then per question type; the frozen test split in aggregate only."""
    cols = [(r, s) for r, d in runs.items() for s in d["splits"]]
    head = "| | " + " | ".join(f"{r}: {s}" for r, s in cols) + " |"
    lines = ["# Real questions: each reader, the same answer layer", "", head, "|---|" + "---|" * len(cols)]
    for key, label in _READER_ROWS:
        lines.append(f"| {label} | " + " | ".join(_cell(runs[r]["splits"][s], key) for r, s in cols) + " |")
    lines.append("| read by (llm / offline / fallback) | " + " | ".join(
        " / ".join(str(runs[r]["splits"][s].get("read_by", {}).get(k, 0)) for k in ("llm", "offline", "fallback"))
        for r, s in cols) + " |")
    lines += ["", "## Answers right per question type", "", head, "|---|" + "---|" * len(cols)]
    for t in TYPES:
        cells = []
        for r, s in cols:
            row = runs[r]["splits"][s]["per_type"].get(t)
            cells.append("—" if row is None else f"{_pct(row['answer'])} ({row['n']})")
        lines.append(f"| {t} | " + " | ".join(cells) + " |")
    for r, d in runs.items():
        if "test" in d["splits"]:
            lines += ["", f"Test split sha256 ({r}): `{d['splits']['test']['hash']}`"]
            break
    for r, d in runs.items():
        misses = [o for o in d["outcomes"] if o.get("answer_ok") is False and (o["split"] == "working" or reveal_test)]
        lines += ["", f"## Misses, {r} ({len(misses)})", ""]
        lines += [f"- `{o['id']}` {o['type']} → {o['got']}: {o['first_lines'][:140]}" for o in misses]
    return "\n".join(lines) + "\n"
