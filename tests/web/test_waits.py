"""The browser tests wait on a condition through `wait_until` (conftest.py), never `page.wait_for_function`: its
polling evaluates a string inside the page, which the page's CSP (script-src 'self', no 'unsafe-eval') refuses
once the first check is false. CI failed on it once, a race that passed here whenever the first check held."""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).resolve().parent
CALL = "wait_for_" + "function("  # split: this file is not itself a caller


def test_no_browser_test_waits_through_an_evaluated_string() -> None:
    callers = sorted(p.name for p in HERE.glob("*.py") if CALL in p.read_text(encoding="utf-8"))
    assert callers == [], f"use wait_until(page, js) instead of page.{CALL}...) in {callers}"
