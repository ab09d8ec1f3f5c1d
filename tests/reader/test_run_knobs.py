"""What a post about a run states beyond the model, card and data: the strategy and settings, a server's flags, the
machines, when it failed, and a pasted CUDA error's figures (service/reader/run_knobs.py, cuda_error.py)."""

from __future__ import annotations

import pytest

from service.reader.cuda_error import find_cuda_error
from service.reader.run_knobs import hardware, outcome, serve_knobs, strategy, train_knobs


@pytest.mark.parametrize(("text", "want"), [
    ("8卡4090 torchrun 跑lora", "ddp"),  # data parallel: no ZeRO, no FSDP
    ("accelerate launch --num_processes 8 train.py", "ddp"),
    ("torchrun --nproc_per_node 8 with deepspeed zero3", "zero"),  # DeepSpeed named: sharded
    ("fsdp full_shard on 8 gpus", "fsdp"),
    ("device_map=auto across 4 cards", "device_map"),
    ("单卡训练", None),
])
def test_strategy(text: str, want: str | None) -> None:
    assert strategy(text) == want


def test_training_settings() -> None:
    k = train_knobs("pure_bf16, adamw_8bit, attn_implementation='eager', use_liger_kernel: true, zero3_offload, "
                    "gradient_checkpointing: false, gradient_accumulation_steps=16, num_generations=8, "
                    "max_completion_length 4k, max_pixels=1280*28*28, max_dynamic_patch 6, nframes 32")
    assert k == {"strategy": "zero", "precision": "pure-bf16", "optimizer": "adamw-8bit", "attention": "eager",
                 "loss": "chunked", "offload": True, "checkpointing": False, "grad_accum": 16, "num_generations": 8,
                 "completion_len": 4096, "max_pixels": 1280 * 28 * 28, "image_slices": 6, "video_frames": 32}
    assert train_knobs("开了gc还是oom")["checkpointing"] is True
    assert train_knobs("qwen2-7b lora 4090") == {}


def test_server_flags() -> None:
    assert serve_knobs("vllm serve x --tensor-parallel-size 4 --gpu-memory-utilization 0.85 --max-num-seqs 64 "
                       "--max-num-batched-tokens 8192") == {"tp": 4, "gpu_memory_utilization": 0.85,
                                                            "max_num_seqs": 64, "max_num_batched_tokens": 8192}
    assert serve_knobs("sglang --mem-fraction-static 0.7 tp=2") == {"tp": 2, "gpu_memory_utilization": 0.7}


@pytest.mark.parametrize(("text", "want"), [
    ("两台8卡H800 10GbE", {"interconnect": "ethernet", "network_gbps": 10.0, "nodes": 2, "gpus_per_node": 8}),
    ("2机16卡 A800 走IB", {"interconnect": "rdma", "nodes": 2, "gpus_per_node": 8}),
    ("机器1T内存", {"host_ram_gb": 1024.0}),
    ("948G RAM, nproc_per_node=8", {"host_ram_gb": 948.0, "gpus_per_node": 8}),
    ("没有NVLink的4卡", {"interconnect": "pcie"}),
])
def test_machines(text: str, want: dict[str, object]) -> None:
    assert hardware(text) == want


def test_when_it_failed() -> None:
    assert outcome("lmdeploy 显存缓慢增长 OOM") == {"where": "inference"}
    assert outcome("权重加载完直接 OOM")["where"] == "load"
    assert outcome("一个step要40多秒")["step_s"] == 40
    assert outcome("2.5 s/it")["step_s"] == 2.5 and outcome("4 it/s")["step_s"] == 0.25
    assert outcome("TTFT ~4s at 8 QPS")["ttft_ms"] == 4000
    assert outcome("两台比一台还慢")["kind"] == "scaling" and outcome("双卡比单卡还慢")["kind"] == "scaling"
    assert outcome("跑得很慢") == {}


def test_a_pasted_cuda_oom_error() -> None:
    new = find_cuda_error("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a "
                          "total capacity of 23.65 GiB of which 1.20 GiB is free. Process 1234 has 10.30 GiB memory "
                          "in use. Process 77 has 500.00 MiB memory in use. Including non-PyTorch memory, this "
                          "process has 12.10 GiB memory in use.")
    assert (new.allocate_gb, new.card_gb, new.free_gb, new.process_gb) == (2.0, 23.65, 1.2, 12.1)
    assert new.other_gb == pytest.approx(10.3 + 500 / 1024, abs=0.01)  # every other process on the card
    old = find_cuda_error("CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 23.65 GiB total capacity; "
                          "20.10 GiB already allocated; 1.20 GiB free; 21.00 GiB reserved in total by PyTorch)")
    assert (old.card_gb, old.free_gb, old.process_gb, old.other_gb) == (23.65, 1.2, 21.0, None)
    vllm = find_cuda_error("ValueError: Free memory on device (10.5/23.6 GiB) on startup is less than desired GPU "
                           "memory utilization (0.9, 21.2 GiB)")
    assert (vllm.card_gb, vllm.free_gb, vllm.other_gb) == (23.6, 10.5, 13.1)
    assert not find_cuda_error("OOM at 4k on two 3090s").found


@pytest.mark.parametrize(("text", "ttft_ms"), [
    ("vllm 首字延迟要2秒，正常吗", 2000.0),  # seen: the run takes 2 s to its first token
    ("ttft 800ms under load", 800.0),
    ("部署Qwen2.5-7B，首字延迟要低于500ms，每秒20个请求", None),  # a target, not a slow run (was read as seen)
    ("首字延迟控制在300ms以内", None),
])
def test_a_first_token_time_is_seen_unless_it_is_a_target(text: str, ttft_ms: float | None) -> None:
    assert outcome(text).get("ttft_ms") == ttft_ms


@pytest.mark.parametrize(("text", "want"), [
    ("A100 上用 fp8 训 qwen2 7b lora 放得下吗", "fp8"),
    ("用 fp8 混合精度训练 llama 8b", "fp8"),
    ("用 fp8 全参训 llama3 8b 要几张 A100", "fp8"),  # a word between
    ("fp8 权重，另外训一个 lora", None),  # across a clause
    ("can I fine-tune qwen2 7b with lora in fp8 on one A10?", "fp8"),
    ("fp8 部署 qwen2 72b 要几张卡", None),  # FP8 weights of a server, not a training precision
    ("vllm --kv-cache-dtype fp8", None),
])
def test_fp8_training_is_a_precision(text: str, want: str | None) -> None:
    assert train_knobs(text).get("precision") == want
