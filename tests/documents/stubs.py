"""Stand-ins for every tool a generated script may call (GPU tools, installers, downloaders, trainers, servers), so a
bundle's scripts run in a temp dir with nothing real behind them. Each stub appends `name args...` (one line, the
arguments separated by tabs) to $STUB_LOG, and PATH holds the stubs and /usr/bin:/bin only: a tool the stubs miss
is the system's, never a download from the network (there is no pip, git, hf or modelscope in /usr/bin that is
not shadowed here)."""

from __future__ import annotations

import subprocess
from pathlib import Path

NVIDIA_SMI = """case "$*" in
  *--query-gpu=name*) for _ in $(seq "${STUB_GPUS:-1}"); do echo "Stub GPU"; done ;;
  *--query-gpu*) echo "timestamp, index, name"; echo "2026/10/01, 0, Stub GPU" ;;
  *) echo "| NVIDIA-SMI 550.54   Driver Version: 550.54   CUDA Version: ${STUB_DRIVER_CUDA:-12.4} |" ;;
esac
"""
PYTHON = """case "$*" in
  *torch.version.cuda*) echo "${STUB_TORCH_CUDA:-12.1}" ;;
esac
exit 0
"""
LLAMAFACTORY = """echo "RAN $* FORCE_TORCHRUN=${FORCE_TORCHRUN:-} NNODES=${NNODES:-} NODE_RANK=${NODE_RANK:-} \
MASTER_PORT=${MASTER_PORT:-} NCCL_IB_HCA=${NCCL_IB_HCA:-} NCCL_IB_DISABLE=${NCCL_IB_DISABLE:-}"
"""
# A download leaves config.json where it was asked to (the next run finds the weights there)
DOWNLOAD = """echo "$(basename "$0") HF_ENDPOINT=${HF_ENDPOINT:-}" >> "$STUB_LOG.env"
dir=""; prev=""
for a in "$@"; do case "$prev" in --local_dir|--local-dir) dir="$a" ;; esac; prev="$a"; done
if [ -n "$dir" ]; then mkdir -p "$dir" && echo '{}' > "$dir/config.json"; fi
"""
# pip install llamafactory makes llamafactory-cli appear (in the stub dir)
PIP = """case " $* " in *" llamafactory "*|*" -e "*) cp "$(dirname "$0")/.llamafactory-cli" "$(dirname "$0")/llamafactory-cli" ;; esac
"""
BODIES = {"nvidia-smi": NVIDIA_SMI, "python": PYTHON, "llamafactory-cli": LLAMAFACTORY, "modelscope": DOWNLOAD,
          "huggingface-cli": DOWNLOAD, "hf": DOWNLOAD, "pip": PIP, "git": "", "dcgmi": "", "vllm": "",
          "sglang": "", "curl": "", "wget": "", "torchrun": ""}
DEFAULT = ("nvidia-smi", "python", "llamafactory-cli", "modelscope", "huggingface-cli", "pip", "git", "dcgmi",
           "vllm", "curl", "wget", "torchrun")


def stub_bin(root: Path, tools: tuple[str, ...] = DEFAULT) -> Path:
    """A folder of stubs for `tools`; `.llamafactory-cli` is kept aside for the pip stub to 'install'."""
    bin_dir = root / "stub-bin"
    bin_dir.mkdir(exist_ok=True)
    for name in (*tools, ".llamafactory-cli"):
        body = BODIES[name.lstrip(".")]
        log = 'printf \'%s\' "$(basename "$0")" >> "$STUB_LOG"; for a in "$@"; do printf \'\\t%s\' "$a" >> "$STUB_LOG"; done; echo >> "$STUB_LOG"\n'
        path = bin_dir / name
        path.write_text("#!/usr/bin/env bash\n" + log + body)
        path.chmod(0o755)
    return bin_dir


def run(root: Path, script: str, *args: str, tools: tuple[str, ...] = DEFAULT,
        **env: str) -> subprocess.CompletedProcess[str]:
    """`bash script args` in `root` with the stubs first on PATH and the system's /usr/bin:/bin after them."""
    path = f"{stub_bin(root, tools)}:/usr/bin:/bin"
    full = {"PATH": path, "HOME": str(root), "STUB_LOG": str(root / "stub.log"), **env}
    return subprocess.run(["bash", script, *args], cwd=root, env=full, capture_output=True, text=True, timeout=60)


def endpoints(root: Path) -> list[str]:
    """`tool HF_ENDPOINT=value` for each download stub call: the mirror a download went through."""
    log = root / "stub.log.env"
    return log.read_text().splitlines() if log.exists() else []


def calls(root: Path) -> list[list[str]]:
    """Each stub call: [tool, arg, arg, ...], in order."""
    log = root / "stub.log"
    return [line.split("\t") for line in log.read_text().splitlines()] if log.exists() else []


def write(root: Path, files: dict[str, str], with_data: bool = True) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    if with_data:
        (root / "data").mkdir(exist_ok=True)
        (root / "data" / "my_qa.jsonl").write_text('{"instruction": "q", "input": "", "output": "a"}\n')
    return root

