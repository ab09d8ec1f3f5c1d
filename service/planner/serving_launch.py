"""The commands that start one replica of a serving plan: `vllm serve` and SGLang's `launch_server`, with the
tensor-parallel degree, context length and memory setting the sizing used (flags as vLLM's and SGLang's
`--help` name them: --tensor-parallel-size, --max-model-len, --gpu-memory-utilization, --quantization fp8,
--kv-cache-dtype fp8; --tp, --context-length, --mem-fraction-static, --kv-cache-dtype fp8_e4m3)."""

from __future__ import annotations

import shlex

from service.catalog.schema import ModelSpec
from service.planner.serving_types import Launch, ServingSizing

VLLM_PORT, SGLANG_PORT = 8000, 30000


def model_path(m: ModelSpec, weights: str) -> str:
    """A Hugging Face repo id to serve when the catalog knows one, else a placeholder for your checkpoint.
    Quantised int4 / int8 serving loads a quantised checkpoint (AWQ, GPTQ, W8A8): the placeholder says so."""
    repo = next((a for a in m.aliases if "/" in a), "")
    if weights in ("int4", "int8"):
        return f"/path/to/{m.id}-{'AWQ' if weights == 'int4' else 'W8A8'}"
    return repo or f"/path/to/{m.id}"


def launch(m: ModelSpec, s: ServingSizing, nodes: int, replicas: int, gpus_per_node: int,
           sglang_default_fraction: float, sglang_unsupported: str | None = None) -> Launch:
    """`sglang_default_fraction`: SGLang's own default on this GPU, used when the plan was sized for another
    engine (vLLM's utilization is a different quantity); `sglang_unsupported`: why SGLang cannot run it here."""
    path = shlex.quote(model_path(m, s.weights))
    tp, pp = s.tensor_parallel, s.pipeline_parallel
    vllm = [f"vllm serve {path}", f"--tensor-parallel-size {tp}"]
    vllm += [f"--pipeline-parallel-size {pp}"] if pp > 1 else []
    vllm += [f"--max-model-len {s.max_model_len}", f"--gpu-memory-utilization {s.mem_fraction:g}"]
    sglang = [f"python -m sglang.launch_server --model-path {path}", f"--tp {tp}"]
    sglang += [f"--pp-size {pp} --nnodes {pp} --node-rank 0 --dist-init-addr HEAD_IP:5000"] if pp > 1 else []
    sglang += [f"--context-length {s.max_model_len}",
               f"--mem-fraction-static {s.mem_fraction if s.engine == 'sglang' else sglang_default_fraction:g}"]
    if pp > 1 and m.moe is not None:
        vllm.append("--enable-expert-parallel")
    if s.weights == "fp16":  # a BF16 release on a card without BF16 (V100, T4): vLLM asks for --dtype float16 (= half)
        vllm.append("--dtype float16")
        sglang.append("--dtype float16")
    if s.weights == "fp8" and s.runtime != "npu":
        vllm.append("--quantization fp8")
        sglang.append("--quantization fp8")
    if s.weights in ("int8", "int4") and s.runtime == "npu":
        vllm.append("--quantization ascend")  # a ModelSlim W8A8 / W4A16 checkpoint (vllm-ascend)
    if s.kv_dtype == "fp8":
        vllm.append("--kv-cache-dtype fp8")
        sglang.append("--kv-cache-dtype fp8_e4m3")
    vllm.append(f"--port {VLLM_PORT}")
    sglang.append(f"--port {SGLANG_PORT}")
    per_node = max(1, replicas // max(1, nodes))
    note = (f"{replicas} replica{'s' if replicas > 1 else ''} on {nodes} instance{'s' if nodes > 1 else ''} "
            f"({per_node} per instance of {gpus_per_node} GPUs)")
    visible = "ASCEND_RT_VISIBLE_DEVICES" if s.runtime == "npu" else "CUDA_VISIBLE_DEVICES"
    if pp > 1:
        note = (f"{replicas} replica{'s' if replicas > 1 else ''} of {pp} nodes x {tp} GPUs on {nodes} "
                f"instance{'s' if nodes > 1 else ''}: tensor parallel inside a node, one pipeline stage per node; "
                "start a Ray cluster over each replica's nodes (ray start --head on one, ray start --address on the "
                "others), then run vllm serve on the head")
        if m.moe is not None:
            note += "; MoE: --enable-expert-parallel spreads the experts over all the replica's GPUs"
    elif per_node > 1:
        note += (f": start each with its own GPUs and port ({visible}=0-{s.gpus_per_replica - 1}, "
                 f"port {VLLM_PORT}; the next {s.gpus_per_replica} GPUs, port {VLLM_PORT + 1} ...)")
    if replicas > 1:
        note += "; put a load balancer (the cloud's CLB / nginx) in front of the replicas"
    sglang_text = f"# {sglang_unsupported}" if sglang_unsupported else " \\\n  ".join(sglang)
    return Launch(vllm=" \\\n  ".join(vllm), sglang=sglang_text, replicas_note=note)
