"""Documents built from a training plan: the resource request (Markdown/DOCX), launch bundle, cost table, diagram.

Each entry point takes the plan contract (`TrainingPlan`) or its JSON (`service.planner.report.plan_to_dict`), validated
against the contract in `plan_view.read_plan`; every figure comes from it; these modules format, never re-estimate.
Importing the package reads no file; python-docx is imported only when a DOCX is rendered.
"""

from service.documents.bundle import LaunchBundle, build_launch_bundle, bundle_as_zip
from service.documents.cost_table import render_cost_table
from service.documents.mermaid import render_decision_mermaid
from service.documents.request import render_request_docx, render_request_markdown

__all__ = [
    "LaunchBundle",
    "build_launch_bundle",
    "bundle_as_zip",
    "render_cost_table",
    "render_decision_mermaid",
    "render_request_docx",
    "render_request_markdown",
]
