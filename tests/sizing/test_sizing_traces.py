"""The engine's activation and state terms against fake-tensor traces of the real model code (evals/traces).

The traces are generated data (scripts/trace_memory.py); the comparison is pure (service/evals/traces.py) and runs
without torch. The one test that traces again needs torch + transformers + peft and is marked `torch`.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest

from service.evals.traces import ARCHS, TRACES_DIR, comparisons, summary
from service.settings import REPO_ROOT

ROWS = comparisons() if TRACES_DIR.exists() else []
needs_traces = pytest.mark.skipif(not ROWS, reason="evals/traces not generated (python scripts/trace_memory.py)")
SCORED = [c for c in ROWS if not c.excluded]

# Per term, the largest |error| a traced setup may show (the traces are exact tensor bytes, so the terms the engine
# derives from them should stay close): per-layer kept tensors, the persistent states, the step's allocated peak.
# A difference under SMALL bytes passes whatever its share (DeepSeek's router casts its weight to fp32 in every
# layer: ~4 MiB, a third of one checkpointed layer's input at 512 tokens).
LIMITS = {"layer": 0.10, "weights": 0.005, "gradients": 0.005, "optimizer": 0.005, "peak": 0.25}
SMALL = 8 * 2**20


@needs_traces
@pytest.mark.parametrize("term", sorted(LIMITS))
def test_every_traced_setup_within_its_limit(term: str) -> None:
    def miss(c) -> float:  # type: ignore[no-untyped-def]
        diff = abs(c.engine[term] - c.traced[term])
        return 0.0 if diff < SMALL else abs(c.error(term) or 0.0)

    worst = max(SCORED, key=miss)
    t = worst.trace
    assert miss(worst) <= LIMITS[term], (f"{worst.arch} {t['method']} ckpt={t['ckpt']} {t['attention']} s{t['seq']} "
                                         f"b{t['batch']}: {term} {worst.error(term):+.1%}")


@needs_traces
def test_mean_activation_error_per_architecture() -> None:
    # The step's transient peak (activations + the backward's temporaries) per architecture, mean |error|
    for arch, terms in summary(ROWS).items():
        n, mae, _ = terms["activations"]
        assert mae < 25.0, f"{arch}: activations {mae:.1f} % over {n} traces"


@needs_traces
def test_every_architecture_is_traced_or_explained() -> None:
    # every family of knowledge/models.yaml is traced or says why not (service/evals/traces.py ARCHS, NOT_TRACED)
    traced = {c.arch for c in ROWS}
    assert traced == set(ARCHS)


@pytest.mark.torch
@pytest.mark.skipif(any(importlib.util.find_spec(m) is None for m in ("torch", "transformers", "peft")),
                    reason="torch, transformers and peft (the service extra) are needed to trace")
def test_traces_are_current() -> None:
    r = subprocess.run([sys.executable, str(REPO_ROOT / "scripts" / "trace_memory.py"), "--check"],
                       capture_output=True, text=True, cwd=REPO_ROOT, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
