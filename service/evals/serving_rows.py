"""Measured serving runs (evals/serving_runs.yaml) read and mapped onto engine inputs.

A row names its model by Hugging Face repo id, its GPU, engine (and release where known), tensor-parallel degree,
dtypes, memory setting, context and load. Mapping: the model to a knowledge/models.yaml row (explicit names
first, then the catalog's own resolution with quantisation suffixes removed), the GPU to a catalog GPU, the
dtype labels to the engine's (int4-awq / int4-gptq / int4-bnb -> int4). A row whose model, GPU or setting the
engine cannot represent is kept with the reason it is not scored.

The held-out split is fixed by source: a source whose SHA-256 (first 8 hex digits, as an integer) mod 100 is
below 30 is held out, so every figure from one page or issue thread falls on the same side.
"""

from __future__ import annotations

import hashlib
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from service.catalog.loader import Catalog
from service.catalog.queries import resolve_gpu, resolve_model
from service.catalog.schema import GpuSpec, ModelSpec
from service.catalog.unsized import UnsizedModelError
from service.errors import UnknownNameError
from service.evals.dataset import EVALS_DIR, read_yaml
from service.sizing.serving.types import KvDtype, ServingSetup, WeightsDtype

DEFAULT_RUNS = EVALS_DIR / "serving_runs.yaml"
HELD_OUT_PERCENT = 30
# ShareGPT as the benchmark scripts sample it: mean prompt and completion tokens per request, measured on the
# rows that print both (LMDeploy's kv-quant H200 run: 2368.8 / 10.74 = 220.6 in, 2186.7 / 10.74 = 203.6 out).
SHAREGPT_INPUT, SHAREGPT_OUTPUT = 221, 204
# Row model names that the catalog's own resolution cannot place (quantised repos, names as a page wrote them).
MODEL_NAMES = {
    "Qwen/Qwen3-235B-A22B-FP8": "Qwen3-235B-A22B",
    "Qwen/Qwen1.5-7B-Chat-GPTQ-Int4": "Qwen1.5-7B",
    "Qwen/Qwen3-30B-A3B-Base": "Qwen3-30B-A3B",
    "Qwen/Qwen3-30B-A3B-Instruct-2507": "Qwen3-30B-A3B",
    "Llama-3.1-8B (as written)": "Llama-3.1-8B",
    "Llama 3.1 70B (FP8) (as written)": "Llama-3.1-70B",
}
_NAME_PREFIX = re.compile(r"^(llama2-\d+b|internlm-\d+b|Llama-2-\d+B-chat)", re.IGNORECASE)
_GPU_NAMES = {"80GB-unstated": "H100-SXM", "V100-32G": "V100-32G-SXM2"}
# vLLM's release current in a month (github.com/vllm-project/vllm/releases), for rows that give a date, not a
# release: the memory accounting changed with the release (service/sizing/serving/versions.py).
VLLM_RELEASES = ((2024, 1, "0.3.0"), (2024, 3, "0.3.3"), (2024, 4, "0.4.1"), (2024, 6, "0.5.0"), (2024, 7, "0.5.2"),
                 (2024, 8, "0.5.4"), (2024, 9, "0.6.1"), (2024, 10, "0.6.3"), (2024, 11, "0.6.4"), (2024, 12, "0.6.5"),
                 (2025, 1, "0.7.0"), (2025, 2, "0.7.3"), (2025, 3, "0.8.0"), (2025, 5, "0.8.5"), (2025, 6, "0.9.1"),
                 (2025, 8, "0.10.1"), (2025, 10, "0.11.0"))
_MONTHS = {m: i + 1 for i, m in enumerate(("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct",
                                            "nov", "dec"))}
_DATE = re.compile(r"\b(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.? (20\d\d)\b|\b(20\d\d)-(\d\d)\b",
                   re.IGNORECASE)
_RELEASE_IN_NOTE = re.compile(r"(?<![\d.])v?(0\.\d+\.\d+)(?![\d.])")  # not an IP address (0.0.0.0)
_RELEASE = re.compile(r"\d+\.\d+\.\d+")
_PODS = re.compile(r"\bGPU pods?\b", re.IGNORECASE)
_WEIGHTS: dict[str, WeightsDtype] = {"bf16": "bf16", "fp16": "fp16", "fp8": "fp8", "int8": "int8", "int4": "int4",
                                     "int4-awq": "int4", "int4-gptq": "int4", "int4-bnb": "int4", "mxfp4": "mxfp4"}


class ServingRun(BaseModel):
    """One row of evals/serving_runs.yaml (fields the engine reads; the rest are kept as they are)."""

    model_config = ConfigDict(extra="allow", frozen=True)

    id: str
    source: str
    kind: Literal["startup", "no_start", "load"]
    engine: str
    engine_version: str | None = None
    model: str
    gpu: str
    gpus: int | None = None
    tp: int | None = None
    weights: str = "bf16"
    kv_dtype: str = "auto"
    mem_fraction: float | None = None
    max_model_len: int | None = None
    measured: dict[str, Any]
    load: dict[str, Any] | None = None
    note: str = ""


LoadKind = Literal["closed", "open", "batch"]


@dataclass(frozen=True)
class LoadSpec:
    kind: LoadKind
    input_tokens: int
    output_tokens: int
    users: float  # closed: concurrency; batch: requests; open: 0
    rate_per_s: float  # open loop only
    assumed: tuple[str, ...] = field(default=())
    requests: float = 0.0  # closed: the prompts sent through the `users` slots (0: not stated)


@dataclass(frozen=True)
class Case:
    """A row mapped onto the engine, or the reason it is not scored."""

    run: ServingRun
    held_out: bool
    model: ModelSpec | None = None
    gpu: GpuSpec | None = None
    setup: ServingSetup | None = None
    load: LoadSpec | None = None
    skip: str = ""
    assumed: tuple[str, ...] = field(default=())


def held_out(source: str) -> bool:
    return int(hashlib.sha256(source.encode()).hexdigest()[:8], 16) % 100 < HELD_OUT_PERCENT


def load_runs(path: Path = DEFAULT_RUNS) -> list[ServingRun]:
    data = read_yaml(path, "serving runs")
    return [ServingRun.model_validate(r) for r in (data or {}).get("runs", [])]


def _model(name: str, cat: Catalog) -> ModelSpec | None:
    target = MODEL_NAMES.get(name)
    prefix = _NAME_PREFIX.match(name)
    candidates = [target] if target else [name.split(" (")[0], prefix.group(1) if prefix else ""]
    for c in filter(None, candidates):
        for variant in (c, re.sub(r"-(AWQ|GPTQ-Int4|GPTQ-Int8|FP8|chat)$", "", c, flags=re.IGNORECASE)):
            try:
                return resolve_model(variant, cat.models)
            except (UnknownNameError, UnsizedModelError):  # a release the catalog knows but does not size
                continue
    return None


def _gpu(name: str, cat: Catalog) -> GpuSpec | None:
    try:
        return resolve_gpu(_GPU_NAMES.get(name, name), cat.gpus)[0]
    except UnknownNameError:
        return None


def _load(run: ServingRun) -> LoadSpec | None:
    ld, m = run.load or {}, run.measured
    assumed: list[str] = []
    inp, out = ld.get("input_tokens"), ld.get("output_tokens")
    reqs = m.get("request_throughput")
    if out is None and reqs and m.get("output_tokens_per_s"):
        out = round(m["output_tokens_per_s"] / reqs)
        assumed.append(f"output {out} tokens/request = output tok/s / req/s")
    if inp is None and reqs and m.get("total_tokens_per_s") and m.get("output_tokens_per_s"):
        inp = round((m["total_tokens_per_s"] - m["output_tokens_per_s"]) / reqs)
        assumed.append(f"input {inp} tokens/request = (total - output tok/s) / req/s")
    if inp is None or out is None:
        inp, out = inp or SHAREGPT_INPUT, out or SHAREGPT_OUTPUT
        assumed.append(f"lengths not stated: ShareGPT means {inp} in / {out} out")
    rate, users, prompts = ld.get("request_rate"), ld.get("concurrency"), ld.get("num_prompts")
    if rate is not None and not math.isinf(float(rate)):
        return LoadSpec("open", int(inp), int(out), 0.0, float(rate), tuple(assumed))
    if rate is not None:  # all prompts at once
        return LoadSpec("batch", int(inp), int(out), float(prompts or 1), 0.0, tuple(assumed))
    if users is None:
        return None
    kind: LoadKind = "batch" if prompts is None else "closed"  # a fixed batch run to completion (static bench)
    return LoadSpec(kind, int(inp), int(out), float(users), 0.0, tuple(assumed), float(prompts or 0))


def vllm_release(run: ServingRun, by_source: dict[str, str] | None = None) -> tuple[str | None, str]:
    """The vLLM release a row ran: as stated, else the one its note names, else one that another row of the same
    source states, else the one current at the date its note gives; (release, how it was found)."""
    if run.engine_version and _RELEASE.search(run.engine_version):
        return run.engine_version, ""
    if by_source and run.source in by_source:
        return by_source[run.source], f"vLLM {by_source[run.source]} as another row of the same source states"
    named = _RELEASE_IN_NOTE.search(run.note)
    if named:
        return named.group(1), f"vLLM {named.group(1)} as the note reads the log format"
    date = _DATE.search(run.note)
    if date is None:
        return None, "vLLM release unknown: the current one"
    year, month = (int(date.group(2)), _MONTHS[date.group(1)[:3].lower()]) if date.group(1) else (
        int(date.group(3)), int(date.group(4)))
    release = next((r for y, mo, r in reversed(VLLM_RELEASES) if (y, mo) <= (year, month)), VLLM_RELEASES[0][2])
    return release, f"vLLM {release}, the release current in {year}-{month:02d} (the note's date)"


def releases_by_source(runs: list[ServingRun]) -> dict[str, str]:
    """vLLM releases stated (or read from the log format) by some row of each source."""
    out: dict[str, str] = {}
    for r in runs:
        if r.engine != "vllm":
            continue
        stated = r.engine_version if r.engine_version and _RELEASE.search(r.engine_version) else None
        named = _RELEASE_IN_NOTE.search(r.note)
        release = stated or (named.group(1) if named else None)
        if release:
            out.setdefault(r.source, release)
    return out


def pod_sources(runs: list[ServingRun]) -> set[str]:
    """Sources whose deployments put each GPU in its own Kubernetes pod (tensor parallel over the pod network)."""
    return {r.source for r in runs if _PODS.search(r.note)}


def to_case(run: ServingRun, cat: Catalog, by_source: dict[str, str] | None = None,
            pod_sources: set[str] | None = None) -> Case:
    ho = held_out(run.source)
    model, gpu = _model(run.model, cat), _gpu(run.gpu, cat)
    if model is None:
        return Case(run, ho, skip=f"model '{run.model}' has no architecture in knowledge/models.yaml")
    if gpu is None:
        return Case(run, ho, model, skip=f"GPU '{run.gpu}' is not in the catalog")
    if run.engine not in ("vllm", "sglang", "trtllm", "lmdeploy"):
        return Case(run, ho, model, gpu, skip=f"engine '{run.engine}' is not modelled")
    weights = _WEIGHTS.get(run.weights.split(" ")[0])
    if weights is None:
        return Case(run, ho, model, gpu, skip=f"weights '{run.weights}' not modelled")
    kv_word = run.kv_dtype.split(" ")[0]
    kv: KvDtype = "fp8" if kv_word.startswith("fp8") else "auto"
    assumed = [f"GPU '{run.gpu}' taken as {gpu.id}"] if _GPU_NAMES.get(run.gpu) else []
    if weights == "int4" and run.weights == "int4-bnb":
        assumed.append("bitsandbytes 4-bit sized as AWQ/GPTQ int4")
    eager = "enforce-eager" in (run.engine_version or "") or "--enforce-eager" in run.note
    version = run.engine_version
    if run.engine == "vllm":
        version, how = vllm_release(run, by_source)
        assumed += [how] if how else []
    setup = ServingSetup(engine=run.engine, weights=weights, kv_dtype=kv, tp=run.tp or run.gpus or 1,  # type: ignore[arg-type]
                         mem_fraction=run.mem_fraction, max_model_len=run.max_model_len,
                         engine_version=version, enforce_eager=eager)
    load = _load(run) if run.kind == "load" else None
    if run.kind == "load" and setup.tp > 1 and run.source in (pod_sources or set()):
        return Case(run, ho, model, gpu, setup, skip="tensor parallel across Kubernetes pods (all-reduce over the "
                    "pod network, not NVLink or PCIe peer-to-peer): a topology the engine does not model")
    if run.kind == "load" and load is None:
        return Case(run, ho, model, gpu, setup, skip="load point not stated (no concurrency or rate)")
    return Case(run, ho, model, gpu, setup, load, assumed=tuple(assumed) + (load.assumed if load else ()))
