"""launch.sh and monitor.sh from prompts/documents/, filled for one candidate.

One GPU: `llamafactory-cli train train.yaml`. Several GPUs: FORCE_TORCHRUN=1 (LLaMA-Factory then starts
torchrun). Several nodes: also NNODES / NODE_RANK / MASTER_ADDR / MASTER_PORT, as LLaMA-Factory's
multi-node examples set them, plus NCCL settings (RDMA HCA and interface, or TCP when the instance has no RDMA).
"""

from __future__ import annotations

from service.catalog.schema import GpuSpec
from service.documents.llamafactory import TrainSettings
from service.documents.plan_view import CandidateView
from service.documents.templates import render_template

DEFAULT_MASTER_PORT = 29500
TRAIN = 'llamafactory-cli train train.yaml 2>&1 | tee -a "$LOG_DIR/{log}"'


def _single(total_gpus: int) -> str:
    lines = []
    if total_gpus > 1:
        lines += ["export FORCE_TORCHRUN=1  # one process per GPU through torchrun"]
    lines += ['echo "launch.sh: starting llamafactory-cli train train.yaml (log: $LOG_DIR/train.log)"',
              TRAIN.format(log="train.log")]
    return "\n".join(lines)


def _nccl(rdma: bool) -> list[str]:
    if rdma:
        return [
            "# NCCL over RDMA: list HCAs with `ibv_devices`, the NIC with `ip -br addr`; test with nccl-tests first.",
            'export NCCL_IB_DISABLE="${NCCL_IB_DISABLE:-0}"',
            'export NCCL_IB_HCA="${NCCL_IB_HCA:-mlx5}"  # prefix match: every mlx5_* device',
            'export NCCL_SOCKET_IFNAME="${NCCL_SOCKET_IFNAME:-eth0}"  # bootstrap / control traffic',
            "# export NCCL_IB_GID_INDEX=3  # RoCE v2 fabrics often need the GID index shown by `show_gids`",
            'export NCCL_DEBUG="${NCCL_DEBUG:-INFO}"',
        ]
    return [
        "# This instance type has no RDMA: NCCL falls back to TCP sockets between nodes (slow; see README.md).",
        'export NCCL_IB_DISABLE="${NCCL_IB_DISABLE:-1}"',
        'export NCCL_SOCKET_IFNAME="${NCCL_SOCKET_IFNAME:-eth0}"  # the private-network NIC (`ip -br addr`)',
        'export NCCL_DEBUG="${NCCL_DEBUG:-INFO}"',
    ]


def _multinode(nodes: int, rdma: bool) -> str:
    lines = [
        f"# --- multi-node: run this script on each of the {nodes} nodes, with the same files and data ---",
        "export FORCE_TORCHRUN=1",
        f'export NNODES="${{NNODES:-{nodes}}}"',
        ': "${NODE_RANK:?set NODE_RANK: 0 on the master node, 1 .. NNODES-1 on the others}"',
        ': "${MASTER_ADDR:?set MASTER_ADDR to the private IP of the master node, the same on every node}"',
        "export NODE_RANK MASTER_ADDR",
        f'export MASTER_PORT="${{MASTER_PORT:-{DEFAULT_MASTER_PORT}}}"',
        '[ "$NODE_RANK" -lt "$NNODES" ] || die "NODE_RANK=$NODE_RANK must be below NNODES=$NNODES."',
        *_nccl(rdma),
        'echo "launch.sh: node $NODE_RANK of $NNODES, master $MASTER_ADDR:$MASTER_PORT"',
        TRAIN.format(log="train-node${NODE_RANK}.log"),
    ]
    return "\n".join(lines)


def launch_block(c: CandidateView, t: TrainSettings) -> str:
    return _multinode(c.nodes, c.rdma) if c.nodes > 1 else _single(t.total_gpus)


def summary_comment(c: CandidateView) -> str:
    return (f"{c.strategy.label} on {c.cloud} {c.instance_type}: {c.gpu_count:g} x {c.gpu_name} per node, "
            f"{c.nodes} node(s)")


def launch_sh(c: CandidateView, t: TrainSettings, gpu: GpuSpec | None) -> str:
    max_major = gpu.max_cuda.split(".")[0] if gpu is not None and gpu.max_cuda else ""
    values = {
        "summary": summary_comment(c),
        "usage_suffix": "   (on every node: NODE_RANK=<0..N-1> MASTER_ADDR=<master private IP> bash launch.sh)"
        if c.nodes > 1 else "",
        "min_cuda": (gpu.min_cuda if gpu is not None else None) or "11.0",
        "max_cuda_major": max_major,
        "gpu_id": c.gpu,
        "compute_capability": (gpu.compute_capability if gpu is not None else None) or "unknown",
        "gpus_per_node": str(c.strategy.gpus_per_node),
        "dataset_file": t.dataset_file,
        "example_file": t.example_file,
        "launch_block": launch_block(c, t),
    }
    return render_template("launch.sh", values)


def monitor_sh(c: CandidateView, t: TrainSettings) -> str:
    return render_template("monitor.sh", {"summary": summary_comment(c), "output_dir": t.output_dir})
