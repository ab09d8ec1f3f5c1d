"""The eval suite: the assistant's answers scored against the rule engine's ground truth, the sizing engine's
published anchors, the retrieval eval, and reports (Markdown, HTML, history). Run it with `gpu-advisor eval`.

Modules: dataset (scenario and anchor files), targets (in-process assistant or HTTP API), truth (the planner on
the gold workload), scoring (one scenario), metrics (aggregates, history), anchors, runner, report_md/report_html.
"""
