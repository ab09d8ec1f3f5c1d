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

# How each provider takes a schema (its OpenAI-compatible API docs): DeepSeek, DashScope and Hunyuan call tools
# (DeepSeek's and most Qwen models' JSON mode is json_object only, no schema); vLLM and Ollama constrain the
# output to a JSON schema given as response_format, with no tool parser to configure. Anything else: tools.
STRUCTURED = {"deepseek": "function_calling", "dashscope": "function_calling", "hunyuan": "function_calling",
              "vllm": "json_schema", "ollama": "json_schema"}


def structured_method(settings: Settings) -> str:
    """How the LLM reader sends the frame's schema: GPU_ADVISOR_LLM_STRUCTURED, or the provider's way."""
    if settings.llm_structured != "auto":
        return settings.llm_structured
    preset = settings.llm_base_url.strip()
    by_url = {url.rstrip("/"): name for name, url in PROVIDERS.items()}
    name = preset if preset in PROVIDERS else by_url.get(preset.rstrip("/"), "")
    return STRUCTURED.get(name, "function_calling")


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
