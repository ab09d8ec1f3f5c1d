"""The question spine: one module per question type (Args, Answer, run, route, render, summary, description),
listed once in service/questions/registry.py; every surface (the assistant, the LLM tools, MCP, the API's
`answer`, the evals, the Slack and web cards) derives from that list. See service/questions/base.py."""
