"""Hugging Face repo ids for the catalog's models (ModelSpec.id -> repo), for train.yaml's model_name_or_path.

Ids as LLaMA-Factory lists them (src/llamafactory/extras/constants.py, DownloadSource.DEFAULT) where it does;
the rest are the publishers' repos of the same name. Base models where the catalog id names a base model.
A model missing here gets a REPLACE_WITH_MODEL_PATH placeholder that launch.sh refuses to run with.
"""

from __future__ import annotations

HF_REPOS: dict[str, str] = {
    **{f"Qwen2-{s}": f"Qwen/Qwen2-{s}" for s in ("0.5B", "1.5B", "7B", "72B")},
    **{f"Qwen2.5-{s}": f"Qwen/Qwen2.5-{s}" for s in ("0.5B", "1.5B", "3B", "7B", "14B", "32B", "72B")},
    **{f"Qwen3-{s}": f"Qwen/Qwen3-{s}" for s in ("0.6B", "1.7B", "4B", "8B", "14B", "32B", "30B-A3B", "235B-A22B")},
    "Llama-2-7B": "meta-llama/Llama-2-7b-hf",
    "Llama-2-13B": "meta-llama/Llama-2-13b-hf",
    "Llama-2-70B": "meta-llama/Llama-2-70b-hf",
    "Llama-3-8B": "meta-llama/Meta-Llama-3-8B",
    "Llama-3-70B": "meta-llama/Meta-Llama-3-70B",
    "Llama-3.1-8B": "meta-llama/Meta-Llama-3.1-8B",
    "Llama-3.1-70B": "meta-llama/Meta-Llama-3.1-70B",
    "Llama-3.1-405B": "meta-llama/Meta-Llama-3.1-405B",
    "Mistral-7B": "mistralai/Mistral-7B-v0.1",
    "Mixtral-8x7B": "mistralai/Mixtral-8x7B-v0.1",
    "DeepSeek-V3": "deepseek-ai/DeepSeek-V3",
    "DeepSeek-R1": "deepseek-ai/DeepSeek-R1",
    "DeepSeek-R1-Distill-Qwen-7B": "deepseek-ai/DeepSeek-R1-Distill-Qwen-7B",
    "DeepSeek-R1-Distill-Qwen-32B": "deepseek-ai/DeepSeek-R1-Distill-Qwen-32B",
    "ChatGLM3-6B": "THUDM/chatglm3-6b",
    "GLM-4-9B": "THUDM/glm-4-9b",
    "Baichuan2-7B": "baichuan-inc/Baichuan2-7B-Base",
    "Baichuan2-13B": "baichuan-inc/Baichuan2-13B-Base",
    "Yi-6B": "01-ai/Yi-6B",
    "Yi-34B": "01-ai/Yi-34B",
    "InternLM2-7B": "internlm/internlm2-7b",
    "InternLM2-20B": "internlm/internlm2-20b",
}


def hf_repo(model_id: str) -> str | None:
    return HF_REPOS.get(model_id)
