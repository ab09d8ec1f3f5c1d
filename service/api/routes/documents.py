"""POST /v1/documents/request (Markdown or DOCX) and /v1/documents/launch (zip): documents for one plan.

A plan sent by the client is re-planned from its `workload`: every figure in a document comes from the engine,
never from the request body.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, cast

from fastapi import APIRouter
from fastapi.responses import Response

from service.api.deps import CatalogDep, SettingsDep
from service.api.schemas import DocumentIn, RequestDocumentIn
from service.catalog.loader import Catalog
from service.errors import DependencyUnavailableError
from service.planner.training_types import TrainingPlan
from service.settings import Settings
from service.workload import Workload

router = APIRouter(prefix="/documents", tags=["documents"])
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"


def document_function(name: str, module: str) -> Any:
    """`service.documents.<name>` (or from its submodule); 503 when document generation is not installed."""
    import importlib

    for where in ("service.documents", f"service.documents.{module}"):
        try:
            fn = getattr(importlib.import_module(where), name, None)
        except ImportError:
            continue
        if fn is not None:
            return fn
    raise DependencyUnavailableError(f"Document generation is not available ({name} is missing).",
                                     "Install the service extra: pip install -e '.[service]'.")


def plan_for(body: DocumentIn, catalog: Catalog, settings: Settings) -> TrainingPlan:
    """The engine's plan for the body's workload (or for the workload inside the plan it sent), validated."""
    from service.planner.contract import make_plan

    workload: Workload = body.plan.workload if body.plan is not None else cast(Workload, body.workload)
    return make_plan(workload, catalog, max_price_age_days=settings.price_max_age_days)


def _filename(plan: TrainingPlan, suffix: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", f"gpu-advisor-{plan.model.id or 'plan'}{suffix}")


def _attachment(content: bytes, media_type: str, filename: str) -> Response:
    return Response(content, media_type=media_type,
                    headers={"Content-Disposition": f'attachment; filename="{filename}"'})


@contextmanager
def fields_named(body: DocumentIn) -> Iterator[None]:
    """A value refused for a document names the request's field: 'workload.model' (or 'plan.workload.model')."""
    from service.documents.safe import UnsafeValueError

    try:
        yield
    except UnsafeValueError as exc:
        raise exc.at("plan.workload" if body.plan is not None else "workload") from None


@router.post("/request", response_class=Response, responses={200: {"content": {
    "text/markdown": {}, DOCX: {}}, "description": "the document, Markdown or DOCX"}})
def request_document(body: RequestDocumentIn, catalog: CatalogDep, settings: SettingsDep) -> Response:
    """The resource-request document 《AI训练资源申请说明》 (or its English version), Markdown or DOCX. A model name
    that is not a plausible model id (letters, digits, `._-/`, at most 128 characters) is a 422 naming the field."""
    with fields_named(body):
        return _request_document(body, catalog, settings)


def _request_document(body: RequestDocumentIn, catalog: Catalog, settings: Settings) -> Response:
    plan = plan_for(body, catalog, settings)
    options: dict[str, Any] = {"candidate_index": body.candidate_index, "catalog": catalog}
    if body.format == "docx":
        render_docx = document_function("render_request_docx", "request")
        data: bytes = render_docx(plan, body.lang, body.applicant, **options)
        return _attachment(data, DOCX, _filename(plan, f"-request.{body.lang}.docx"))
    render_md = document_function("render_request_markdown", "request")
    text: str = render_md(plan, body.lang, body.applicant, **options)
    return Response(text.encode("utf-8"), media_type="text/markdown; charset=utf-8", headers={
        "Content-Disposition": f'inline; filename="{_filename(plan, f"-request.{body.lang}.md")}"'})


@router.post("/launch", response_class=Response,
             responses={200: {"content": {"application/zip": {}}, "description": "the launch bundle as a zip"}})
def launch_bundle(body: DocumentIn, catalog: CatalogDep, settings: SettingsDep) -> Response:
    """The launch bundle (LLaMA-Factory YAML, DeepSpeed JSON, launch and monitoring scripts) as a zip. A model name
    that is not a plausible model id (letters, digits, `._-/`, at most 128 characters) is a 422 naming the field."""
    build = document_function("build_launch_bundle", "launch")
    as_zip = document_function("bundle_as_zip", "launch")
    with fields_named(body):
        plan = plan_for(body, catalog, settings)
        folder = _filename(plan, "-launch")
        data: bytes = as_zip(build(plan, catalog, body.lang, candidate_index=body.candidate_index,
                                   knowledge_dir=settings.knowledge_dir), root=folder)
    return _attachment(data, "application/zip", f"{folder}.zip")
