"""docs/validation.md is the generated validation matrix: CI regenerates it and fails on any difference."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest

from service.evals.runs import HELD_OUT_PERCENT, held_out
from service.settings import REPO_ROOT

pytestmark = [pytest.mark.slow]


@pytest.mark.skipif(importlib.util.find_spec("fitcheck") is None, reason="fitcheck-llm (dev extra) not installed")
def test_committed_matrix_is_the_generated_one() -> None:
    r = subprocess.run([sys.executable, str(REPO_ROOT / "scripts" / "validation_report.py"), "--check"],
                       capture_output=True, text=True, cwd=REPO_ROOT, timeout=900)
    assert r.returncode == 0, r.stderr + "\nRun: python scripts/validation_report.py"


def test_the_matrix_keeps_a_place_for_serving() -> None:
    text = (REPO_ROOT / "docs" / "validation.md").read_text(encoding="utf-8")
    assert "<!-- BEGIN serving section" in text and "<!-- END serving section -->" in text


@pytest.mark.parametrize(
    ("group", "out"),
    [
        # the split is a fixed function of the source, decided before fitting (sha1 mod 100 < 30)
        ("torchtune-readme-optimization-flags", True),
        ("liger-kernel-readme-e2e", False),
        ("ms-swift-megatron-quickstart-benchmark", False),
    ],
)
def test_held_out_split_is_fixed_by_source(group: str, out: bool) -> None:
    assert HELD_OUT_PERCENT == 30
    assert held_out(group) is out


# OOM rows the engine still calls "fits", each with its cause (issue 22 asks for none; these are the misses left).
KNOWN_OOM_MISSES = {
    # the issue gives no memory figure and blames a long sample or the evaluation step
    "lf-5709-llama31-8b-lora-unsloth-4096-1xl40-oom": "OOM outside the training step",
    # "GPU 瞬间被打爆，其他 7 卡占用不多": rank 0 got the whole model at load; not a training-step peak
    "qwen755-qwen72b-full-z3-32xa800-oom": "load-time peak on rank 0",
    # FSDP CPU offload under torch 2.0 at batch 3: the engine finds 12 GiB of 39; cause not found
    "alpaca-280-llama1-7b-full-fsdp-offload-4xa100-40g-bs3-oom": "unexplained",
    # held out: qlora.py of 2023 ran eager attention (transformers < 4.36) where the row leaves it unset
    "qlora193-llama1-7b-2x3090-bs4-oom": "attention kernel of the era not stated",
}


def test_oom_rows_never_fit_beyond_the_known_misses(catalog) -> None:  # type: ignore[no-untyped-def]
    from service.evals.anchors import load_anchors
    from service.evals.validation import oom_violations, rows_from_anchors

    oom = [a for a in load_anchors() if a.kind == "measured_oom"]
    misses = {r.id for r in oom_violations(rows_from_anchors(oom, catalog))}
    assert misses <= set(KNOWN_OOM_MISSES), misses - set(KNOWN_OOM_MISSES)
