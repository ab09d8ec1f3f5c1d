"""Charts for the HTML report, drawn with matplotlib (Agg) and returned as base64 PNG: the page needs no files."""

from __future__ import annotations

import base64
import io
from collections.abc import Sequence
from typing import Any

_BLUE, _RED, _GREY = "#2f6db5", "#c0392b", "#8a8a8a"


def _png(fig: Any) -> str:
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    fig.tight_layout()
    fig.savefig(buf, format="png", dpi=110)
    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode("ascii")


def _figure(width: float, height: float) -> tuple[Any, Any]:
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt.subplots(figsize=(width, height))


def rate_bars(title: str, rates: dict[str, float | None], threshold: float | None = None) -> str:
    """Horizontal bars of 0-1 rates; bars under `threshold` in red, metrics that did not apply left out."""
    items = [(k, v) for k, v in rates.items() if v is not None]
    fig, ax = _figure(7.5, 0.32 * len(items) + 1.2)
    names = [k for k, _ in items][::-1]
    values = [v for _, v in items][::-1]
    colors = [_RED if threshold is not None and v < threshold else _BLUE for v in values]
    ax.barh(names, values, color=colors)
    for y, v in enumerate(values):
        ax.text(min(v, 0.98), y, f"{v:.3f}", va="center", ha="right", color="white", fontsize=8)
    if threshold is not None:
        ax.axvline(threshold, color=_GREY, linestyle="--", linewidth=1)
    ax.set_xlim(0, 1)
    ax.set_title(title, fontsize=10)
    return _png(fig)


def latency_histogram(latencies_s: Sequence[float]) -> str:
    fig, ax = _figure(7.5, 2.6)
    ax.hist(list(latencies_s), bins=min(30, max(5, len(latencies_s) // 3)), color=_BLUE)
    ax.set_xlabel("seconds per turn")
    ax.set_ylabel("turns")
    ax.set_title("Latency per turn", fontsize=10)
    return _png(fig)


def anchor_ratios(anchors: Sequence[dict[str, Any]]) -> str:
    """engine / published per anchor (log scale), with each anchor's tolerance as a grey span."""
    rows = [a for a in anchors if a.get("ratio") is not None and a.get("gated", True)]  # runs: docs/validation.md
    fig, ax = _figure(7.5, 0.22 * len(rows) + 1.2)
    for y, a in enumerate(rows):
        lo, hi = _band(a["tolerance"])
        ax.plot([lo, hi], [y, y], color="#d9d9d9", linewidth=6, solid_capstyle="butt")
        ax.plot(a["ratio"], y, "o", color=_BLUE if a["ok"] else _RED, markersize=4)
    ax.set_yticks(range(len(rows)), [a["id"] for a in rows], fontsize=7)
    ax.axvline(1.0, color=_GREY, linewidth=1)
    ax.set_xscale("log")
    ticks = [0.5, 0.6, 0.8, 1.0, 1.25, 1.5, 2.0]
    ax.set_xticks(ticks, [f"{t:g}" for t in ticks])
    ax.minorticks_off()
    ax.set_xlabel("engine / published (grey: tolerance)")
    ax.set_title("Sizing anchors", fontsize=10)
    ax.invert_yaxis()
    return _png(fig)


def _band(text: str) -> tuple[float, float]:
    """The ratio band a tolerance text stands for ('±25 %', '±1 % (+0.005)', 'ratio 0.6-1.4')."""
    if text.startswith("ratio "):
        lo, hi = text.removeprefix("ratio ").split("-")
        return float(lo), float(hi)
    rel = float(text.removeprefix("±").split(" ")[0]) / 100
    return 1 - rel, 1 + rel


def history_trend(rows: Sequence[dict[str, Any]], metrics: Sequence[str]) -> str:
    fig, ax = _figure(7.5, 2.8)
    xs = list(range(1, len(rows) + 1))
    for name in metrics:
        ys = [r["metrics"].get(name) for r in rows]
        ax.plot(xs, [y if isinstance(y, int | float) else float("nan") for y in ys], marker="o", label=name)
    ax.set_ylim(0, 1.02)
    ax.set_xticks(xs, [str(r.get("run_id", ""))[-7:] for r in rows], rotation=45, fontsize=7)
    ax.legend(fontsize=7, loc="lower left")
    ax.set_title("Runs on this target", fontsize=10)
    return _png(fig)
