"""The Chroma `EmbeddingFunction` view of our `Embedder` (registered on first use: chromadb is heavy).

We pass vectors in ourselves; the function is there so Chroma never loads a default model of its own, and so a
collection records which model built it.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from service.retrieval.embedder_choice import shared_embedder
from service.retrieval.embeddings import Embedder

EF_NAME = "gpu_advisor_sentence_transformer"  # the registered name; kept from the first release for old collections


@lru_cache(maxsize=1)
def chroma_embedding_function_class() -> type[Any]:
    """The Chroma `EmbeddingFunction` subclass, defined and registered on first use (chromadb is heavy)."""
    from chromadb.api.types import Documents, EmbeddingFunction, Embeddings
    from chromadb.utils.embedding_functions import register_embedding_function

    class SentenceTransformerFunction(EmbeddingFunction[Documents]):
        """Chroma view of an `Embedder`; the collection records its name and model path."""

        def __init__(self, setting: str, embedder: Embedder | None = None) -> None:
            self.embedder = embedder or shared_embedder(setting)

        def __call__(self, input: Documents) -> Embeddings:
            import numpy as np

            return [np.asarray(v, dtype=np.float32) for v in self.embedder.embed(list(input))]

        @staticmethod
        def name() -> str:
            return EF_NAME

        def default_space(self) -> Any:
            return "cosine"

        def get_config(self) -> dict[str, Any]:
            return {"setting": self.embedder.setting}

        @staticmethod
        def build_from_config(config: dict[str, Any]) -> SentenceTransformerFunction:
            return SentenceTransformerFunction(str(config.get("setting", config.get("model_path", ""))))

        def validate_config_update(self, old_config: dict[str, Any], new_config: dict[str, Any]) -> None:
            return None

    register_embedding_function(SentenceTransformerFunction)  # type: ignore[no-untyped-call]
    return SentenceTransformerFunction


def chroma_embedding_function(embedder: Embedder) -> Any:
    return chroma_embedding_function_class()(embedder.setting, embedder)
