#!/usr/bin/env bash
# Monitoring for: {{ summary }}
# Usage: bash monitor.sh [snapshot|watch|dmon|dcgm|log]   (default: snapshot)
#   snapshot  one nvidia-smi table of utilization, memory, temperature, power
#   watch     the same every $INTERVAL seconds
#   dmon      nvidia-smi dmon: power, utilization, clocks, violations, memory, ECC, PCIe
#   dcgm      DCGM profiling (SM / tensor-core / DRAM activity) when dcgmi is installed
#   log       follow the trainer log ({{ output_dir_comment }}/trainer_log.jsonl) and logs/*.log
# INTERVAL=5 bash monitor.sh watch   sets the sampling interval in seconds.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

OUTPUT_DIR={{ output_dir }}
LOG_DIR=logs
INTERVAL="${INTERVAL:-5}"
QUERY="timestamp,index,name,utilization.gpu,utilization.memory,memory.used,memory.total,temperature.gpu,power.draw,clocks.sm"

need_smi() { command -v nvidia-smi >/dev/null 2>&1 || { echo "monitor.sh: nvidia-smi not found" >&2; exit 1; }; }
snapshot() { need_smi; nvidia-smi --query-gpu="$QUERY" --format=csv; }
watch_gpus() { need_smi; nvidia-smi --query-gpu="$QUERY" --format=csv -l "$INTERVAL"; }
dmon() { need_smi; nvidia-smi dmon -s pucvmet -d "$INTERVAL"; }
dcgm() {
  if command -v dcgmi >/dev/null 2>&1; then
    # 1002 SM active, 1004 tensor-core active, 1005 DRAM active, 1009/1010 PCIe TX/RX bytes (dcgmi dmon --list)
    dcgmi dmon -e 1002,1004,1005,1009,1010 -d "$((INTERVAL * 1000))"
  else
    echo "monitor.sh: dcgmi (NVIDIA DCGM) not installed; showing nvidia-smi dmon instead." >&2
    dmon
  fi
}
trainer_log() {
  local files=()
  if [ -f "$OUTPUT_DIR/trainer_log.jsonl" ]; then files+=("$OUTPUT_DIR/trainer_log.jsonl"); fi
  for f in "$LOG_DIR"/*.log; do
    if [ -f "$f" ]; then files+=("$f"); fi
  done
  if [ "${#files[@]}" -eq 0 ]; then
    echo "monitor.sh: no logs yet in $OUTPUT_DIR or $LOG_DIR; start bash launch.sh first." >&2
    exit 1
  fi
  tail -n 20 -F "${files[@]}"
}

case "${1:-snapshot}" in
  snapshot) snapshot ;;
  watch) watch_gpus ;;
  dmon) dmon ;;
  dcgm) dcgm ;;
  log) trainer_log ;;
  *) echo "usage: bash monitor.sh [snapshot|watch|dmon|dcgm|log]" >&2; exit 2 ;;
esac
