"""Provenance rules the row schema alone cannot check, run by `gpu-advisor catalog validate`.

Shipped data (knowledge/catalog): every source a user sees is one public URL; an official price is dated by its own
source (the page's date, its commit, the families it lists), never by someone else's capture; an estimate names the
anchor its date comes from (and, where the anchor is a row of this catalog, carries that row's date); an undated page
says how old its content is; no date lies in the future.

A user's price sheet (`--prices`): every row has a date and a source and a price that can be true; each problem
names the file, the line, the row and the fix. Nothing is silently dated.
"""

from __future__ import annotations

import csv
import math
import re
from collections.abc import Iterable
from datetime import date
from pathlib import Path

from service.catalog.reference import ReferencePrice
from service.catalog.schema import BillingRule, FamilyRow, InstanceRow, ModelSpec, PriceRow
from service.catalog.unsized import UnsizedModel

_PUBLIC_URL = re.compile(r"https?://[^\s/]+\.[^\s/]+/?\S*")
_LOCAL = re.compile(r"^https?://(?:localhost|127\.|0\.0\.0\.0|10\.|192\.168\.)", re.I)
_ROW_ANCHOR = re.compile(r"^(\S+) (on_demand|monthly|spot)$")
# Beyond these a figure is a unit slip (fen for yuan, a year's price as a month's), not a price: the costliest rows
# in the catalog are 8-GPU H20 nodes at about ¥400 an hour and ¥290,000 a month.
MAX_HOURLY_CNY = 10_000.0
MAX_MONTHLY_CNY = 5_000_000.0


def is_public_url(source: str) -> bool:
    """One public http(s) address, nothing else: not a repository path, not our notes, not a local address."""
    return bool(_PUBLIC_URL.fullmatch(source.strip())) and not _LOCAL.match(source.strip())


def _what(p: PriceRow) -> str:
    return f"{p.instance_type} {p.billing}" + (f" ({p.region})" if p.region else "")


def _future(d: date | None, today: date) -> bool:
    return d is not None and d > today


def price_problems(prices: Iterable[PriceRow], today: date | None = None) -> list[str]:
    """The shipped prices' provenance problems, one line each naming the row and the fix."""
    today = today or date.today()
    rows = list(prices)
    rank = {"official": 0, "third_party": 1, "estimate": 2, "user": -1}
    by_key: dict[tuple[str, str], PriceRow] = {}
    # the row an anchor 'INSTANCE BILLING' means: the one the planner prices with (default region, most trustworthy)
    for p in sorted(rows, key=lambda p: (p.region.count(";") == 0 and p.region != "", rank[p.confidence])):
        by_key.setdefault((p.instance_type, p.billing), p)
    out: list[str] = []
    for p in rows:
        what = _what(p)
        if not is_public_url(p.source):
            out.append(f"prices.csv {what}: source '{p.source}' is not a public URL. Cite the public page (a "
                       "https:// address, pinned to its commit for a repository); a source with no public address "
                       "cannot back a price users see.")
        if p.confidence == "official" and p.content_basis in ("capture", "anchor"):
            out.append(f"prices.csv {what}: an official price dated by a {p.content_basis}. Date it by its own "
                       "source (the page's date, its commit, the families it lists) and give the capture its own "
                       "third_party row.")
        if p.confidence == "official" and p.anchor:
            out.append(f"prices.csv {what}: an official price has no anchor; only an estimate derives from one.")
        if p.confidence == "official" and p.as_of is None and p.content_as_of is None:
            out.append(f"prices.csv {what}: an undated official page with no content age. Give content_as_of with "
                       "content_basis (commit or newest_family) and content_evidence, so freshness counts from the "
                       "content, not from the day it was read.")
        if p.confidence == "estimate" and not p.anchor.strip():
            out.append(f"prices.csv {what}: an estimate with a date but no anchor. Name the dated price it derives "
                       "from in `anchor` (a catalog row 'INSTANCE BILLING', or the outside price and its date).")
        m = _ROW_ANCHOR.match(p.anchor.strip())
        if p.confidence == "estimate" and m:
            src = by_key.get((m.group(1), m.group(2)))
            if src is None:
                out.append(f"prices.csv {what}: anchor '{p.anchor}' is not a row of prices.csv. Name an existing "
                           "row, or the outside price and its date.")
            elif src.dated != p.dated:
                out.append(f"prices.csv {what}: dated {p.dated} but its anchor {p.anchor} is dated {src.dated}. An "
                           "estimate is as old as its anchor: copy the anchor's dates.")
        if p.confidence == "third_party" and p.as_of is None:
            out.append(f"prices.csv {what}: a third-party capture without its date. Give as_of, the day it was "
                       "captured.")
        for name, d in (("as_of", p.as_of), ("captured", p.captured), ("content_as_of", p.content_as_of)):
            if _future(d, today):
                out.append(f"prices.csv {what}: {name} {d} is in the future. Give the date the source states.")
    return out


def source_problems(instances: Iterable[InstanceRow], rules: Iterable[BillingRule],
                    families: Iterable[FamilyRow] = ()) -> list[str]:
    """Instance, billing-rule and family rows whose user-facing source is not one public URL."""
    out = [f"instances.csv {r.cloud}/{r.instance_type}: source '{r.source}' is not a public URL. Cite the public "
           "page (pinned to its commit for a repository)." for r in instances if not is_public_url(r.source)]
    out += [f"billing_rules.csv {b.cloud}/{b.family}: source '{b.source}' is not a public URL."
            for b in rules if not is_public_url(b.source)]
    out += [f"families.csv {f.cloud}/{f.family}: source '{f.source}' is not a public URL."
            for f in families if not is_public_url(f.source)]
    return out


def reference_problems(rows: Iterable[ReferencePrice], today: date | None = None) -> list[str]:
    """Other clouds' reference rows: one public URL read, the cloud's own page when it was a capture, no future date."""
    today = today or date.today()
    out: list[str] = []
    for r in rows:
        what = f"reference_prices.csv {r.cloud} {r.instance_type or r.product} ({r.gpu})"
        if not is_public_url(r.source):
            out.append(f"{what}: source '{r.source}' is not a public URL. Cite the page or API answer it was read from.")
        if r.basis == "capture" and not is_public_url(r.page):
            out.append(f"{what}: a capture without the page it captured. Give `page`, the cloud's own price page.")
        if _future(r.as_of, today):
            out.append(f"{what}: as_of {r.as_of} is in the future. Give the day the price was read.")
    return out


def unsized_problems(unsized: Iterable[UnsizedModel], models: Iterable[ModelSpec]) -> list[str]:
    """unsized_models.yaml rows with no public URL, or named like a sized catalog row (which would answer first)."""
    from service.catalog.queries import model_index, normalize

    sized = model_index(models)
    out: list[str] = []
    for u in unsized:
        if not is_public_url(u.url):
            out.append(f"unsized_models.yaml {u.id}: source has no public URL. Cite the model card or config.json.")
        clash = sorted({n for n in (u.id, *u.names) if normalize(n) in sized})
        if clash:
            out.append(f"unsized_models.yaml {u.id}: {', '.join(clash)} already names a sized row of models.yaml; "
                       "drop the name from one of the two files.")
    return out


_FIX = {
    "date": "add as_of, the date of your quote (YYYY-MM-DD); a sheet row is never dated for you",
    "source": "add source, where the price comes from (your quote, a contract, the page you read)",
    "price": "give price_cny in yuan per instance, per hour for on_demand and spot, per month for monthly",
}


def _num(text: str | None) -> float | None:
    try:
        value = float(str(text).strip())
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None


def user_sheet_problems(path: Path, known_types: set[str] | None = None, today: date | None = None) -> list[str]:
    """A user's price sheet, row by row: no date, no source, an impossible price, an unknown instance. Each line
    names the file, the line, the row and the fix."""
    today = today or date.today()
    try:
        with path.open(encoding="utf-8", newline="") as fh:
            rows = list(csv.DictReader(fh))
    except (OSError, UnicodeDecodeError) as exc:
        return [f"{path}: cannot read it ({exc}). Give a UTF-8 CSV with the columns of knowledge/catalog/prices.csv."]
    out: list[str] = []
    for i, row in enumerate(rows, start=2):
        get = {k: (v or "").strip() for k, v in row.items() if k is not None}
        what = f"{path.name} line {i} ({get.get('instance_type') or '?'} {get.get('billing') or '?'})"
        if not (get.get("as_of") or get.get("captured")):
            out.append(f"{what}: no date: {_FIX['date']}.")
        for name in ("as_of", "captured"):
            if get.get(name):
                try:
                    d = date.fromisoformat(get[name])
                except ValueError:
                    out.append(f"{what}: {name} '{get[name]}' is not a date: write it YYYY-MM-DD.")
                    continue
                if d > today:
                    out.append(f"{what}: {name} {d} is in the future: {_FIX['date']}.")
        if not get.get("source"):
            out.append(f"{what}: no source: {_FIX['source']}.")
        price = _num(get.get("price_cny"))
        unit = {"monthly": "month"}.get(get.get("billing", ""), "hour")
        if price is None or price <= 0:
            out.append(f"{what}: price_cny '{get.get('price_cny', '')}' is not a price above zero: {_FIX['price']}.")
        elif price > (MAX_MONTHLY_CNY if unit == "month" else MAX_HOURLY_CNY):
            out.append(f"{what}: ¥{price:,.0f} per {unit} is not a plausible instance price (check the unit: yuan, "
                       f"not fen; per {unit}): {_FIX['price']}.")
        low = _num(get.get("price_low_cny")) if get.get("price_low_cny") else None
        if get.get("price_low_cny") and (low is None or low <= 0 or (price is not None and low > price)):
            out.append(f"{what}: price_low_cny '{get['price_low_cny']}' must be above zero and at most price_cny.")
        if get.get("billing") not in ("on_demand", "monthly", "spot"):
            out.append(f"{what}: billing '{get.get('billing', '')}' is not on_demand, monthly or spot.")
        elif get.get("unit") and get["unit"] != unit:
            out.append(f"{what}: billing {get['billing']} needs unit {unit}, not '{get['unit']}'.")
        if known_types is not None and get.get("instance_type") and get["instance_type"] not in known_types:
            out.append(f"{what}: no instance type '{get['instance_type']}' in the catalog: write it as the cloud "
                       "does (`gpu-advisor catalog list`).")
    return out
