"""POST /v1/documents/request and /launch: documents for the engine's plan, never for figures from the body."""

from __future__ import annotations

import io
import zipfile

import pytest
from fastapi.testclient import TestClient

from service.errors import DependencyUnavailableError

WORKLOAD = {"model": "Qwen2-7B", "samples": 100000, "budget_cny": 3000}


def test_request_markdown_from_a_workload(client: TestClient) -> None:
    r = client.post("/v1/documents/request", json={"workload": WORKLOAD, "lang": "zh"})
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/markdown")
    assert "AI训练资源申请说明" in r.text and "Qwen2-7B" in r.text


def test_request_from_a_plan_is_re_planned(client: TestClient) -> None:
    plan = client.post("/v1/plan", json=WORKLOAD).json()
    pick = plan["candidates"][0]
    from_plan = client.post("/v1/documents/request", json={"plan": plan, "lang": "en"}).text
    assert pick["instance_type"] in from_plan
    forged = {**plan, "candidates": [{**pick, "total_cost_cny": 1.23}, *plan["candidates"][1:]]}
    doc = client.post("/v1/documents/request", json={"plan": forged, "lang": "en"}).text
    assert doc == from_plan  # figures come from the engine, not from the request body


def test_request_docx_is_an_attachment(client: TestClient) -> None:
    r = client.post("/v1/documents/request", json={"workload": WORKLOAD, "lang": "en", "format": "docx"})
    assert r.status_code == 200
    assert r.headers["content-type"] == "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
    assert r.headers["content-disposition"] == 'attachment; filename="gpu-advisor-Qwen2-7B-request.en.docx"'
    assert zipfile.is_zipfile(io.BytesIO(r.content))  # a .docx is a zip


@pytest.mark.parametrize(
    ("payload", "needle"),
    [
        ({"lang": "zh"}, "exactly one"),  # neither plan nor workload
        ({"workload": WORKLOAD, "plan": {"workload": WORKLOAD}}, "exactly one"),  # both
        ({"plan": {"picks": {}}}, "plan.workload"),  # a plan without its workload
        ({"workload": WORKLOAD, "format": "pdf"}, "format:"),  # unsupported format
        ({"workload": {**WORKLOAD, "budget_cny": -1}}, "workload.budget_cny:"),  # bad workload field
    ],
)
def test_bad_document_requests_are_422(client: TestClient, payload: dict[str, object], needle: str) -> None:
    r = client.post("/v1/documents/request", json=payload)
    assert r.status_code == 422 and needle in r.json()["error"]["message"]


def test_unknown_model_in_a_document_request_is_400(client: TestClient) -> None:
    r = client.post("/v1/documents/request", json={"workload": {"model": "Qwen9-chat"}})  # no size to estimate
    assert r.status_code == 400 and "Did you mean" in r.json()["error"]["message"]


def test_launch_bundle_is_a_zip_in_one_folder(client: TestClient) -> None:
    r = client.post("/v1/documents/launch", json={"workload": WORKLOAD, "lang": "zh"})
    assert r.status_code == 200 and r.headers["content-type"] == "application/zip"
    assert r.headers["content-disposition"] == 'attachment; filename="gpu-advisor-Qwen2-7B-launch.zip"'
    names = zipfile.ZipFile(io.BytesIO(r.content)).namelist()
    assert {"gpu-advisor-Qwen2-7B-launch/train.yaml", "gpu-advisor-Qwen2-7B-launch/launch.sh"} <= set(names)


def test_candidate_index_picks_another_configuration(client: TestClient) -> None:
    plan = client.post("/v1/plan", json=WORKLOAD).json()
    second = plan["candidates"][1]["instance_type"]
    doc = client.post("/v1/documents/request", json={"plan": plan, "lang": "en", "candidate_index": 1}).text
    assert second in doc
    r = client.post("/v1/documents/launch", json={"plan": plan, "candidate_index": 499})
    assert r.status_code == 422 and "candidate_index" in r.json()["error"]["message"]


def test_applicant_fields_fill_the_request(client: TestClient) -> None:
    r = client.post("/v1/documents/request", json={"workload": WORKLOAD, "applicant": {"name": "张三"}})
    assert r.status_code == 200 and "张三" in r.text


def test_missing_document_support_is_503(client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    import service.api.routes.documents as route

    def missing(name: str, module: str) -> object:
        raise DependencyUnavailableError(f"Document generation is not available ({name} is missing).", "Install.")

    monkeypatch.setattr(route, "document_function", missing)
    r = client.post("/v1/documents/launch", json={"workload": WORKLOAD})
    assert r.status_code == 503 and r.json()["error"]["code"] == "dependency_unavailable"
