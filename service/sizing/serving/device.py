"""What a serving engine sees of a GPU: the total CUDA reports, and the memory outside the engine's own tensors.

Engines size their KV pool from `torch.cuda.mem_get_info()` (cudaMemGetInfo), whose total is below the
datasheet figure: ECC and the driver's reservation come off first (a GDDR6 card with ECC on, such as the A10, L4,
L20 or L40S, shows ~94 % of its nominal memory). The figures below are the totals CUDA reports on each card, in
GiB, as engines print them ("total_gpu_memory (79.19GiB) x gpu_memory_utilization", "Free memory on device
(x/79.19 GiB)", CUDA OOM messages "GPU 0 has a total capacity of 22.06 GiB"); cards not listed get 99 % of the
nominal memory less 0.35 GiB (HBM cards, no ECC cost).
"""

from __future__ import annotations

from service.catalog.schema import GpuSpec

# GpuSpec.id -> GiB that CUDA reports as total. Estimates from engine logs and OOM messages; refit when a
# measured row prints the total (evals/serving_runs.yaml).
CUDA_TOTAL_GIB: dict[str, float] = {
    "P4": 7.43,
    "P40": 22.38,
    "T4": 14.58,
    "V100-16G-SXM2": 15.77, "V100-16G-PCIE": 15.77,
    "V100-32G-SXM2": 31.74, "V100-32G-PCIE": 31.74,
    "A10": 22.18, "A10G": 22.18,  # "GPU 0 has a total capacity of 22.18 GiB" (MiniCPM-V#640)
    "A30": 23.50,
    "A40": 44.35,
    "L4": 22.06,
    "L20": 44.39, "L40": 44.39, "L40S": 44.39,
    "RTX-3090": 23.58, "RTX-4090": 23.55, "RTX-4090D": 23.55,  # vllm#10517 log; 23.08 = 0.98 x 23.55 (#13061)
    "A100-40G-PCIE": 39.44, "A100-40G-SXM": 39.44, "A800-40G-PCIE": 39.44,  # 39.50 (#12330), 39.38 (#16570)
    "A100-80G-PCIE": 79.15, "A100-80G-SXM": 79.15,
    "A800-80G-PCIE": 79.33, "A800-80G-SXM": 79.33,  # "a total capacty of 79.33 GiB" (Qwen1.5#67)
    "H100-SXM": 79.19, "H100-PCIE": 79.19, "H800-SXM": 79.19, "H800-PCIE": 79.19,  # 79.22 in vllm PR 10511
    "H20": 95.00,
    "H200-SXM": 139.81,
    "B200": 178.36,
    # torch_npu: "NPU out of memory. Tried to allocate 1.00 GiB (NPU 0; 61.27 GiB total capacity; ...)" on a
    # 64 GB Ascend module
    "ASCEND-910B2": 61.27,
}
# nvidia-smi's memory.total in MiB (what SGLang reads to pick its defaults), where it differs from CUDA's.
NVSMI_TOTAL_MIB: dict[str, float] = {"T4": 15360, "A10": 23028, "A10G": 23028, "L4": 23034, "L20": 46068,
                                     "L40": 46068, "L40S": 46068, "A40": 46068, "H100-SXM": 81559,
                                     "H800-SXM": 81559, "H20": 97871, "H200-SXM": 143771}
# Memory a process holds on every GPU outside PyTorch's allocator: the CUDA context with its kernels loaded
# (0.47-0.92 GB measured by stas00 on A100 for torch 2.1), more with NCCL communicators under TP.
CUDA_CONTEXT_GIB = 0.5
NCCL_GIB = 0.25


def runtime(gpu: GpuSpec) -> str:
    """What the engines run on: CUDA (NVIDIA), CANN through torch_npu (Huawei Ascend: vllm-ascend, MindIE) or
    ROCm (AMD), which name their out-of-memory errors after it."""
    return {"huawei": "npu", "amd": "rocm"}.get(gpu.vendor, "cuda")


def oom_error(gpu: GpuSpec) -> str:
    """The allocator's own out-of-memory error on this accelerator (torch, torch_npu, torch on ROCm)."""
    return {"npu": "RuntimeError: NPU out of memory", "rocm": "torch.OutOfMemoryError: HIP out of memory"}.get(
        runtime(gpu), "torch.OutOfMemoryError: CUDA out of memory")


def graph_name(gpu: GpuSpec) -> str:
    """vLLM's captured graphs: CUDA graphs, ACL graphs in vllm-ascend, HIP graphs on ROCm."""
    return {"npu": "ACL-graph", "rocm": "HIP-graph"}.get(runtime(gpu), "CUDA-graph")


def cuda_total_gib(gpu: GpuSpec) -> float:
    return CUDA_TOTAL_GIB.get(gpu.id, gpu.memory_gib * 0.99 - 0.35)


def nvsmi_total_mib(gpu: GpuSpec) -> float:
    return NVSMI_TOTAL_MIB.get(gpu.id, gpu.memory_gib * 1024)


def context_gib(tp: int) -> float:
    """Non-PyTorch memory per GPU before the engine sizes anything: the CUDA context, NCCL under TP."""
    return CUDA_CONTEXT_GIB + (NCCL_GIB if tp > 1 else 0.0)


# NCCL's connection buffers for one rank of a TP / PP group (NCCL_BUFFSIZE 4 MiB per protocol, per channel, per
# peer, more channels on faster links, NVLink SHARP's multicast buffers on Hopper NVSwitch nodes). NCCL >= 2.22
# connects at the first collective (NCCL_RUNTIME_CONNECT), so vLLM V1's profile run meets them and they come out
# of the KV pool. Magnitudes: "expect ~1-2GB" for torch.distributed on NVLink nodes (stas00, sizing.md B8) for
# NVLink SHARP nodes; a few channels over PCIe (the 0.25 GiB the engines print); estimates between.
NCCL_RANK_GIB = {"nvls": 1.5, "nvlink": 0.5, "pcie": 0.25}


def nccl_rank_gib(gpu: GpuSpec, gpus: int) -> float:
    """NCCL buffers one rank holds in a group of `gpus` (0 alone)."""
    if gpus <= 1:
        return 0.0
    if gpu.nvlink_gb_s >= 900:  # Hopper / Blackwell NVSwitch nodes run NVLink SHARP (NVLS)
        return NCCL_RANK_GIB["nvls"]
    return NCCL_RANK_GIB["nvlink" if gpu.nvlink_gb_s > 0 else "pcie"]
