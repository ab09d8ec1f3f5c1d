"""launch.sh and monitor.sh run against stub nvidia-smi / python / llamafactory-cli on PATH (no GPU needed)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from service.catalog.loader import Catalog
from service.documents.bundle import build_launch_bundle

from .conftest import index_of
from .stubs import run, write


def _write(root: Path, files: dict[str, str], with_data: bool = True) -> None:
    write(root, files, with_data)


def _run(root: Path, script: str, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return run(root, script, *args, **env)


def _bundle_dir(tmp_path: Path, plans: dict[str, Any], catalog: Catalog, plan_name: str,
                instance: str | None = None, with_data: bool = True) -> Path:
    p = plans[plan_name]
    i = 0 if instance is None else index_of(p, instance)
    _write(tmp_path, build_launch_bundle(p, catalog, "en", i).files, with_data)
    return tmp_path


def test_single_gpu_launch_runs_train_yaml(tmp_path: Path, plans: dict[str, Any], catalog: Catalog) -> None:
    root = _bundle_dir(tmp_path, plans, catalog, "qwen_lora")
    r = _run(root, "launch.sh")
    assert r.returncode == 0, r.stderr
    assert "RAN train train.yaml model_name_or_path=models/qwen2-7b FORCE_TORCHRUN= " in r.stdout
    assert "RAN train train.yaml" in (root / "logs" / "train.log").read_text()


@pytest.mark.parametrize("env, message", [
    ({"STUB_DRIVER_CUDA": "10.2"}, "needs CUDA >= 11.0"),  # driver too old for the A100
    ({"STUB_TORCH_CUDA": "10.2"}, "PyTorch is built for CUDA 10.2"),  # wheel too old
    ({"STUB_GPUS": "0"}, "found 0 GPU(s)"),  # instance without the GPUs the plan uses
])
def test_environment_checks_stop_bad_machines(tmp_path: Path, plans: dict[str, Any], catalog: Catalog,
                                              env: dict[str, str], message: str) -> None:
    root = _bundle_dir(tmp_path, plans, catalog, "qwen_lora", "GT4.4XLARGE96")  # one A100 40GB
    r = _run(root, "launch.sh", **env)
    assert r.returncode != 0 and message in r.stderr and "RAN" not in r.stdout


def test_v100_refuses_cuda_13_wheels(tmp_path: Path, plans: dict[str, Any], catalog: Catalog) -> None:
    root = _bundle_dir(tmp_path, plans, catalog, "qwen_lora", "p.n1v100.2xlarge")
    r = _run(root, "launch.sh", STUB_DRIVER_CUDA="13.0", STUB_TORCH_CUDA="13.0")
    assert r.returncode != 0 and "cu126" in r.stderr


def test_missing_data_is_reported(tmp_path: Path, plans: dict[str, Any], catalog: Catalog) -> None:
    root = _bundle_dir(tmp_path, plans, catalog, "t4_qlora", with_data=False)
    r = _run(root, "launch.sh")
    assert r.returncode != 0 and "data/my_qa.jsonl is missing" in r.stderr


def test_multinode_needs_rank_and_master(tmp_path: Path, plans: dict[str, Any], catalog: Catalog) -> None:
    root = _bundle_dir(tmp_path, plans, catalog, "llama70_full")
    r = _run(root, "launch.sh", STUB_GPUS="8")
    assert r.returncode != 0 and "NODE_RANK" in r.stderr and "RAN" not in r.stdout


def test_multinode_exports_torchrun_and_nccl(tmp_path: Path, plans: dict[str, Any], catalog: Catalog) -> None:
    root = _bundle_dir(tmp_path, plans, catalog, "llama70_full")
    r = _run(root, "launch.sh", STUB_GPUS="8", NODE_RANK="1", MASTER_ADDR="10.0.0.1")
    assert r.returncode == 0, r.stderr
    assert ("FORCE_TORCHRUN=1 NNODES=2 NODE_RANK=1 MASTER_PORT=29500 NCCL_IB_HCA=mlx5 NCCL_IB_DISABLE=0"
            in r.stdout)
    assert (root / "logs" / "train-node1.log").exists()


def test_placeholder_model_blocks_the_launch(tmp_path: Path, plans: dict[str, Any], catalog: Catalog) -> None:
    """A model with no known repo: launch.sh stops before training until MODEL_DIR names its weights."""
    p = {**plans["qwen_lora"], "model": {**plans["qwen_lora"]["model"], "id": "generic-7b"}}
    _write(tmp_path, build_launch_bundle(p, catalog, "en").files)
    r = _run(tmp_path, "launch.sh")
    assert r.returncode != 0 and "MODEL_DIR" in r.stderr and "RAN" not in r.stdout
    weights = tmp_path / "my-weights"
    weights.mkdir()
    (weights / "config.json").write_text("{}")
    r = _run(tmp_path, "launch.sh", MODEL_DIR=str(weights))
    assert r.returncode == 0, r.stderr
    assert f"model_name_or_path={weights}" in r.stdout


@pytest.mark.parametrize("mode, code, text", [
    ("snapshot", 0, "Stub GPU"),  # one nvidia-smi table
    ("log", 1, "no logs yet"),  # nothing to follow before the run
    ("bogus", 2, "usage"),  # unknown mode
])
def test_monitor_modes(tmp_path: Path, plans: dict[str, Any], catalog: Catalog, mode: str, code: int,
                       text: str) -> None:
    root = _bundle_dir(tmp_path, plans, catalog, "qwen_lora")
    r = _run(root, "monitor.sh", mode)
    assert r.returncode == code and text in r.stdout + r.stderr
