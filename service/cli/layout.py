"""Terminal layout for the CLI: the width to lay text out to, lines wrapped between words (never inside a number, a
name or a link), and tables that fit the width or fall back to one block per row.

    width()                      COLUMNS when set, else the terminal's width, else 80 (a pipe, a log)
    Out(width).line(markup, ...) one paragraph, wrapped with a hanging indent
    Out.table(columns, rows)     a table whose columns wrap at word boundaries; None when even that is too wide

Widths are display columns: a CJK character counts 2 (rich.cells.cell_len). A break is allowed at a space, between
two CJK characters and between CJK and Latin text, never before closing punctuation ("，", "）") or after opening
punctuation ("（"). A link (http://, https://, a repository path) is one unit: a line holds it whole, alone when it
is wider than the width (a link cut in two is not a link). A no-break space (U+00A0) joins words that belong
together ("¥463 on_demand") and prints as a space.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass

from rich.cells import cell_len
from rich.console import Console
from rich.text import Text

DEFAULT_WIDTH = 80  # output that is not a terminal (a pipe, a file, a CI log) and says no COLUMNS
MIN_WIDTH = 40
NBSP = "\u00a0"
GAP = 2  # spaces between table columns
MIN_COLUMN = 8  # a column narrower than this (or its widest cell) reads as a sliver: blocks instead
_OPEN = set("（《「『【“‘([{")
_CLOSE = set("，。、；：？！）》」』】”’…,.;:?!)]}%")
ATOMS = re.compile(r"https?://[^\s<>()（）「」《》，。；]+|(?<![\w/])(?:knowledge|docs|evals|scripts)/[^\s<>()（），。；]+")


def width() -> int:
    """The width to lay out to: COLUMNS when it is a number, else the terminal's (stdout a tty), else 80."""
    cols = os.environ.get("COLUMNS", "").strip()
    if cols.isdigit() and int(cols) > 0:
        return max(int(cols), MIN_WIDTH)
    try:
        if sys.stdout.isatty():
            return max(os.get_terminal_size(sys.stdout.fileno()).columns, MIN_WIDTH)
    except (OSError, ValueError):
        pass
    return DEFAULT_WIDTH


def _wide(ch: str) -> bool:
    return cell_len(ch) == 2


def units(plain: str) -> list[tuple[int, int, int]]:
    """(start, end, kind) spans of `plain`, the pieces a line may break between: kind 0 a space, 1 text, 3 a link
    (with the punctuation that holds on to it)."""
    atoms = [(m.start(), m.end()) for m in ATOMS.finditer(plain)]
    out: list[list[int]] = []  # [start, end, kind]: 0 space, 1 text, 3 a link
    i, a = 0, 0
    while i < len(plain):
        if a < len(atoms) and atoms[a][0] == i:
            start, end = atoms[a]
            a += 1
            if out and out[-1][2] != 0 and plain[out[-1][1] - 1] in _OPEN:
                out[-1][1], out[-1][2] = end, 3
            else:
                out.append([start, end, 3])
            i = end
            continue
        ch = plain[i]
        kind = 0 if ch.isspace() and ch != NBSP else 1
        prev = out[-1] if out else None
        if prev is not None and (prev[2] == 0) == (kind == 0):
            last = plain[prev[1] - 1]
            if kind == 0 or ch in _CLOSE or last in _OPEN or (not _wide(ch) and not _wide(last)):
                prev[1] = i + 1
                i += 1
                continue
        out.append([i, i + 1, kind])
        i += 1
    return [(s, e, 0 if k == 0 else (3 if k == 3 else 1)) for s, e, k in out]


def widest_unit(text: str) -> int:
    return max((cell_len(text[s:e]) for s, e, kind in units(text) if kind), default=0)


def wrap(text: Text | str, width_: int, first: str = "", rest: str | None = None) -> list[Text]:
    """`text` in lines of at most `width_` columns: `first` before the first, `rest` (spaces as wide as `first`
    unless given) before the others (all three Rich markup). A unit wider than a line gets a line of its own (a link, kept whole) or, for
    anything else, is folded."""
    t = Text.from_markup(text) if isinstance(text, str) else text
    head = Text.from_markup(first)
    tail = Text(" " * head.cell_len) if rest is None else Text.from_markup(rest)
    plain = t.plain
    spans: list[tuple[int, int]] = []
    start: int | None = None
    end, used = 0, 0
    avail = max(width_ - head.cell_len, 1)
    for s, e, kind in units(plain):
        if not kind:
            continue
        w = cell_len(plain[s:e])
        gap = cell_len(plain[end:s]) if start is not None else 0
        if start is not None and used + gap + w <= avail:
            end, used = e, used + gap + w
            continue
        if start is not None:
            spans.append((start, end))
            avail = max(width_ - tail.cell_len, 1)
        if w > avail and kind != 3:
            for piece in _fold(plain, s, e, avail):
                spans.append(piece)
            start, end, used = None, e, 0
            avail = max(width_ - tail.cell_len, 1)
            continue
        start, end, used = s, e, w
    if start is not None:
        spans.append((start, end))
    lines = []
    for n, (s, e) in enumerate(spans or [(0, 0)]):
        line = (head if n == 0 else tail).copy()
        line.append_text(t[s:e])
        line.plain = line.plain.replace(NBSP, " ")
        lines.append(line)
    return lines


def _fold(plain: str, s: int, e: int, avail: int) -> list[tuple[int, int]]:
    out, start, used = [], s, 0
    for i in range(s, e):
        w = cell_len(plain[i])
        if used + w > avail and i > start:
            out.append((start, i))
            start, used = i, 0
        used += w
    out.append((start, e))
    return out


@dataclass(frozen=True)
class Column:
    header: str
    min: int
    natural: int


def _cell_lines(cell: str) -> list[str]:
    return Text.from_markup(cell).plain.split("\n")


def column_widths(headers: Sequence[str], rows: Sequence[Sequence[str]], width_: int) -> list[int] | None:
    """Each column's width so the table fits `width_` with no unit split: every column its natural width when
    that fits, else its widest unit (at least MIN_COLUMN) plus a share of the room left, else None (use blocks)."""
    cols = []
    for i, h in enumerate(headers):
        texts = [h, *(line for r in rows for line in _cell_lines(r[i]))]
        natural = max(cell_len(x) for x in texts)
        cols.append(Column(h, max(max(widest_unit(x) for x in texts), min(natural, MIN_COLUMN)), natural))
    gaps = GAP * (len(cols) - 1)
    if sum(c.natural for c in cols) + gaps <= width_:
        return [c.natural for c in cols]
    if sum(c.min for c in cols) + gaps > width_:
        return None
    widths = [c.min for c in cols]
    room = width_ - gaps - sum(widths)
    while room > 0:  # one column at a time: the one furthest (by share) from its natural width
        want = [(c.natural - w) / c.natural for c, w in zip(cols, widths, strict=True)]
        i = max(range(len(cols)), key=lambda k: want[k])
        if want[i] <= 0:
            break
        widths[i] += 1
        room -= 1
    return widths


class Out:
    """Print to a console at a fixed width: wrapped paragraphs, raw lines (code), tables or blocks."""

    def __init__(self, width_: int | None = None, console: Console | None = None) -> None:
        self.width = width_ or width()
        self.console = console or Console(width=self.width, highlight=False, soft_wrap=True)

    def text(self, line: Text) -> None:
        self.console.print(line, soft_wrap=True, crop=False, overflow="ignore")

    def line(self, markup: str | Text = "", first: str = "", rest: str | None = None) -> None:
        for part in (markup.split("\n") if isinstance(markup, str) else [markup]):
            for out in wrap(part, self.width, first, rest):
                self.text(out)

    def raw(self, text: str, style: str = "") -> None:
        """Lines printed as they are (code: a launch command is not reflowed)."""
        for line in text.split("\n"):
            self.text(Text(line, style=style))

    def table(self, headers: Sequence[str], rows: Sequence[Sequence[str]], indent: str = "") -> bool:
        """The table at this width (header, a rule, rows; cells wrapped at word boundaries); False, printing
        nothing, when it cannot fit without splitting a unit."""
        widths = column_widths(headers, rows, self.width - cell_len(indent))
        if widths is None:
            return False
        self._row([f"[bold]{h}[/]" for h in headers], widths, indent)
        self.text(Text(indent + (" " * GAP).join("─" * w for w in widths)))
        for r in rows:
            self._row(list(r), widths, indent)
        return True

    def _row(self, cells: list[str], widths: list[int], indent: str) -> None:
        wrapped = [[line for part in cell.split("\n") for line in wrap(part, w)] for cell, w in zip(cells, widths,
                                                                                                  strict=True)]
        for n in range(max(len(c) for c in wrapped)):
            line = Text(indent)
            for i, (c, w) in enumerate(zip(wrapped, widths, strict=True)):
                piece = c[n] if n < len(c) else Text("")
                line.append_text(piece)
                if i < len(widths) - 1:
                    line.append(" " * (w - piece.cell_len + GAP))
            line.rstrip()
            self.text(line)
