"""Figures in the compact summaries (a tool's text for agents, MCP and Slack): each with its unit, and a figure the
engine left unset said in words, never as `None` or `¥None`."""

from __future__ import annotations


def figure(value: float | None, unit: str, spec: str = "g", missing: str = "not sized") -> str:
    """'35.91 GiB', '8.1 h', '4,096 tokens'; `missing` when the engine gave none."""
    return missing if value is None else f"{value:{spec}} {unit}"


def yuan(value: float | None, spec: str = ",.0f", missing: str = "price on request") -> str:
    return missing if value is None else f"¥{value:{spec}}"


def plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")
