"""An answer's Markdown for a terminal at its width (`gpu-advisor ask`): headings, paragraphs and bullets wrapped
between words (service/cli/layout.py), tables that fit or one block per row, code as it is, and every link
printed as its address, a pipe included (a terminal's own hyperlinks vanish in a pipe or a log).

Links: `[text](https://...)` prints `text (https://...)`; a link to a page of the guide (`/knowledge/guide/...`)
prints the repository file it is (`knowledge/guide/....md#section`); `<https://...>` prints the address."""

from __future__ import annotations

import re

from rich.cells import cell_len
from rich.markup import escape

from service.cli.layout import Out

_LINK = re.compile(r"\[([^\]]+)\]\(([^)\s]+)\)")
_AUTOLINK = re.compile(r"<(https?://[^>\s]+)>")
_BOLD = re.compile(r"\*\*(.+?)\*\*")
_CODE = re.compile(r"`([^`]+)`")
_BULLET = re.compile(r"^(\s*)(?:[-*+]|(\d+)[.)])\s+(.*)$")
_RULE = re.compile(r"^\s*(?:-{3,}|\*{3,}|_{3,})\s*$")


def address(href: str) -> str:
    """What a reader can open: a public address as it is, a guide page as its file in this repository."""
    if href.startswith("/knowledge/"):
        return href.removeprefix("/")
    return href


def inline(text: str) -> str:
    """Markdown inline syntax as Rich markup: bold, code, links with their address."""
    out, pos = [], 0
    for m in re.finditer(f"{_LINK.pattern}|{_AUTOLINK.pattern}", text):
        out.append(_styled(text[pos:m.start()]))
        if m.group(1) is not None:
            label, href = m.group(1), address(m.group(2))
            out.append(_styled(label) + (f" ({escape(href)})" if href != label else ""))
        else:
            out.append(escape(m.group(3)))
        pos = m.end()
    out.append(_styled(text[pos:]))
    return "".join(out)


def _styled(text: str) -> str:
    text = escape(text.replace("\\|", "|"))
    text = _BOLD.sub(lambda m: f"[bold]{m.group(1)}[/bold]", text)
    return _CODE.sub(lambda m: f"[cyan]{m.group(1)}[/cyan]", text)


def _cells(line: str) -> list[str]:
    body = line.strip().removeprefix("|").removesuffix("|")
    return [c.strip() for c in re.split(r"(?<!\\)\|", body)]


def _table(out: Out, lines: list[str]) -> None:
    rows = [_cells(x) for x in lines if not re.fullmatch(r"\s*\|?[\s:|-]+\|?\s*", x)]
    if not rows:
        return
    head, body = rows[0], [r + [""] * (len(rows[0]) - len(r)) for r in rows[1:]]
    headers, cells = [inline(h) for h in head], [[inline(c) for c in r[:len(head)]] for r in body]
    if out.table(headers, cells):
        return
    for r in cells:  # one block per row: its first cell, then each other column by name
        out.line(f"[bold]{r[0]}[/]", "• ", "  ")
        for h, c in zip(headers[1:], r[1:], strict=True):
            if c:
                colon = "：" if any(cell_len(ch) == 2 for ch in h) else ": "
                out.line(f"[dim]{h}[/]{colon}{c}", "  ", "    ")


def print_markdown(out: Out, markdown: str) -> None:
    lines = markdown.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.lstrip().startswith("```"):
            j = i + 1
            while j < len(lines) and not lines[j].lstrip().startswith("```"):
                j += 1
            out.raw("\n".join(lines[i + 1:j]), style="cyan")
            i = j + 1
            continue
        if line.lstrip().startswith("|"):
            j = i
            while j < len(lines) and lines[j].lstrip().startswith("|"):
                j += 1
            _table(out, lines[i:j])
            i = j
            continue
        _block_line(out, line)
        i += 1


def _block_line(out: Out, line: str) -> None:
    if not line.strip():
        out.line("")
        return
    heading = re.match(r"^(#{1,6})\s+(.*)$", line)
    if heading:
        out.line(f"[bold]{inline(heading.group(2))}[/bold]")
        return
    if _RULE.match(line):
        out.line("─" * min(out.width, 40))
        return
    quote = re.match(r"^\s*>\s?(.*)$", line)
    if quote:
        out.line(inline(quote.group(1)), "│ ", "│ ")
        return
    bullet = _BULLET.match(line)
    if bullet:
        pad = " " * len(bullet.group(1))
        mark = f"{bullet.group(2)}. " if bullet.group(2) else "• "
        out.line(inline(bullet.group(3)), pad + mark, pad + " " * len(mark))
        return
    out.line(inline(line))
