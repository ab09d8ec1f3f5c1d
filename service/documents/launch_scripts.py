"""launch.sh and monitor.sh from prompts/documents/, filled for one candidate.

One GPU: `llamafactory-cli train train.yaml`. Several GPUs: FORCE_TORCHRUN=1 (LLaMA-Factory then starts
torchrun). Several nodes: also NNODES / NODE_RANK / MASTER_ADDR / MASTER_PORT, as LLaMA-Factory's
multi-node examples set them, plus NCCL settings (RDMA HCA and interface, or TCP when the instance has no RDMA).
The model comes from the hub chosen at the top of launch.sh (ModelScope, a Hugging Face mirror, huggingface.co or a
local folder; service/documents/mainland.py) into MODEL_DIR, and training reads it from there
(`model_name_or_path=$MODEL_DIR`, LLaMA-Factory's command-line override of train.yaml).

Every value goes into the scripts as a shell word (safe.sh: single-quoted when needed) or a one-line comment
(safe.comment); a value is never spliced into double quotes or `${VAR:-...}`, where the shell would expand it.
"""

from __future__ import annotations

from service.catalog.schema import GpuSpec
from service.documents import safe
from service.documents.llamafactory import TrainSettings
from service.documents.mainland import MainlandRoute
from service.documents.plan_view import CandidateView
from service.documents.templates import render_template

DEFAULT_MASTER_PORT = 29500
TRAIN = 'llamafactory-cli train train.yaml model_name_or_path="$MODEL_DIR" 2>&1 | tee -a "$LOG_DIR/{log}"'
MODELS_DIR = "models"


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


def _preflight(nodes: int) -> str:
    """The multi-node settings, checked before anything is downloaded."""
    if nodes <= 1:
        return ""
    return "\n".join([
        f"# --- multi-node: run this script on each of the {nodes} nodes, with the same files and data ---",
        f'export NNODES="${{NNODES:-{int(nodes)}}}"',
        ': "${NODE_RANK:?set NODE_RANK: 0 on the master node, 1 .. NNODES-1 on the others}"',
        ': "${MASTER_ADDR:?set MASTER_ADDR to the private IP of the master node, the same on every node}"',
        "export NODE_RANK MASTER_ADDR",
        f'export MASTER_PORT="${{MASTER_PORT:-{DEFAULT_MASTER_PORT}}}"',
        '[ "$NODE_RANK" -lt "$NNODES" ] || die "NODE_RANK=$NODE_RANK must be below NNODES=$NNODES."',
    ])


def _multinode(rdma: bool) -> str:
    lines = [
        "export FORCE_TORCHRUN=1",
        *_nccl(rdma),
        'echo "launch.sh: node $NODE_RANK of $NNODES, master $MASTER_ADDR:$MASTER_PORT"',
        TRAIN.format(log="train-node${NODE_RANK}.log"),
    ]
    return "\n".join(lines)


def launch_block(c: CandidateView, t: TrainSettings) -> str:
    return _multinode(c.rdma) if c.nodes > 1 else _single(t.total_gpus)


def summary_comment(c: CandidateView) -> str:
    return safe.comment(f"{c.strategy.label} on {c.cloud} {c.instance_type}: {c.gpu_count:g} x {c.gpu_name} per "
                        f"node, {c.nodes} node(s)")


def default_line(name: str, value: str, note: str = "", *, empty_ok: bool = False) -> str:
    """`[ -n "${NAME:-}" ] || NAME=<value as one quoted word>`: the environment's value wins, else ours."""
    test = f'"${{{name}+set}}"' if empty_ok else f'"${{{name}:-}}"'
    line = f"[ -n {test} ] || {name}={safe.sh(value)}"
    return f"{line}  # {safe.comment(note)}" if note else line


def model_dir(t: TrainSettings) -> str:
    """Where the weights are downloaded: models/<the repo's name, lower case> (a plain relative path)."""
    return f"{MODELS_DIR}/{t.model_path.rsplit('/', 1)[-1].lower()}" if t.model_known else ""


def hub_lines(c: CandidateView, t: TrainSettings, route: MainlandRoute) -> dict[str, str]:
    repo = t.model_path if t.model_known else ""
    ms_row = route.models.get(repo)
    hub = "modelscope" if ms_row is not None else ("hf-mirror" if repo else "local")
    ms_note = (f"ModelScope id (source: {ms_row.source})" if ms_row is not None else
               "not on ModelScope as far as knowledge/modelscope.yaml knows: HUB=hf-mirror")
    model = [
        f"MODEL_HF={safe.sh(repo)}  # " + safe.comment("Hugging Face repo id" if repo else
                                                        "no Hugging Face repo is known for this model"),
        f"MODEL_MODELSCOPE={safe.sh(ms_row.modelscope if ms_row else '')}  # {safe.comment(ms_note)}",
        default_line("MODEL_DIR", model_dir(t), "where the weights are (downloaded); train.yaml's "
                     "model_name_or_path is set to it; no spaces" if repo else
                     "REQUIRED for this model: the folder with its weights (config.json, *.safetensors)"),
    ]
    pypi = route.pypi(c.cloud)
    pypi_note = (f"{pypi.note} Source: {pypi.source}" if pypi is not None else
                 f"no PyPI mirror is known for {c.cloud}: pypi.org")
    mirror = route.mirrors.hf_mirror
    return {
        "hub_line": default_line("HUB", hub, "modelscope | hf-mirror | hf | local"),
        "model_lines": "\n".join(model),
        "hf_mirror_note": safe.comment(f"{mirror.note} Source: {mirror.source}"),
        "hf_mirror_line": default_line("HF_MIRROR", mirror.url),
        "pypi_note": safe.comment(pypi_note),
        "pip_index_line": default_line("PIP_INDEX", pypi.url if pypi is not None else "", empty_ok=True),
        "lf_git_url": safe.sh(route.mirrors.llamafactory.git),
    }


def extra_packages(c: CandidateView, t: TrainSettings) -> list[str]:
    """Packages this plan needs beside LLaMA-Factory: DeepSpeed for ZeRO, bitsandbytes for QLoRA, Liger's kernels."""
    out = ["deepspeed"] if t.deepspeed_file else []
    out += ["bitsandbytes"] if c.strategy.method == "qlora" else []
    out += ["liger-kernel"] if c.strategy.loss == "chunked" else []
    return out


def launch_sh(c: CandidateView, t: TrainSettings, gpu: GpuSpec | None, route: MainlandRoute) -> str:
    max_major = gpu.max_cuda.split(".")[0] if gpu is not None and gpu.max_cuda else ""
    values = {
        "summary": summary_comment(c),
        "usage_suffix": "   (on every node: NODE_RANK=<0..N-1> MASTER_ADDR=<master private IP> bash launch.sh)"
        if c.nodes > 1 else "",
        "min_cuda": safe.sh((gpu.min_cuda if gpu is not None else None) or "11.0"),
        "max_cuda_major": safe.sh(max_major),
        "gpu_id": safe.sh(c.gpu),
        "compute_capability": safe.comment((gpu.compute_capability if gpu is not None else None) or "unknown"),
        "gpus_per_node": safe.sh(int(c.strategy.gpus_per_node)),
        "dataset_file": safe.sh(t.dataset_file),
        "example_file": safe.sh(t.example_file),
        "extra_packages": " ".join(safe.sh(p) for p in extra_packages(c, t)),
        "preflight": _preflight(c.nodes),
        "launch_block": launch_block(c, t),
        **hub_lines(c, t, route),
    }
    return render_template("launch.sh", values)


def monitor_sh(c: CandidateView, t: TrainSettings) -> str:
    return render_template("monitor.sh", {"summary": summary_comment(c), "output_dir": safe.sh(t.output_dir),
                                          "output_dir_comment": safe.comment(t.output_dir)})
