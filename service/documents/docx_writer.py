"""Convert the Markdown subset the document templates use into a Word file (python-docx).

Handled: # headings, | tables |, - bullets, > quotes, ``` fences (a Mermaid fence becomes a note pointing
to the Markdown version), **bold** and `code` inline. One Markdown line is one Word paragraph. Everything else is
text: a backslash-escaped character (safe.md escapes the applicant's words and the model's name) is written as
itself, in a plain text run, and characters Word's XML cannot hold are dropped. The page is A4 (210 x 297 mm), as
documents for approval are printed in China (GB/T 9704), with 25.4 mm margins.
"""

from __future__ import annotations

import io
import re
from typing import Any

from service.documents.plan_view import Lang

_HEADING = re.compile(r"^(#{1,6})\s+(.*)$")
_INLINE = re.compile(r"((?<!\\)\*\*(?:[^*\\]|\\.)+?(?<!\\)\*\*|(?<!\\)`(?:[^`\\]|\\.)+?(?<!\\)`)")
_ESCAPED = re.compile(r"\\([\\`*_{}\[\]()#+\-.!|<>~])")
_NOT_XML = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
A4_MM = (210, 297)
MARGIN_MM = 25.4
_CELL_SPLIT = re.compile(r"(?<!\\)\|")
_SEPARATOR = re.compile(r"^:?-{3,}:?$")
EAST_ASIAN_FONTS = {"Normal": "SimSun", "Title": "SimHei", "Heading 1": "SimHei", "Heading 2": "SimHei",
                    "Heading 3": "SimHei"}
MERMAID_NOTE = {"zh": "（决策路径图为 Mermaid 格式，见本文档的 Markdown 版本。）",
                "en": "(The decision-path diagram is Mermaid source; see the Markdown version of this document.)"}


def _set_fonts(doc: Any, lang: Lang) -> None:
    if lang != "zh":
        return
    from docx.oxml.ns import qn

    for name, font in EAST_ASIAN_FONTS.items():
        style = doc.styles[name]
        style.font.name = style.font.name or "Calibri"  # creates rPr/rFonts so eastAsia can be set
        style.element.rPr.rFonts.set(qn("w:eastAsia"), font)


def plain(text: str) -> str:
    """Markdown text as the reader sees it: escapes undone, characters XML 1.0 cannot hold dropped."""
    return _NOT_XML.sub("", _ESCAPED.sub(r"\1", text))


def _inline(paragraph: Any, text: str) -> None:
    for part in _INLINE.split(text):
        if not part:
            continue
        if len(part) > 4 and part.startswith("**") and part.endswith("**"):
            paragraph.add_run(plain(part[2:-2])).bold = True
        elif len(part) > 2 and part.startswith("`") and part.endswith("`"):
            paragraph.add_run(plain(part[1:-1])).font.name = "Consolas"
        else:
            paragraph.add_run(plain(part))


def _a4(doc: Any) -> None:
    from docx.shared import Mm

    for section in doc.sections:
        section.page_width, section.page_height = Mm(A4_MM[0]), Mm(A4_MM[1])
        section.left_margin = section.right_margin = Mm(MARGIN_MM)
        section.top_margin = section.bottom_margin = Mm(MARGIN_MM)


def _cells(row: str) -> list[str]:
    parts = _CELL_SPLIT.split(row.strip())
    return [p.strip() for p in parts[1:-1]]


def _table(doc: Any, lines: list[str]) -> None:
    rows = [_cells(line) for line in lines]
    rows = [r for r in rows if not all(_SEPARATOR.match(c) for c in r)]
    if not rows:
        return
    width = max(len(r) for r in rows)
    table = doc.add_table(rows=len(rows), cols=width)
    table.style = "Table Grid"
    for r, cells in enumerate(rows):
        for c, text in enumerate(cells):
            paragraph = table.cell(r, c).paragraphs[0]
            _inline(paragraph, f"**{text}**" if r == 0 and text and not text.startswith("**") else text)


def _fence(doc: Any, tag: str, body: list[str], lang: Lang) -> None:
    if tag == "mermaid":
        doc.add_paragraph().add_run(MERMAID_NOTE[lang]).italic = True
        return
    for line in body:
        doc.add_paragraph().add_run(_NOT_XML.sub("", line)).font.name = "Consolas"


def markdown_to_docx(md: str, lang: Lang, title: str = "") -> bytes:
    import docx

    doc = docx.Document()
    _a4(doc)
    _set_fonts(doc, lang)
    if title:
        doc.core_properties.title = title
    lines = md.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("```"):
            tag, body = line[3:].strip(), []
            i += 1
            while i < len(lines) and not lines[i].startswith("```"):
                body.append(lines[i])
                i += 1
            _fence(doc, tag, body, lang)
            i += 1
            continue
        if line.startswith("|"):
            block = []
            while i < len(lines) and lines[i].startswith("|"):
                block.append(lines[i])
                i += 1
            _table(doc, block)
            continue
        heading = _HEADING.match(line)
        if heading:
            doc.add_heading(plain(heading.group(2).replace("**", "")), level=len(heading.group(1)) - 1)
        elif line.startswith("- "):
            _inline(doc.add_paragraph(style="List Bullet"), line[2:])
        elif line.startswith("> "):
            _inline(doc.add_paragraph(style="Quote"), line[2:])
        elif line.strip():
            _inline(doc.add_paragraph(), line)
        i += 1
    buf = io.BytesIO()
    doc.save(buf)
    return buf.getvalue()
