"""The largest held-out misses of the validation matrix, each with its cause as far as the row shows it.

The causes are read from the rows' own conditions and notes (and the engine's terms), never fitted away: a held-out
row stays held out. docs/validation.md lists them (scripts/validation_report.py)."""

from __future__ import annotations

# row id -> the cause of its miss, as far as the row shows it
CAUSES: dict[str, str] = {
    "tt-flags-llama32-3b-baseline-1xa100-mem": "unpacked batches: each batch pads to its longest sample, far below "
    "the 4096 maximum the row states (the same run packed reaches 60 GiB); the engine sizes 4096 tokens",
    "lf-3638-llama3-8b-qlora-qv-unsloth-65k-1xa100": "Unsloth's gradient checkpointing offloads the saved layer "
    "inputs to CPU RAM and its kernels fuse the LoRA matmuls; the engine sizes plain PEFT with the inputs on the "
    "GPU",
    "bnb1569-ministral8b-qlora-prep-4096": "a peak of unstated kind on an unnamed >= 81 GB card: the run fills the "
    "card (the caching allocator keeps what it freed), not an allocated peak",
    "bnb1569-ministral8b-qlora-noprep-4096": "the same card-filling peak of unstated kind",
    "bnb1569-ministral8b-lora-bf16-4096": "the same card-filling peak of unstated kind",
    "qlora193-llama1-7b-2x3090-bs2": "nvidia-smi on two RTX 3090 under DDP: qlora.py's paged 32-bit AdamW lives in "
    "unified memory and the allocator caches the variable-length batches (group_by_length); neither is on the "
    "engine's allocated basis",
    "qlora193-llama1-13b-2x3090-bs2": "as the 7B row of the same thread",
    "tt-flags-llama32-3b-adamw8bit-1xa100-mem": "bitsandbytes' 8-bit AdamW keeps fp32 block statistics and a "
    "temporary upcast per parameter group at the step, beyond the 2 B of states",
    "tt-flags-llama32-3b-qlora-1xa100-mem": "torchtune's NF4 tensors keep per-block scales in bf16 and a larger "
    "dequantisation buffer than bitsandbytes' double quantisation",
    "tt-flags-llama32-3b-compile-1xa100-mem": "torch.compile fuses the MLP and norm activations the eager trace "
    "keeps: less activation memory than the engine's eager count",
    "tt-flags-llama32-3b-chunkedce-1xa100-mem": "as the compiled row (compile stays on)",
    "llama3-405b-16384xh100-tp8-pp16-mfu": "4D parallelism at 16k GPUs (TP8 x PP16 x CP x FSDP): the engine prices "
    "the plain 1F1B pipeline bubble, (pp - 1) / (m + pp - 1) = 48 % at 15 micro-batches per replica; the paper's "
    "schedule, which the row does not state, hides most of it (without the bubble the node model reads 0.40)",
    "llama3-405b-16384xh100-cp16-131k-mfu": "as the 16k-GPU row, with context parallelism at 131k tokens",
    "llama3-405b-8192xh100-tp8-pp16-mfu": "as the 16k-GPU row",
    "fsdp-paper-gpt175b-128xa100-tflops": "minGPT's 175B at 512 tokens: short sequences of a very wide model, where "
    "the engine's GEMM efficiency curve under-reads the paper's TFLOPS",
    "axolotl-ex-llama4-scout-qlora-fsdp2-4xh100-thr": "Llama 4 Scout QLoRA with linearized experts: every expert's "
    "NF4 weights are all-gathered and dequantised each pass while a token visits one; 280 tokens/s/GPU is 2 % MFU, "
    "and the engine's expert loop and dequantisation terms, fitted on dense and looped-MoE rows, read 4x that",
    "axolotl-ex-llama4-scout-qlora-1xh100-thr": "as the 4-GPU row, on one H100 with activations offloaded to CPU "
    "(gradient_checkpointing: offload), whose copies the engine does not time",
    "axolotl-ex-llama4-scout-qlora-fsdp2-4xh100-mem": "FSDP2 QLoRA over linearized experts: the all-gathered NF4 "
    "layer and its dequantised bf16 copy per expert are not in the engine's FSDP buffers (sized for one dense layer)",
    "tt2405-llama2-7b-lora-fsdp-2x4090-mem": "torchtune's 2024-05 table: the maintainers could not reproduce its "
    "figures at the stated 2048 tokens (PR #961 padded every sample to 2048 to compare); alpaca samples are far "
    "shorter, and the config turns activation checkpointing off",
    "vllm-12330-llama3-8b-a100-40g": "the printed 9.37 GiB activation peak at 8k tokens: a max_num_batched_tokens "
    "the log does not state",
    "vllm-21348-qwen3-235b-fp8-h100x4-vllm": "6 GiB less pool than the printed terms add up to, which the "
    "maintainers put down to the profiling order of vLLM 0.9",
    "vllm-blog-fp8kv-llama31-8b-kvfp8-h100-c8": "FP8 KV at 20k-token contexts: the decode attention reads half the "
    "bytes but vLLM 0.19's FP8 attention kernel does not reach the bandwidth the engine gives it",
}


def cause(row_id: str) -> str:
    return CAUSES.get(row_id, "not identified from the row")
