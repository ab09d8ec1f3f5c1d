"""Schemathesis against the live service (uvicorn on 127.0.0.1, the API key set, the fake assistant): every
operation in the OpenAPI schema, bounded examples, all checks. It must find 0 server errors and 0 failed checks:
each status the service answers is documented with our error body, valid requests are accepted, invalid ones
rejected. tests/api/schemathesis.toml says which non-2xx answers a schema-valid request may get, and why."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from service.api.app import create_app
from service.catalog.loader import Catalog
from service.settings import Settings
from tests.api.fakes import FakeAssistant, FakeRetriever

KEY = "schemathesis-key"
CONFIG = Path(__file__).with_name("schemathesis.toml")


def test_schemathesis_finds_no_server_error_and_no_failed_check(
    live_server_factory: Any, settings: Settings, catalog: Catalog, tmp_path: Path
) -> None:
    app = create_app(settings.model_copy(update={"api_key": KEY}), FakeAssistant(), catalog=catalog,
                     retriever=FakeRetriever())
    server = live_server_factory(app)
    command = [sys.executable, "-c", "from schemathesis.cli import schemathesis; schemathesis()", "--config-file", str(CONFIG), "run",
               f"{server.base_url}/openapi.json", "-H", f"Authorization: Bearer {KEY}", "--checks", "all",
               "--max-examples", "10", "--seed", "14", "--no-color"]
    run = subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=tmp_path)  # its cache there
    report = run.stdout[-6000:] + run.stderr[-2000:]
    assert run.returncode == 0, report
    assert "Operations:       " in run.stdout and "No operations" not in run.stdout, report
    assert "failures" not in run.stdout.splitlines()[-1], report


def test_every_v1_operation_documents_our_error_body(client: Any) -> None:
    schema = client.get("/openapi.json").json()
    assert "HTTPValidationError" not in schema["components"]["schemas"]
    operations = [(path, op) for path, ops in schema["paths"].items() if path.startswith("/v1/") for op in ops.values()]
    assert len(operations) >= 15
    for path, op in operations:
        for status in ("400", "401", "404", "413", "422", "503"):
            content = op["responses"][status]["content"]["application/json"]["schema"]
            assert content == {"$ref": "#/components/schemas/ErrorBody"}, (path, status)


def test_rules_between_fields_are_in_the_schema_and_enforced(client: Any) -> None:
    schemas = client.get("/openapi.json").json()["components"]["schemas"]
    assert "allOf" in schemas["WorkloadIn"] and "oneOf" in schemas["DocumentIn"]
    assert schemas["ChatRequest"]["properties"]["message"]["maxLength"] == 4000
    r = client.post("/v1/documents/launch", json={"workload": {"model": "Qwen2-7B"}, "plan": {"workload": {"params_b": 7}}})
    assert r.status_code == 422 and "exactly one" in r.json()["error"]["message"]
    assert client.post("/v1/plan", json={"method": "lora"}).status_code == 422  # neither model nor params_b
