"""docs/validation.md is the generated validation matrix: CI regenerates it and fails on any difference."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest

from service.evals.runs import HELD_OUT_PERCENT, held_out
from service.settings import REPO_ROOT


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
