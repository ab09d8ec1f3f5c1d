"""What the adapters (the API, Slack, MCP, the CLI) share, below all of them: the one JSON error shape and the
HTTP status of each error (errors.py), session ids (ids.py), the lazily built dependencies (resources.py), the
readiness report (readiness.py) and the API key check (auth.py). An adapter imports this, the assistant and the
question spine; never another adapter."""
