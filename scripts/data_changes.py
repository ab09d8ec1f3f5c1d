"""Every catalog row a range of commits changed, with its source: `python scripts/data_changes.py BASE [HEAD]`
prints Markdown (docs/data-changes-2026-12.md is its output for the December audit, issue 39).

Rows are keyed as the loader keys them (prices: instance, billing, region, confidence; instances: instance type; billing
rules: cloud and family; families: cloud and family; reference prices: cloud, product, instance, GPU); models.yaml and
unsized_models.yaml by model id. A row is added, removed, or changed (the columns that changed, old -> new)."""

from __future__ import annotations

import csv
import io
import subprocess
import sys

import yaml

TABLES = {
    "prices": ("instance_type", "billing", "region", "confidence"),
    "instances": ("instance_type",),
    "families": ("cloud", "family"),
    "billing_rules": ("cloud", "family"),
    "reference_prices": ("cloud", "product", "instance_type", "gpu"),
}
IGNORED = {"note", "note_zh", "note_en"}  # wording; the figures, sources and dates are what the audit lists


def _show(rev: str, path: str) -> str:
    out = subprocess.run(["git", "show", f"{rev}:{path}"], capture_output=True, text=True)
    return out.stdout if out.returncode == 0 else ""


def _rows(text: str, key: tuple[str, ...]) -> dict[tuple[str, ...], dict[str, str]]:
    rows = csv.DictReader(io.StringIO(text)) if text else []
    return {tuple(r.get(k, "") for k in key): r for r in rows}


def _models(text: str) -> dict[str, dict[str, object]]:
    data = yaml.safe_load(text) if text else None
    items = data.get("models", data) if isinstance(data, dict) else data
    return {str(m["id"]): m for m in items or [] if isinstance(m, dict) and "id" in m}


def _cell(value: object) -> str:
    text = str(value).replace("|", "\\|").replace("\n", " ")
    return text if len(text) <= 90 else text[:89] + "…"


def table(base: str, head: str, name: str, key: tuple[str, ...]) -> list[str]:
    path = f"knowledge/catalog/{name}.csv"
    old, new = _rows(_show(base, path), key), _rows(_show(head, path), key)
    lines: list[str] = []
    for k in sorted(set(old) | set(new)):
        a, b = old.get(k), new.get(k)
        label = " / ".join(x for x in k if x)
        if a is None and b is not None:
            lines.append(f"| {_cell(label)} | added | {_cell(b.get('price_cny') or b.get('gpu') or '')} | "
                         f"{_cell(b.get('source', ''))} |")
        elif b is None and a is not None:
            lines.append(f"| {_cell(label)} | removed | {_cell(a.get('price_cny') or a.get('gpu') or '')} | "
                         f"{_cell(a.get('source', ''))} |")
        elif a is not None and b is not None:
            diff = [f"{c}: {_cell(a.get(c, ''))} → {_cell(b.get(c, ''))}" for c in b
                    if c not in IGNORED and a.get(c, "") != b.get(c, "")]
            if diff:
                lines.append(f"| {_cell(label)} | changed | {'; '.join(diff)} | {_cell(b.get('source', ''))} |")
    if not lines:
        return []
    return [f"## {path} ({len(lines)} rows)", "", "| row | change | figures | source |", "|---|---|---|---|",
            *lines, ""]


def models(base: str, head: str, path: str) -> list[str]:
    old, new = _models(_show(base, path)), _models(_show(head, path))
    lines: list[str] = []
    for k in sorted(set(old) | set(new)):
        a, b = old.get(k), new.get(k)
        if a == b:
            continue
        change = "added" if a is None else "removed" if b is None else "changed: " + ", ".join(
            sorted(f for f in set(a or {}) | set(b or {}) if (a or {}).get(f) != (b or {}).get(f)))
        src = (b or a or {}).get("source", "")
        lines.append(f"| {k} | {_cell(change)} | {_cell(src)} |")
    if not lines:
        return []
    return [f"## {path} ({len(lines)} models)", "", "| model | change | source |", "|---|---|---|", *lines, ""]


def main(argv: list[str]) -> None:
    base, head = argv[1], argv[2] if len(argv) > 2 else "HEAD"
    out = [f"# Catalog rows changed, {base[:8]}..{head[:8] if head != 'HEAD' else 'HEAD'}", "",
           "Written by `python scripts/data_changes.py`; each row with the source it now cites.", ""]
    for name, key in TABLES.items():
        out += table(base, head, name, key)
    out += models(base, head, "knowledge/models.yaml") + models(base, head, "knowledge/unsized_models.yaml")
    print("\n".join(out))


if __name__ == "__main__":
    main(sys.argv)
