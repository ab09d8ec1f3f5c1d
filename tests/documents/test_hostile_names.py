"""Issue 41 F1: documents are data, never code. A model name that is not a plausible model id is refused through every
entry point that builds a document (API 422 naming the field, MCP tool error naming it, CLI exit 2 with one line,
the chat's plan answered with the document refused); values the builders do not refuse (instance types, GPU names,
strategy labels, notes: from the catalog or a client's plan JSON) leave the bundle inert: every script passes
`bash -n`, `monitor.sh snapshot` and `launch.sh` run against stub tools execute nothing of theirs, and every YAML and
JSON file holds exactly its keys.

Regression: `x$(touch /tmp/pwned)-7B` ran its command from monitor.sh, and a newline in the name added keys to
train.yaml (12 of 30 hostile bundles ran a command, 4 gained or overrode a YAML key; 0 now)."""

from __future__ import annotations

import io
import json
import subprocess
import zipfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from service.app import create_app
from service.catalog.loader import Catalog
from service.documents import build_launch_bundle, render_request_markdown
from service.documents.llamafactory import check_round_trip
from service.documents.safe import UnsafeValueError
from service.documents.serving_bundle import serving_bundle
from tests.api.conftest import make_settings
from tests.api.fakes import FakeRetriever

from .stubs import run, write

MARK = "/tmp/gpu-advisor-pwned"  # what each hostile value tries to create (checked absent after every run)


def hostile(mark: str = MARK) -> dict[str, str]:
    return {
        "dollar": f"x$(touch {mark})-7B",  # command substitution
        "backtick": f"x`touch {mark}`-7B",  # the old form of it
        "semicolon": f"x;touch {mark};-7B",  # a second command
        "newline_key": "Qwen-x-7B\nevil_key: 1",  # a YAML key after a newline
        "yaml_override": "x-7B\ntrust_remote_code: false\nmodel_name_or_path: evil/repo",  # a key given twice
        "single_quote": f"x'$(touch {mark})'-7B",  # closes a single-quoted word
        "double_quote": f'x"$(touch {mark})"-7B',  # closes a double-quoted word
        "template": "{{ summary }}-7B",  # a placeholder of our templates
        "unicode": "模型\u202e-7B",  # non-ASCII, with a right-to-left override
        "dotdot": "../../../etc/x-7B",  # climbs out of saves/
        "option": "--config=/etc/passwd-7B",  # reads as a command-line option
        "space": "My Qwen 7B; rm -rf ~",  # a space, then a command
    }


HOSTILE = hostile()


@pytest.fixture(autouse=True)
def _no_mark() -> Any:
    Path(MARK).unlink(missing_ok=True)
    yield
    assert not Path(MARK).exists(), "a hostile value ran a command"


@pytest.fixture(scope="module")
def client(catalog: Catalog, tmp_path_factory: pytest.TempPathFactory) -> TestClient:
    settings = make_settings(tmp_path_factory.mktemp("hostile"))
    return TestClient(create_app(settings, catalog=catalog, retriever=FakeRetriever()))


# -- refused, naming the field, at every entry point ------------------------------------------------------------
@pytest.mark.parametrize("name", list(HOSTILE.values()), ids=list(HOSTILE))
@pytest.mark.parametrize("route, extra", [("/v1/documents/launch", {}), ("/v1/documents/request", {}),
                                          ("/v1/documents/request", {"format": "docx"})])
def test_the_api_refuses_the_name_with_a_422_naming_the_field(client: TestClient, name: str, route: str,
                                                               extra: dict[str, str]) -> None:
    r = client.post(route, json={"workload": {"model": name, "samples": 1000}, **extra})
    assert r.status_code == 422, r.text[:300]
    error = r.json()["error"]
    assert error["code"] == "invalid_input" and error["message"].startswith("workload.model: ") and error["fix"]
    assert "\n" not in error["message"]


def test_a_sent_plan_is_named_as_sent(client: TestClient) -> None:
    plan = client.post("/v1/plan", json={"model": HOSTILE["dollar"], "samples": 1000}).json()
    r = client.post("/v1/documents/launch", json={"plan": plan})
    assert r.status_code == 422 and r.json()["error"]["message"].startswith("plan.workload.model: ")


@pytest.mark.parametrize("name", list(HOSTILE.values()), ids=list(HOSTILE))
def test_the_mcp_plan_tool_refuses_the_document_naming_the_field(catalog: Catalog, name: str) -> None:
    from service.mcp.server import call
    from service.mcp.tools import McpContext

    ctx = McpContext(catalog=lambda: catalog, guide_dir=Path("knowledge/guide"), max_price_age_days=400,
                     retriever=lambda: FakeRetriever())
    result = call(ctx, "plan", {"model": name, "samples": 1000, "documents": ["launch_bundle"]})
    assert result.isError and result.structuredContent is not None
    assert result.structuredContent["error"]["message"].startswith("model: ")


def test_the_chat_plan_is_answered_and_the_document_refused(catalog: Catalog) -> None:
    """What the chat does when a reader (the LLM's) puts the name in the frame: the plan, and a line saying why no
    document came (tests/assistant/test_llm_hostile_names.py drives it through a provider stub)."""
    from service.questions.base import Context
    from service.questions.registry import BY_NAME

    module = BY_NAME["plan"]
    ctx = Context.of(catalog, 400, None)
    answer = module.call(ctx, {"model": HOSTILE["newline_key"], "samples": 1000, "documents": ["launch_bundle"],
                               "lang": "zh"})
    docs = answer.documents  # type: ignore[attr-defined]
    assert docs.launch_bundle is None and docs.refused.field == "model"
    assert "不是合法的模型 ID" in docs.refused.message_zh and answer.plan.candidates  # type: ignore[attr-defined]


@pytest.mark.parametrize("name", [HOSTILE["dollar"], HOSTILE["newline_key"], HOSTILE["unicode"]])
def test_the_cli_serving_bundle_exits_2_with_one_line(tmp_path: Path, name: str) -> None:
    from service.cli.app import build_app

    r = CliRunner().invoke(build_app(), ["plan-serving", "--model", name, "--concurrency", "4",
                                         "--bundle", str(tmp_path / "b")])
    assert r.exit_code == 2 and "model: " in r.output and "not a plausible model id" in r.output
    assert not (tmp_path / "b").exists()


@pytest.mark.parametrize("name", list(HOSTILE.values()), ids=list(HOSTILE))
def test_the_serving_bundle_refuses_the_name(catalog: Catalog, name: str) -> None:
    from service.planner.contract import make_plan
    from service.serving_workload import ServingWorkload

    plan = make_plan(ServingWorkload(model=name, concurrency=4), catalog)
    with pytest.raises(UnsafeValueError, match="^model: "):
        serving_bundle(plan)  # type: ignore[arg-type]


# -- inert: values the builders take as they are ------------------------------------------------------------------
def _poisoned(plan: dict[str, Any], mark: str) -> dict[str, Any]:
    """The plan JSON with hostile text in every string a document writes that is not a model id."""
    bad = f"$(touch {mark})`touch {mark}`\n'\"evil_key: 1 {{{{ summary }}}}\u202e"
    pick = plan["picks"]["tencent"]
    cands = [{**c, "instance_type": c["instance_type"] + bad, "gpu_name": bad, "family": bad,
              "strategy": {**c["strategy"], "label": bad},
              "warnings": [{"code": "x", "severity": "warning", "message": bad, "message_zh": bad}]}
             for c in plan["candidates"]]
    return {**plan, "candidates": cands, "picks": {k: v + bad if v == pick else v for k, v in plan["picks"].items()},
            "assumptions": [bad], "notes": [{"code": "n", "severity": "info", "message": bad, "message_zh": bad}]}


def _expected_keys(files: dict[str, str]) -> set[str]:
    return set(yaml.safe_load(files["train.yaml"]))


@pytest.mark.parametrize("plan_name", ["qwen_lora", "llama70_full", "t4_qlora"])
def test_hostile_text_elsewhere_leaves_the_bundle_inert(tmp_path: Path, plans: dict[str, Any], catalog: Catalog,
                                                        plan_name: str) -> None:
    clean = build_launch_bundle(plans[plan_name], catalog, "en").files
    files = build_launch_bundle(_poisoned(plans[plan_name], MARK), catalog, "en").files
    root = write(tmp_path, files)
    for name in files:
        if name.endswith(".sh"):
            assert subprocess.run(["bash", "-n", name], cwd=root, capture_output=True).returncode == 0, name
    assert run(root, "monitor.sh", "snapshot").returncode == 0
    run(root, "launch.sh", STUB_GPUS="16", NODE_RANK="0", MASTER_ADDR="10.0.0.1")
    assert set(yaml.safe_load(files["train.yaml"])) == _expected_keys(clean)  # no key gained or lost
    assert yaml.safe_load(files["train.yaml"]) == yaml.safe_load(clean["train.yaml"])  # nor any value changed
    for name in files:
        if name.endswith(".json"):
            assert json.loads(files[name]) == json.loads(clean[name])


def test_the_poisoned_request_document_stays_text(plans: dict[str, Any], catalog: Catalog) -> None:
    md = render_request_markdown(_poisoned(plans["qwen_lora"], MARK), "en",
                                 {"project": "<script>alert(1)</script> [x](javascript:1) **b**\n# h"})
    line = next(line for line in md.splitlines() if "alert(1)" in line)
    assert "\\<script\\>" in line and "\\[x\\]" in line and "\\*\\*b\\*\\*" in line and "\\# h" in line


# -- exact keys ------------------------------------------------------------------------------------------------------
QWEN_LORA_KEYS = {  # LLaMA-Factory's LoRA SFT example keys, and the plan's settings (tests/documents/conftest.py)
    "model_name_or_path", "trust_remote_code", "flash_attn", "stage", "do_train", "finetuning_type", "lora_rank",
    "lora_target", "dataset", "dataset_dir", "template", "cutoff_len", "overwrite_cache",
    "preprocessing_num_workers", "dataloader_num_workers", "output_dir", "logging_steps", "save_steps", "plot_loss",
    "overwrite_output_dir", "save_only_model", "report_to", "per_device_train_batch_size",
    "gradient_accumulation_steps", "learning_rate", "num_train_epochs", "lr_scheduler_type", "warmup_ratio", "bf16",
    "ddp_timeout",
    "disable_gradient_checkpointing"}  # the plan fits this A100 without checkpointing


def test_train_yaml_has_exactly_its_keys(plans: dict[str, Any], catalog: Catalog) -> None:
    files = build_launch_bundle(plans["qwen_lora"], catalog, "en", 0).files
    assert set(yaml.safe_load(files["train.yaml"])) == QWEN_LORA_KEYS
    assert set(json.loads(files["data/dataset_info.json"])) == {"my_qa"}


def test_a_value_that_escapes_its_line_is_caught_before_the_file_leaves() -> None:
    text = "model_name_or_path: a  # x\nevil_key: 1\n"
    with pytest.raises(Exception, match="read back"):
        check_round_trip(text, {"model_name_or_path": "a"})
    with pytest.raises(Exception, match="twice"):
        check_round_trip("a: 1\na: 2\n", {"a": 2})


def test_the_zip_holds_only_the_bundles_files(client: TestClient) -> None:
    r = client.post("/v1/documents/launch", json={"workload": {"model": "Qwen2-7B", "samples": 1000}})
    names = zipfile.ZipFile(io.BytesIO(r.content)).namelist()
    assert all(n.startswith("gpu-advisor-Qwen2-7B-launch/") and ".." not in n for n in names)
