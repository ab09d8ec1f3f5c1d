"""Issue 39 item 5: a bundle that runs where our users rent. launch.sh's download choices (HUB, PIP_INDEX, LF_SOURCE)
run against stub tools on PATH; each test asserts which tool was called with which arguments. The request document
names the same route, and its DOCX is A4."""

from __future__ import annotations

import io
import shutil
from pathlib import Path
from typing import Any

import pytest

from service.catalog.loader import Catalog
from service.documents import render_request_docx, render_request_markdown
from service.documents.bundle import build_launch_bundle
from service.documents.mainland import mainland_route
from service.settings import REPO_ROOT

from .conftest import index_of
from .stubs import DEFAULT, calls, endpoints, run, write

TENCENT_PYPI = "https://mirrors.cloud.tencent.com/pypi/simple"
TUNA = "https://pypi.tuna.tsinghua.edu.cn/simple"
NO_TRAINER = tuple(t for t in DEFAULT if t != "llamafactory-cli")  # so the script installs LLaMA-Factory


def _bundle(tmp_path: Path, plans: dict[str, Any], catalog: Catalog, instance: str | None = None,
            knowledge_dir: Path | None = None) -> Path:
    p = plans["qwen_lora"]
    i = 0 if instance is None else index_of(p, instance)
    return write(tmp_path, build_launch_bundle(p, catalog, "en", i, knowledge_dir=knowledge_dir).files)


def _tools(root: Path, name: str) -> list[list[str]]:
    return [c for c in calls(root) if c[0] == name]


# (HUB, the download call expected, the mirror it went through)
HUBS = [
    ("modelscope", ["modelscope", "download", "--model", "Qwen/Qwen2-7B", "--local_dir", "models/qwen2-7b"], ""),
    ("hf-mirror", ["huggingface-cli", "download", "Qwen/Qwen2-7B", "--local-dir", "models/qwen2-7b"],
     "https://hf-mirror.com"),
    ("hf", ["huggingface-cli", "download", "Qwen/Qwen2-7B", "--local-dir", "models/qwen2-7b"], ""),
]


@pytest.mark.parametrize("hub, download, endpoint", HUBS)
def test_each_hub_downloads_with_its_tool(tmp_path: Path, plans: dict[str, Any], catalog: Catalog, hub: str,
                                          download: list[str], endpoint: str) -> None:
    root = _bundle(tmp_path, plans, catalog)
    r = run(root, "launch.sh", HUB=hub)
    assert r.returncode == 0, r.stderr
    assert [c for c in calls(root) if c[0] in ("modelscope", "huggingface-cli", "hf")] == [download]
    assert endpoints(root) == [f"{download[0]} HF_ENDPOINT={endpoint}"]
    [train] = _tools(root, "llamafactory-cli")
    assert train == ["llamafactory-cli", "train", "train.yaml", "model_name_or_path=models/qwen2-7b"]


def test_modelscope_is_the_default_when_the_model_is_published_there(tmp_path: Path, plans: dict[str, Any],
                                                                   catalog: Catalog) -> None:
    root = _bundle(tmp_path, plans, catalog)
    assert "\n[ -n \"${HUB:-}\" ] || HUB=modelscope  #" in (root / "launch.sh").read_text()
    r = run(root, "launch.sh")
    assert r.returncode == 0, r.stderr
    assert _tools(root, "modelscope")[0][:4] == ["modelscope", "download", "--model", "Qwen/Qwen2-7B"]


def test_hf_cli_is_preferred_when_installed(tmp_path: Path, plans: dict[str, Any], catalog: Catalog) -> None:
    root = _bundle(tmp_path, plans, catalog)
    r = run(root, "launch.sh", tools=(*DEFAULT, "hf"), HUB="hf-mirror")
    assert r.returncode == 0, r.stderr
    assert _tools(root, "hf") == [["hf", "download", "Qwen/Qwen2-7B", "--local-dir", "models/qwen2-7b"]]
    assert _tools(root, "huggingface-cli") == []


def test_local_weights_are_not_downloaded(tmp_path: Path, plans: dict[str, Any], catalog: Catalog) -> None:
    root = _bundle(tmp_path, plans, catalog)
    (root / "w").mkdir()
    (root / "w" / "config.json").write_text("{}")
    r = run(root, "launch.sh", HUB="local", MODEL_DIR="w")
    assert r.returncode == 0, r.stderr
    assert not [c for c in calls(root) if c[0] in ("modelscope", "huggingface-cli", "hf", "pip", "git")]
    assert _tools(root, "llamafactory-cli")[0][-1] == "model_name_or_path=w"


def test_a_second_run_reuses_the_download(tmp_path: Path, plans: dict[str, Any], catalog: Catalog) -> None:
    root = _bundle(tmp_path, plans, catalog)
    assert run(root, "launch.sh").returncode == 0
    assert run(root, "launch.sh").returncode == 0
    assert len(_tools(root, "modelscope")) == 1 and len(_tools(root, "llamafactory-cli")) == 2


def test_unknown_hub_is_refused(tmp_path: Path, plans: dict[str, Any], catalog: Catalog) -> None:
    root = _bundle(tmp_path, plans, catalog)
    r = run(root, "launch.sh", HUB="s3")
    assert r.returncode != 0 and "HUB=s3" in r.stderr and not _tools(root, "llamafactory-cli")


def test_without_a_modelscope_id_the_default_is_the_hf_mirror(tmp_path: Path, plans: dict[str, Any],
                                                              catalog: Catalog) -> None:
    knowledge = tmp_path / "knowledge"
    knowledge.mkdir()
    shutil.copy(REPO_ROOT / "knowledge" / "mirrors.yaml", knowledge)
    (knowledge / "modelscope.yaml").write_text("models: []\n")
    root = _bundle(tmp_path / "b", plans, catalog, knowledge_dir=knowledge)
    r = run(root, "launch.sh")
    assert r.returncode == 0, r.stderr
    assert endpoints(root) == ["huggingface-cli HF_ENDPOINT=https://hf-mirror.com"]
    r = run(root, "launch.sh", HUB="modelscope", MODEL_DIR="other")
    assert r.returncode != 0 and "no ModelScope id" in r.stderr


# (the instance's cloud, the PyPI mirror pip is pointed at)
CLOUDS = [("GT4.4XLARGE96", TENCENT_PYPI), ("p.n1v100.2xlarge", TUNA)]


@pytest.mark.parametrize("instance, index", CLOUDS)
def test_llamafactory_is_installed_from_the_clouds_pypi_mirror(tmp_path: Path, plans: dict[str, Any],
                                                               catalog: Catalog, instance: str, index: str) -> None:
    root = _bundle(tmp_path, plans, catalog, instance)
    r = run(root, "launch.sh", tools=NO_TRAINER)
    assert r.returncode == 0, r.stderr
    assert _tools(root, "pip")[0] == ["pip", "install", "-i", index, "llamafactory"]
    assert _tools(root, "git") == [] and _tools(root, "llamafactory-cli")


def test_an_empty_pip_index_uses_pips_own_settings(tmp_path: Path, plans: dict[str, Any], catalog: Catalog) -> None:
    root = _bundle(tmp_path, plans, catalog)
    assert run(root, "launch.sh", tools=NO_TRAINER, PIP_INDEX="").returncode == 0
    assert _tools(root, "pip")[0] == ["pip", "install", "llamafactory"]


def test_git_source_clones_then_installs_editable(tmp_path: Path, plans: dict[str, Any], catalog: Catalog) -> None:
    root = _bundle(tmp_path, plans, catalog)
    r = run(root, "launch.sh", tools=NO_TRAINER, LF_SOURCE="git", LF_GIT_URL="https://git.example/lf.git")
    assert r.returncode == 0, r.stderr
    assert _tools(root, "git") == [["git", "clone", "--depth", "1", "https://git.example/lf.git", "LLaMA-Factory"]]
    assert _tools(root, "pip")[0] == ["pip", "install", "-i", TENCENT_PYPI, "-e", "./LLaMA-Factory"]


def test_deepspeed_and_bitsandbytes_come_with_the_plans_that_need_them(tmp_path: Path, plans: dict[str, Any],
                                                                      catalog: Catalog) -> None:
    full = build_launch_bundle(plans["llama70_full"], catalog, "en").files["launch.sh"]
    qlora = build_launch_bundle(plans["t4_qlora"], catalog, "en").files["launch.sh"]
    assert "\nEXTRA_PACKAGES=(deepspeed)" in full and "\nEXTRA_PACKAGES=(bitsandbytes)" in qlora


def test_no_install_source_stops_with_the_fix(tmp_path: Path, plans: dict[str, Any], catalog: Catalog) -> None:
    root = _bundle(tmp_path, plans, catalog)
    r = run(root, "launch.sh", tools=NO_TRAINER, LF_SOURCE="none")
    assert r.returncode != 0 and "LF_SOURCE=pip" in r.stderr and _tools(root, "pip") == []


def test_every_choice_is_a_commented_line_at_the_top(plans: dict[str, Any], catalog: Catalog) -> None:
    sh = build_launch_bundle(plans["qwen_lora"], catalog, "en").files["launch.sh"]
    top = sh.split("\ndie()", 1)[0]
    for name in ("HUB", "MODEL_DIR", "HF_MIRROR", "PIP_INDEX", "LF_SOURCE", "LF_GIT_URL"):
        assert f"|| {name}=" in top, name
        assert f"# {name}:" in top or f"{name}=" in top.split("#", 1)[-1], name
    assert "mirrors.cloud.tencent.com/help/pypi.html" in top  # the mirror's source, beside it


def test_every_modelscope_id_cites_its_line() -> None:
    route = mainland_route(REPO_ROOT / "knowledge")
    assert len(route.models) >= 40
    for row in route.models.values():
        assert row.source.startswith("https://github.com/hiyouga/LLaMA-Factory/blob/") and "#L" in row.source
    assert route.modelscope_id("Qwen/Qwen2-7B") == "Qwen/Qwen2-7B"
    assert route.modelscope_id("meta-llama/Llama-2-7b-hf") == "modelscope/Llama-2-7b-ms"
    assert route.modelscope_id("google/gemma-7b") is None  # the list maps it to gemma-2b-it: left out


def test_every_bundle_repo_has_a_modelscope_id() -> None:
    from service.documents.hf_repos import HF_REPOS

    route = mainland_route(REPO_ROOT / "knowledge")
    assert [repo for repo in HF_REPOS.values() if route.modelscope_id(repo) is None] == []


@pytest.mark.parametrize("lang, heading", [("zh", "软件与模型的下载来源"), ("en", "Where the software and the model come")])
def test_the_request_document_names_the_route(plans: dict[str, Any], catalog: Catalog, lang: str,
                                              heading: str) -> None:
    md = render_request_markdown(plans["qwen_lora"], lang, catalog=catalog)  # type: ignore[arg-type]
    section = md.split(heading, 1)[1].split("\n## ", 1)[0]
    assert "`Qwen/Qwen2-7B`" in section and "HF_ENDPOINT=https://hf-mirror.com" in section
    assert "PIP_INDEX=" in section and "llamafactory" in section


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_docx_is_a4(plans: dict[str, Any], catalog: Catalog, lang: str) -> None:
    import docx

    doc = docx.Document(io.BytesIO(render_request_docx(plans["qwen_lora"], lang, catalog=catalog)))  # type: ignore[arg-type]
    for section in doc.sections:
        assert section.page_width is not None and section.page_height is not None
        assert (round(section.page_width.mm), round(section.page_height.mm)) == (210, 297)
