"""Settings from the environment (prefix GPU_ADVISOR_), built by a cached factory, never at import."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

REPO_ROOT = Path(__file__).resolve().parent.parent


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="GPU_ADVISOR_", extra="ignore")

    knowledge_dir: Path = REPO_ROOT / "knowledge"
    prompts_dir: Path = REPO_ROOT / "prompts"
    data_dir: Path = Path(".data")
    prices_file: Path | None = Field(default=None, description="a user price sheet that overrides shipped prices")
    price_max_age_days: int = Field(default=180, ge=1, description="older prices get a freshness warning")
    # Retrieval
    embedding_model: str = Field(default="", description="path of a local sentence-transformers model")
    chroma_host: str = Field(default="", validation_alias="CHROMA_HOST")
    chroma_port: int = Field(default=8000, validation_alias="CHROMA_PORT")
    # Assistant
    llm: str = Field(default="offline", description="offline | openai")
    llm_base_url: str = ""
    llm_model: str = ""
    llm_api_key: str = ""
    llm_timeout_s: float = 60.0
    llm_mode: Literal["reader", "agent"] = Field(
        default="reader", description="with GPU_ADVISOR_LLM=openai: reader (one structured-output call reads the "
        "message into the question frame; the offline path's routes, engine and renderers answer) | agent (the "
        "LLM calls the tools derived from the question spine and writes the prose)")
    llm_structured: Literal["auto", "function_calling", "json_schema"] = Field(
        default="auto", description="how the reader sends the frame's schema: a forced tool call or a JSON-schema "
        "response_format; auto picks by provider (service/assistant/llm.py STRUCTURED)")
    database_url: str = Field(default="", validation_alias="DATABASE_URL")
    session_ttl_days: int = Field(default=0, ge=0, le=36500, description="sessions untouched this many days are "
                                  "deleted (hourly by the server, or `gpu-advisor sessions prune`); 0 keeps them")
    session_max_turns: int = Field(default=500, ge=0, le=1_000_000, description="turns one session keeps; a message "
                                   "to a full session gets 409 session_full (start a new chat); 0: no cap")
    # API
    api_key: str = Field(default="", description="when set, the API requires 'Authorization: Bearer <key>'")
    api_key_id: str = Field(default="", max_length=64, pattern=r"^[A-Za-z0-9._-]*$",
                            description="a stable name for the key's owner (team-ml): sessions are scoped to it, "
                            "not to the key, so rotating GPU_ADVISOR_API_KEY keeps them")
    public_url: str = Field(default="", description="this server's address as clients reach it (https://advisor."
                            "example.com): absolute knowledge links in OpenAI-route answers")
    compat_format: Literal["auto", "text", "markdown"] = Field(
        default="auto", description="OpenAI routes: text (no gpu-advisor comments), markdown (with them), or auto "
        "(by User-Agent: Markdown chat UIs get them)")
    max_message_chars: int = 4000
    body_timeout_s: float = Field(default=30.0, gt=0, description="a request body must arrive in full within this")
    header_timeout_s: float = Field(default=10.0, ge=0, description="a request's headers must arrive within this "
                                    "(0: no deadline); see service/api/header_timeout.py")
    min_free_mb: int = Field(default=100, ge=0, description="/readyz reports the data disk full below this")
    # Slack
    slack_signing_secret: str = Field(default="", validation_alias="SLACK_SIGNING_SECRET")
    slack_bot_token: str = Field(default="", validation_alias="SLACK_BOT_TOKEN")
    slack_app_token: str = Field(default="", validation_alias="SLACK_APP_TOKEN")

    @property
    def catalog_overlay_dir(self) -> Path:
        """Where `catalog sync` writes the user catalog that overlays the shipped files."""
        return self.data_dir / "catalog"


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return Settings()
