"""The resource request 《AI训练资源申请说明》 / "AI Training Resource Request", in Markdown and DOCX.

The Markdown is rendered from prompts/documents/request.{lang}.md; the DOCX is converted from that Markdown,
so both carry the same figures.
"""

from __future__ import annotations

from collections.abc import Mapping

from service.catalog.loader import Catalog
from service.documents import cost_table, fmt, rationale, request_sections, risks, safe
from service.documents.hf_repos import hf_repo
from service.documents.mainland import mainland_route, route_bullets
from service.documents.mermaid import render_decision_mermaid
from service.documents.plan_view import Lang, PlanInput, read_plan
from service.documents.templates import render_template

TITLES = {"zh": "AI训练资源申请说明", "en": "AI Training Resource Request"}
APPLICANT_KEYS = ("name", "department", "contact", "approver", "date", "project", "background")


def request_template(lang: Lang) -> str:
    return f"request.{lang}.md"


def render_request_markdown(plan: PlanInput, lang: Lang, applicant: Mapping[str, str] | None = None,
                            *, candidate_index: int = 0, catalog: Catalog | None = None) -> str:
    """The request document as Markdown.

    `applicant` may give name, department, contact, approver, date, project and background; missing ones are
    left as blank lines to fill in. `candidate_index` picks the configuration requested (0 = the plan's
    recommendation). With `catalog`, the time arithmetic also cites the GPU's peak TFLOPS and its source.
    """
    view = read_plan(plan, lang)
    chosen = view.chosen(candidate_index)
    # the applicant's words are text, never markup: one line each, Markdown's characters escaped
    who = {k: safe.md(v) for k, v in (applicant or {}).items() if k in APPLICANT_KEYS and safe.comment(v)}
    values = {
        "background": request_sections.background(view, chosen, who, lang),
        "task_table": request_sections.task_table(view, lang),
        "assumptions": request_sections.assumptions(view, lang),
        "resource_table": request_sections.resource_table(view, chosen, lang),
        "resource_notes": request_sections.resource_notes(view, lang),
        "mainland": fmt.bullets(route_bullets(mainland_route(), chosen.cloud, hf_repo(view.model.id) or "", lang)),
        "cost_summary": cost_table.cost_summary(view, chosen, lang),
        "cloud_comparison": cost_table.comparison_table(view, lang),
        "memory_arithmetic": rationale.memory_arithmetic(chosen, lang),
        "time_arithmetic": rationale.time_arithmetic(view, chosen, lang, catalog),
        "decision_diagram": render_decision_mermaid(plan, lang),
        "risks": risks.risks(view, chosen, lang),
        "approval": request_sections.approval(who, lang),
    }
    return render_template(request_template(lang), values)


def render_request_docx(plan: PlanInput, lang: Lang, applicant: Mapping[str, str] | None = None,
                        *, candidate_index: int = 0, catalog: Catalog | None = None) -> bytes:
    """The same document as a Word file (python-docx); the Mermaid diagram stays in the Markdown version."""
    from service.documents.docx_writer import markdown_to_docx

    md = render_request_markdown(plan, lang, applicant, candidate_index=candidate_index, catalog=catalog)
    return markdown_to_docx(md, lang, title=TITLES[lang])
