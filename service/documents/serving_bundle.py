"""The serving launch bundle for one option of a serving plan: serve_vllm.sh, serve_sglang.sh, bench.sh (the load
the plan was sized for, through vLLM's benchmark client) and README.md. Pure: returns the files' text."""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from service.documents import safe
from service.documents.mainland import mainland_route
from service.planner.serving_types import ServingOption, ServingPlan

EXECUTABLE = ("serve_vllm.sh", "serve_sglang.sh", "bench.sh")


@dataclass(frozen=True)
class ServingBundle:
    files: dict[str, str]
    summary: str


def _script(command: str, note: str, head: str = "") -> str:
    return f"#!/usr/bin/env bash\n# {safe.comment(note)}\nset -euo pipefail\n{head}{command}\n"


def _mainland(repo: str | None) -> str:
    """Commented choices for an instance in mainland China: a Hugging Face mirror, or ModelScope first."""
    route = mainland_route()
    mirror = route.mirrors.hf_mirror  # its note and source: knowledge/mirrors.yaml
    lines = ["# In mainland China, either download through a Hugging Face mirror (a public one run by a third party):",
             f"# export HF_ENDPOINT={safe.sh(mirror.url)}"]
    ms = route.modelscope_id(repo)
    if ms is not None:
        lines += ["# or download from ModelScope first and serve the folder instead of the repo id:",
                  f"# modelscope download --model {safe.sh(ms)} --local_dir models/{safe.sh(ms.rsplit('/', 1)[-1])}"]
    return "\n".join(lines) + "\n"


def _served_repo(vllm: str) -> str | None:
    """The repo id `vllm serve` loads (None for a local-path placeholder)."""
    words = shlex.split(vllm.splitlines()[0].rstrip(" \\")) if vllm else []
    path = words[2] if len(words) > 2 and words[:2] == ["vllm", "serve"] else ""
    return path if path and not path.startswith("/") else None


def _bench(plan: ServingPlan, c: ServingOption, repo: str | None) -> str:
    s, w = c.sizing, plan.workload
    load = (f"--max-concurrency {w.concurrency:g}" if w.concurrency is not None
            else f"--request-rate {w.request_rate:g}" if w.request_rate is not None
            else f"--max-concurrency {max(1, int(s.concurrency))}")
    prompts = max(50, int(4 * (w.concurrency or s.concurrency or 1)))
    return _script(f"vllm bench serve --backend vllm --base-url http://127.0.0.1:8000 --model "
                   f"{safe.sh(repo or plan.model.id)} \\\n"
                   f"  --dataset-name random --random-input-len {int(s.input_tokens)} --random-output-len "
                   f"{int(s.output_tokens)} \\\n  --num-prompts {prompts} {load}",
                   "the load the plan was sized for; compare TTFT / TPOT / output tok/s with the README",
                   _mainland(repo))


def serving_bundle(plan: ServingPlan, index: int = 0, lang: str = "zh") -> ServingBundle:
    """Files that start and check the option `index` of `plan` (0 = the pick)."""
    if not plan.candidates:
        from service.errors import InfeasibleError

        raise InfeasibleError("The serving plan has no option to launch.", plan.infeasible or "Change the workload.")
    safe.model_id(plan.model.id, "model")  # the model's id and name land in the scripts and the README
    safe.display_name(plan.model.name, "model")
    c = plan.candidates[min(index, len(plan.candidates) - 1)]
    s = c.sizing
    repo = _served_repo(c.launch.vllm)
    cost = "price on request" if c.cost_per_month_cny is None else f"¥{c.cost_per_month_cny:,.0f}/month ({c.billing})"
    summary = (f"{plan.model.name} on {c.cloud} {c.instance_type}: {c.nodes} x {c.gpu_count:g} {c.gpu}, "
               f"{c.replicas} replica(s) of {s.gpus_per_replica} GPU(s); {s.output_tokens_per_s:,.0f} output tok/s, "
               f"TTFT {s.ttft_ms if s.ttft_ms is not None else '-'} ms, TPOT {s.tpot_ms} ms; {cost}")
    zh = lang == "zh"
    readme = "\n".join([
        f"# {'部署包' if zh else 'Serving bundle'}: {safe.md(plan.model.name)}", "", safe.md(summary), "",
        f"- {'副本' if zh else 'Replicas'}: {c.launch.replicas_note}",
        f"- {'显存' if zh else 'Memory'}: {s.weights_gib_per_gpu} GiB weights/GPU, KV pool {s.kv_cache_gib_per_gpu} GiB/GPU "
        f"= {s.kv_capacity_tokens:,} tokens, {s.max_concurrency_at_load:g} sequences at {s.input_tokens}+{s.output_tokens} tokens",
        f"- {'余量' if zh else 'Headroom'}: {s.headroom_zh if zh else s.headroom}", "",
        "```bash", "bash serve_vllm.sh      # or: bash serve_sglang.sh", "bash bench.sh           # in another shell",
        "```", ""])
    files = {
        "serve_vllm.sh": _script(c.launch.vllm, "one replica; see README.md for the others", _mainland(repo)),
        "serve_sglang.sh": _script(c.launch.sglang, "the SGLang equivalent of serve_vllm.sh", _mainland(repo)),
        "bench.sh": _bench(plan, c, repo),
        "README.md": readme,
    }
    return ServingBundle(files, summary)
