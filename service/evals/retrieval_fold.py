"""The retrieval eval (service.retrieval.evaluate, its cases in evals/retrieval.yaml) folded into this report.

Optional: when the cases file is missing or the index cannot be built (no embedding model, Chroma down), the
report carries a note saying why, and the rest of the eval stands.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from service.settings import Settings


def retrieval_section(settings: Settings, cases_file: Path | None = None) -> dict[str, Any]:
    """{"status": "ok", "n_cases", "report": EvalReport.to_dict()} or {"status": "skipped", "note": why}."""
    try:
        from service.retrieval.config import RetrievalConfig
        from service.retrieval.embedder_choice import shared_embedder
        from service.retrieval.evaluate import DEFAULT_EVAL_FILE, evaluate, load_cases
        from service.retrieval.hybrid import Retriever
    except ImportError as exc:
        return {"status": "skipped", "note": f"retrieval modules unavailable: {exc}"}
    path = cases_file or DEFAULT_EVAL_FILE
    if not path.is_file():
        return {"status": "skipped", "note": f"{path} not found (the retrieval eval cases are not written yet)"}
    try:
        cases = load_cases(path)
        config = RetrievalConfig.from_settings(settings)
        retriever = Retriever(config, shared_embedder(config.embedding_model))  # refreshes the index first
        report = evaluate(retriever, cases)
    except Exception as exc:  # the index could not be built: say so, keep the rest of the report
        return {"status": "skipped", "note": f"index could not be built or searched: {type(exc).__name__}: {exc}"}
    out: dict[str, Any] = {"status": "ok", "n_cases": len(cases), "report": report.to_dict()}
    if getattr(retriever, "warnings", None):
        out["note"] = "; ".join(retriever.warnings)
    return out
