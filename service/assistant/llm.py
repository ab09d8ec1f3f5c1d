"""Any OpenAI-compatible chat model (DeepSeek, Qwen/DashScope, Hunyuan, vLLM, Ollama) behind one factory."""

from __future__ import annotations

from langchain_core.language_models.chat_models import BaseChatModel

from service.errors import DependencyUnavailableError
from service.settings import Settings

# Documented base URLs (each provider's OpenAI-compatible API docs); the model name is the provider's.
PROVIDERS = {
    "deepseek": "https://api.deepseek.com",
    "dashscope": "https://dashscope.aliyuncs.com/compatible-mode/v1",
    "hunyuan": "https://api.hunyuan.cloud.tencent.com/v1",
    "vllm": "http://127.0.0.1:8000/v1",
    "ollama": "http://127.0.0.1:11434/v1",
}


def build_llm(settings: Settings) -> BaseChatModel:
    """ChatOpenAI pointed at GPU_ADVISOR_LLM_BASE_URL (or a provider name) with GPU_ADVISOR_LLM_MODEL."""
    if not settings.llm_model:
        raise DependencyUnavailableError("GPU_ADVISOR_LLM=openai needs GPU_ADVISOR_LLM_MODEL.",
                                         "Set the provider's model name, e.g. deepseek-chat or qwen-plus.")
    try:
        from langchain_openai import ChatOpenAI
    except ImportError as exc:
        raise DependencyUnavailableError("langchain-openai is not installed.", "Run `make install`.") from exc
    base = PROVIDERS.get(settings.llm_base_url, settings.llm_base_url) or None
    return ChatOpenAI(
        model=settings.llm_model,
        base_url=base,
        api_key=settings.llm_api_key or "not-needed",
        temperature=0,
        timeout=settings.llm_timeout_s,
        max_retries=1,
    )
