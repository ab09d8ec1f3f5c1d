"""Issue 36's seam, kept: the routes and renderers in service/questions read the typed frame and the typed answers.
No regular expression there (the message text is read once, by a reader), and at most MAX_ANY untyped
`dict[str, Any]` (it was 84 when the issue was filed)."""

from __future__ import annotations

import ast
from pathlib import Path

QUESTIONS = Path(__file__).resolve().parents[2] / "service" / "questions"
MAX_ANY = 5


def _modules() -> list[tuple[Path, ast.Module]]:
    return [(p, ast.parse(p.read_text(encoding="utf-8"))) for p in sorted(QUESTIONS.glob("*.py"))]


def test_no_module_in_service_questions_uses_regular_expressions() -> None:
    found = []
    for path, tree in _modules():
        for node in ast.walk(tree):
            if isinstance(node, ast.Import) and any(a.name in ("re", "regex") for a in node.names):
                found.append(f"{path.name}:{node.lineno} import")
            elif isinstance(node, ast.ImportFrom) and node.module in ("re", "regex"):
                found.append(f"{path.name}:{node.lineno} from-import")
    assert found == [], found


def test_service_questions_holds_at_most_five_untyped_dicts() -> None:
    lines = [f"{p.name}:{i}" for p in sorted(QUESTIONS.glob("*.py"))
             for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
             if "dict[str, Any]" in line and not line.lstrip().startswith("#")]
    assert len(lines) <= MAX_ANY, lines
