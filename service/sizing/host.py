"""Host-side rules (CPU, RAM, storage, network) and GPU feature warnings, bilingual.

The popular guide's rules, corrected where wrong (shared/reference/gpus.md §3-5, clouds.md):
RAM >= 2x total GPU memory, >= 8 vCPU per GPU, local SSD under 100 GB, object storage + streaming beyond
1 TB, RDMA for multi-node, NUMA binding, BF16 only from Ampere (V100/T4/P40: FP16), FP8 only on Ada/Hopper/
Blackwell, CUDA 11.8 is the Hopper minimum (not 12.0), A800/H800 NVLink cut to 400 GB/s.
"""

from __future__ import annotations

from dataclasses import dataclass

from service.catalog.schema import GpuSpec

RAM_PER_GPU_MEMORY = 2.0
VCPU_PER_GPU = 8


@dataclass(frozen=True)
class Note:
    code: str
    en: str
    zh: str
    severity: str = "warning"  # warning | info

    def as_dict(self) -> dict[str, str]:
        return {"code": self.code, "severity": self.severity, "message": self.en, "message_zh": self.zh}


def host_notes(vcpus: int | None, ram_gib: float | None, gpu_count: float, gpu_memory_gib: float) -> list[Note]:
    """Host-resource warnings; a vCPU or RAM figure that is not published (None) says so instead."""
    notes: list[Note] = []
    total_gpu = gpu_count * gpu_memory_gib
    need_ram = RAM_PER_GPU_MEMORY * total_gpu
    if vcpus is None or ram_gib is None:
        notes.append(Note(
            "host_unpublished",
            "The instance's vCPU and host RAM are not published: confirm them with the cloud before relying on CPU "
            "offload or data-loader workers.",
            "该实例的 vCPU 与主机内存未公开：依赖 CPU offload 或数据加载进程数之前，请先向云厂商确认。"))
    if ram_gib is not None and ram_gib < need_ram:
        notes.append(Note(
            "host_ram_low",
            f"Host RAM {ram_gib:.0f} GiB is below 2x GPU memory ({need_ram:.0f} GiB): keep num_workers and "
            "pin_memory modest, and avoid loading the whole dataset in RAM.",
            f"主机内存 {ram_gib:.0f} GiB 低于显存总量的 2 倍（{need_ram:.0f} GiB）：适当减少 DataLoader 的 num_workers，"
            "谨慎使用 pin_memory，不要把整个数据集读入内存。",
        ))
    gpus = max(1.0, gpu_count)
    if vcpus is not None and vcpus < VCPU_PER_GPU * gpus:
        notes.append(Note(
            "vcpu_low",
            f"{vcpus} vCPU for {gpus:g} GPU(s) is under 8 per GPU: data loading may starve the GPUs; "
            "pre-tokenize the dataset.",
            f"{vcpus} 个 vCPU 对 {gpus:g} 张卡，低于每卡 8 核：数据加载可能拖慢 GPU，建议预先完成分词。",
        ))
    return notes


def gpu_notes(gpu: GpuSpec, gpus_per_node: float, nodes: int, rdma: bool) -> list[Note]:
    notes: list[Note] = []
    if not gpu.supports_bf16 and gpu.arch in ("kepler", "pascal"):  # the planner trains these in FP32
        notes.append(Note(
            "no_bf16",
            f"{gpu.name} has no BF16 and no tensor cores: the estimate trains in FP32 (4-byte weights and "
            "gradients) at the FP32 rate.",
            f"{gpu.name} 不支持 BF16，也没有 Tensor Core：估算按 FP32 训练（权重和梯度每参数 4 字节），"
            "按 FP32 算力计时。",
        ))
    elif not gpu.supports_bf16:
        notes.append(Note(
            "no_bf16",
            f"{gpu.name} has no BF16: train in FP16 with loss scaling (fp16: true), which can overflow on "
            "some models.",
            f"{gpu.name} 不支持 BF16：需用 FP16 混合精度（fp16: true）并开启 loss scaling，部分模型可能数值溢出。",
        ))
    if gpu.vendor != "nvidia":
        notes.append(Note(
            "not_cuda",
            f"{gpu.name} is not an NVIDIA GPU: it runs {gpu.software_stack}, not CUDA. The figures size it from its "
            "published memory and peak rate; CUDA-only libraries (bitsandbytes for QLoRA, FlashAttention-2 builds, "
            f"DeepSpeed's CUDA ops) need {gpu.software_stack} ports or substitutes, so check each before the run.",
            f"{gpu.name} 不是 NVIDIA GPU：使用 {gpu.software_stack} 而不是 CUDA。以上按其公开的显存和峰值算力估算；"
            f"只支持 CUDA 的库（QLoRA 用的 bitsandbytes、FlashAttention-2、DeepSpeed 的 CUDA 算子）需要 {gpu.software_stack} "
            "适配版或替代方案，训练前请逐一确认。",
        ))
    if not gpu.supports_flash_attn2 and gpu.vendor == "nvidia":
        notes.append(Note(
            "no_flash_attn2",
            f"{gpu.name} cannot run FlashAttention-2 (needs Ampere or newer); PyTorch SDPA's memory-efficient "
            "kernel still avoids the s^2 attention memory but runs slower.",
            f"{gpu.name} 不支持 FlashAttention-2（需 Ampere 及以上）；PyTorch SDPA 的省显存内核仍可用，但速度较慢。",
            "info",
        ))
    elif not gpu.supports_flash_attn2:
        notes.append(Note(
            "no_flash_attn2",
            f"FlashAttention-2 (a CUDA/ROCm library) does not run on {gpu.name}; use the fused attention of "
            f"{gpu.software_stack} or PyTorch SDPA, which also avoid the s^2 attention memory.",
            f"FlashAttention-2（CUDA/ROCm 库）不能在 {gpu.name} 上运行；请用 {gpu.software_stack} 自带的融合注意力算子或 "
            "PyTorch SDPA，同样不需要 s^2 的注意力显存。",
            "info",
        ))
    if gpu.max_cuda:
        last = gpu.max_cuda.split(".")[0]
        dropped = f"{int(last) + 1}.0" if last.isdigit() else "a later CUDA"
        wheels = " (e.g. cu126)" if last == "12" else ""
        notes.append(Note(
            "cuda_max",
            f"{gpu.name} (compute capability {gpu.compute_capability}) is dropped in CUDA {dropped}: stay on CUDA "
            f"{gpu.max_cuda} and matching PyTorch wheels{wheels}.",
            f"{gpu.name}（算力 {gpu.compute_capability}）在 CUDA {dropped} 中已不再支持：请使用 CUDA {gpu.max_cuda} 及对应的 "
            f"PyTorch 版本{'（如 cu126）' if wheels else ''}。",
            "info",
        ))
    if gpus_per_node > 1 and gpu.nvlink_gb_s == 0:
        notes.append(Note(
            "no_nvlink",
            f"{gpus_per_node:g}x {gpu.name} talk over PCIe (no NVLink): gradient all-reduce and ZeRO-3 gathers "
            "are slow; prefer LoRA/DDP or fewer, larger GPUs.",
            f"{gpus_per_node:g} 张 {gpu.name} 之间没有 NVLink，只能走 PCIe：梯度同步和 ZeRO-3 参数收集较慢，"
            "建议用 LoRA/DDP，或选更少但更大的卡。",
        ))
    elif gpus_per_node > 1 and gpu.vendor == "nvidia" and gpu.nvlink_gb_s < 600:
        notes.append(Note(
            "nvlink_400",
            f"{gpu.name} NVLink is cut to {gpu.nvlink_gb_s:.0f} GB/s (A100/H100: 600/900): multi-GPU "
            "communication is slower; the estimate allows for it.",
            f"{gpu.name} 的 NVLink 被限制为 {gpu.nvlink_gb_s:.0f} GB/s（A100/H100 为 600/900）：多卡通信偏慢，估算已计入。",
            "info",
        ))
    if nodes > 1 and not rdma:
        notes.append(Note(
            "multinode_no_rdma",
            f"{nodes} nodes without RDMA: inter-node traffic goes over TCP and training scales poorly; use an "
            "RDMA (HCC) cluster for multi-node jobs.",
            f"{nodes} 个节点之间没有 RDMA，只能走 TCP，扩展效率很差；多机训练请选支持 RDMA 的 HCC 高性能计算集群。",
        ))
    elif nodes > 1:
        notes.append(Note(
            "multinode_rdma",
            f"{nodes} nodes over RDMA: set NCCL_IB_HCA / NCCL_SOCKET_IFNAME and test all-reduce bandwidth "
            "(nccl-tests) before the run.",
            f"{nodes} 节点通过 RDMA 互联：请配置 NCCL_IB_HCA / NCCL_SOCKET_IFNAME，并先用 nccl-tests 测带宽。",
            "info",
        ))
    return notes


def storage_advice(dataset_gb: float | None) -> Note:
    if dataset_gb is None or dataset_gb < 100:
        return Note(
            "storage_small",
            "Dataset under 100 GB: copy it to the instance's SSD cloud disk (Tencent CBS SSD / JD SSD cloud "
            "disk) before training.",
            "数据集小于 100 GB：训练前拷贝到实例的 SSD 云硬盘（腾讯云 CBS SSD / 京东云 SSD 云盘）。",
            "info",
        )
    if dataset_gb <= 1000:
        return Note(
            "storage_medium",
            f"Dataset {dataset_gb:.0f} GB: use an enhanced SSD cloud disk sized for it plus checkpoints, or "
            "object storage with a local cache.",
            f"数据集 {dataset_gb:.0f} GB：使用容量足够（含检查点）的增强型 SSD 云硬盘，或对象存储加本地缓存。",
            "info",
        )
    return Note(
        "storage_large",
        f"Dataset {dataset_gb:.0f} GB (over 1 TB): keep it in object storage (Tencent COS / JD OSS) and stream "
        "shards with a local cache, or use a parallel file system (Tencent Turbo CFS).",
        f"数据集 {dataset_gb:.0f} GB（超过 1 TB）：放在对象存储（腾讯云 COS / 京东云 OSS），按分片流式读取并做本地缓存，"
        "或使用并行文件系统（腾讯云 Turbo CFS）。",
        "info",
    )


def numa_advice() -> Note:
    return Note(
        "numa",
        "Bind each training process to the CPU socket next to its GPU (numactl / torchrun --numa-binding) "
        "and give the DataLoader 4-8 workers per GPU.",
        "将每个训练进程绑定到与其 GPU 直连的 CPU 插槽（numactl 或 NUMA 绑定），每卡 DataLoader 4-8 个 worker。",
        "info",
    )


@dataclass(frozen=True)
class HostNeeds:
    """What a training job needs beside its GPUs (the popular rules, sourced in shared/reference/gpus.md §3-5):
    CPU cores, RAM, the data disk (dataset, the base weights, the checkpoints kept) and one checkpoint's size."""

    vcpus: int
    ram_gib: float
    disk_gb: float
    checkpoint_gb: float
    checkpoints_kept: int


CHECKPOINTS_KEPT = 3  # save_total_limit-style: the last few checkpoints on disk
# bytes per parameter of one saved checkpoint: the bf16 weights, plus (full training) fp32 master weights and the
# two Adam moments to resume from; LoRA saves the adapters (and their optimizer) only
_FULL_CKPT_BYTES = 2 + 4 + 8
_WEIGHTS_BYTES = 2


def host_needs(params_b: float, trainable_params_b: float, total_gpus: int, gpu_memory_gib: float,
               dataset_gb: float | None) -> HostNeeds:
    """The host a job needs: >= 8 vCPU per GPU, RAM >= 2x the GPUs' memory, a disk for the data, the base model's
    bf16 weights and CHECKPOINTS_KEPT resumable checkpoints (weights + fp32 master + Adam moments of the trained
    parameters)."""
    full = trainable_params_b >= params_b * 0.5
    ckpt = params_b * _FULL_CKPT_BYTES if full else trainable_params_b * _FULL_CKPT_BYTES  # LoRA: the adapters
    base = params_b * _WEIGHTS_BYTES
    disk = (dataset_gb or 0.0) + base + CHECKPOINTS_KEPT * ckpt
    return HostNeeds(vcpus=VCPU_PER_GPU * total_gpus, ram_gib=RAM_PER_GPU_MEMORY * gpu_memory_gib * total_gpus,
                     disk_gb=round(disk, 1), checkpoint_gb=round(ckpt, 1), checkpoints_kept=CHECKPOINTS_KEPT)
