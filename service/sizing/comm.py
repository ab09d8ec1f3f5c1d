"""Communication in training: what link a ring crosses, how fast, how much of it hides behind compute, and what
MoE layers add (expert-parallel all-to-all, the per-expert loop).

Links (`Interconnect`):
- `nvlink`: NVLink / NVSwitch inside a node; NCCL reaches ~80 % of half the bidirectional rate (nccl-tests).
- `pcie`: PCIe peer-to-peer (data-centre cards): the x16 link one way through the switch or root complex.
- `pcie_no_p2p`: GeForce cards without an NVLink bridge (RTX 3090 / 4090 / 5090): NVIDIA leaves PCIe P2P off, so
  NCCL falls back to its SHM transport, "used between devices when peer-to-peer cannot happen, therefore host
  memory is used" (NCCL environment variables, NCCL_SHM_DISABLE). cudaMemcpy peer tests with P2P disabled measure
  7.8-8.2 GB/s one way between RTX 4090s at 13-17 us latency (NVIDIA/nccl-tests#117, p2pBandwidthLatencyTest);
  NCCL's own ring through host memory reaches less (its SHM all-reduce read 6.1 GB/s bus bandwidth in
  NVIDIA/nccl#1817); "on PCI systems, the performance you get is usually determined by the bandwidth your CPU and
  memory can deliver" (NVIDIA/nccl#1639, a maintainer).
- `rdma` (InfiniBand / RoCE between nodes) and `tcp` (a plain VPC network: NCCL's socket transport, CPU proxy
  threads copying through host memory).

Overlap: a collective hides behind compute only as far as it does not compete with it. NVLink, P2P PCIe and RDMA
move data by DMA on links compute does not use (0.8: COMM_OVERLAP, estimate). Through host memory the same PCIe
link carries every gather and reduce both ways and the GPU's own copy kernels stage it (0.3, estimate); sockets
need the CPU for every byte (0.5, estimate).
"""

from __future__ import annotations

from service.catalog.schema import GpuSpec, ModelSpec
from service.sizing.types import Interconnect, TrainSetup

NCCL_EFFICIENCY = 0.8  # bus bandwidth NCCL reaches of the link rate (nccl-tests on NVLink / InfiniBand, estimate)
PCIE_GB_S = {3: 12.0, 4: 24.0, 5: 48.0}  # usable one-way x16 bandwidth between GPUs through the host (estimate)
NO_P2P_BUS_GB_S = {3: 4.0, 4: 6.0, 5: 10.0}  # NCCL SHM bus bandwidth (nccl#1817: 6.1 GB/s on PCIe 4; scaled)
RDMA_GBPS_PER_GPU = 200.0  # HCC / RDMA clusters: one 200 Gb/s port per GPU (Tencent HCC 1.6T per 8 GPUs)
# NVLink-4 (Hopper) systems pair each GPU with a 400 Gb/s NDR port (DGX H100: 8 x 400 Gb/s; Tencent HCC H800 3.2T per
# 8 GPUs); NVLink-3 systems with 200 Gb/s HDR (DGX A100: 8 x 200 Gb/s)
RDMA_GBPS_PER_GPU_NVLINK4 = 400.0
TCP_GBPS_DEFAULT = 25.0  # VPC network of a GPU instance when the catalog lists none (estimate)
COMM_OVERLAP = 0.8  # share of the shorter of compute / communication hidden behind the other (prefetch; estimate)
LINK_OVERLAP: dict[Interconnect, float] = {"nvlink": COMM_OVERLAP, "pcie": COMM_OVERLAP, "rdma": COMM_OVERLAP,
                                           "pcie_no_p2p": 0.3, "tcp": 0.5}
# One step of a ring: NVLink ~2 us, P2P PCIe ~5 us, host-staged 14 us (nccl-tests#117), IB ~8 us, sockets ~30 us
# (estimates but the host-staged one). GATHER_LATENCY_S in throughput.py was fitted on NVLink nodes; a slower
# link adds its extra step latency for every step of the ring.
HOP_LATENCY_S: dict[Interconnect, float] = {"nvlink": 2e-6, "pcie": 5e-6, "pcie_no_p2p": 14e-6, "rdma": 8e-6,
                                            "tcp": 30e-6}
# NCCL's communicator buffers (outside PyTorch's allocator): NCCL_BUFFSIZE, 4 MiB by default, per channel, per peer,
# each way, and more channels the faster the link (NCCL_MIN/MAX_NCHANNELS). torch.distributed on NVLink nodes:
# "expect ~1-2GB" (stas00, sizing.md B8); two PCIe cards run a couple of channels: the serving engine's 0.25 GiB
# (service/sizing/serving/device.py). Unknown link: the NVLink figure.
NCCL_GIB: dict[Interconnect, float] = {"nvlink": 1.5, "rdma": 1.5, "pcie": 0.25, "pcie_no_p2p": 0.25, "tcp": 0.5}
NCCL_GIB_UNKNOWN = 1.5
# transformers' eager MoE (every release before 5, and 5's experts_implementation="eager"): a Python loop over the
# experts that received tokens, each a torch.where on the routing mask (a host sync: the shapes depend on the
# data), an index gather, three GEMMs, the activation, the weighting and an index_add (modeling_qwen3_moe.py,
# Qwen3MoeExperts.forward). About 12 launches and one sync per expert per forward, twice that in the backward:
# 0.15 ms + 0.3 ms per expert per layer on the host (estimate), serialised with the GPU by the sync. transformers
# 5 defaults to grouped_mm (one grouped GEMM per projection: modeling_utils get_correct_experts_implementation).
EXPERT_LOOP_FWD_S = 0.15e-3
EXPERT_LOOP_BWD_S = 0.3e-3


def interconnect(gpu: GpuSpec, nodes: int = 1, rdma: bool = True) -> Interconnect:
    """The slowest link a ring over the job's GPUs crosses."""
    if nodes > 1:
        return "rdma" if rdma else "tcp"
    if gpu.nvlink_gb_s > 0:
        return "nvlink"
    if gpu.vendor == "nvidia" and gpu.form_factor == "consumer":
        return "pcie_no_p2p"
    return "pcie"


def bus_gb_s(gpu: GpuSpec, link: Interconnect, gpus_per_node: int = 1, network_gbps: float | None = None) -> float:
    """Bus bandwidth per GPU over `link` (GB/s)."""
    if link == "rdma":  # the catalog lists an RDMA instance's fabric bandwidth (e.g. 3200 Gb/s per 8 GPUs)
        per_gpu = (network_gbps or 0) / max(1, gpus_per_node)
        floor = RDMA_GBPS_PER_GPU_NVLINK4 if gpu.nvlink_gb_s >= 900 else RDMA_GBPS_PER_GPU
        return max(per_gpu, floor) / 8 * NCCL_EFFICIENCY
    if link == "tcp":
        return (network_gbps or TCP_GBPS_DEFAULT) / 8 / max(1, gpus_per_node) * NCCL_EFFICIENCY
    if link == "nvlink":
        return gpu.nvlink_gb_s / 2 * NCCL_EFFICIENCY
    if link == "pcie_no_p2p":
        return NO_P2P_BUS_GB_S.get(gpu.pcie_gen, 6.0)
    return PCIE_GB_S.get(gpu.pcie_gen, 24.0) * NCCL_EFFICIENCY


def extra_ring_latency_s(link: Interconnect, ranks: int) -> float:
    """What a ring over `ranks` GPUs on `link` adds to one small collective beyond an NVLink node's."""
    return max(0, ranks - 1) * max(0.0, HOP_LATENCY_S[link] - HOP_LATENCY_S["nvlink"])


def nccl_gib(setup: TrainSetup) -> float:
    if setup.n_gpus <= 1:
        return 0.0
    return NCCL_GIB_UNKNOWN if setup.interconnect is None else NCCL_GIB[setup.interconnect]


def moe_layers(m: ModelSpec) -> int:
    return 0 if m.moe is None else max(0, (m.num_layers or 0) - m.moe.first_k_dense)


def expert_loop_s(m: ModelSpec, setup: TrainSetup) -> float:
    """Host time of transformers' per-expert loop per micro-batch (0 for grouped experts)."""
    if m.moe is None or not setup.expert_loop:
        return 0.0
    tokens = setup.seq_len * setup.micro_batch
    hit = min(m.moe.num_experts, tokens * m.moe.top_k)  # experts that receive a token
    forwards = 2 if setup.recomputes_layers else 1
    return moe_layers(m) * hit * (forwards * EXPERT_LOOP_FWD_S + EXPERT_LOOP_BWD_S)


def all_to_all_bytes(m: ModelSpec, setup: TrainSetup) -> float:
    """Bytes one GPU sends per micro-batch in expert-parallel dispatch and combine (bf16 hidden states of every
    routed copy, (ep - 1) / ep of them leave the GPU): forward, the recomputed forward, and the backward's two."""
    ep = setup.expert_parallel
    if m.moe is None or ep <= 1:
        return 0.0
    tokens = setup.seq_len * setup.micro_batch
    per_pass = 2 * tokens * m.moe.top_k * (m.hidden_size or 0) * 2.0 * (ep - 1) / ep  # dispatch + combine
    passes = (2 if setup.recomputes_layers else 1) + 1  # the forward (and its recompute), the backward
    return moe_layers(m) * per_pass * passes
