"""What the jobs around the engine need from it, as protocols, so that
``lifecycle/*``, ``working`` and the async writer depend on these shapes and
never import :class:`~memory_engine.engine.MemoryEngine` (no import circle).
A :class:`MemoryEngine` satisfies all of them; a test may pass anything that does.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from .config import EngineConfig
    from .embedding import CachedEmbedder
    from .models import RetrievalResult, WriteResult
    from .observability.tracing import Tracing
    from .retrieve.pipeline import RetrievalPipeline
    from .store.base import VectorStore
    from .write.pipeline import WritePipeline

__all__ = ["Adder", "Eraser", "Host", "Retriever"]


class Host(Protocol):
    """The parts of an engine a job works with: its config, store, embedder, tracing,
    whether it is ephemeral, and the shared write/retrieval stages."""

    config: EngineConfig
    store: VectorStore
    embedder: CachedEmbedder
    tracing: Tracing
    ephemeral: bool

    @property
    def embedding_version(self) -> str: ...

    @property
    def config_hash(self) -> str: ...

    @property
    def write_pipeline(self) -> WritePipeline: ...

    @property
    def retrieval_pipeline(self) -> RetrievalPipeline: ...


class Adder(Host, Protocol):
    """A host that runs the full write pipeline under its per-owner lock and write span."""

    def add(self, text: str, *, user_id: str, tenant_id: str = "default", session_id: str | None = None,
            role: str = "user", memory_type: Any = None, metadata: dict[str, Any] | None = None,
            fact: dict[str, Any] | None = None, now: datetime | None = None,
            permanent: bool = False) -> WriteResult: ...


class Eraser(Host, Protocol):
    """A host that erases every record of an owner from its store."""

    def erase_user(self, user_id: str, *, tenant_id: str = "default") -> int: ...


class Retriever(Protocol):
    """Anything with the engine's ``retrieve`` (working memory builds its context from it)."""

    @property
    def config(self) -> EngineConfig: ...

    def retrieve(self, query: str, *, user_id: str, tenant_id: str = "default", session_id: str | None = None,
                 top_k: int | None = None, now: datetime | None = None, explain: bool = False,
                 memory_types: Sequence[str] | None = None) -> RetrievalResult: ...
