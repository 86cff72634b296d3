"""Build the configured :class:`~memory_engine.store.base.VectorStore`.

``storage.backend``: ``edge`` (qdrant-edge shard at ``storage.path`` or
``<workspace>/qdrant``; the embedded default) or ``client`` (qdrant-client
against ``storage.url`` / env ``QDRANT_URL``, with ``storage.api_key`` / env
``QDRANT_API_KEY``; ``:memory:`` selects qdrant-client's local mode).
"""

from __future__ import annotations

import os
from pathlib import Path

from ..config import StorageSection
from ..errors import ConfigError, StoreError
from .base import VectorStore

__all__ = ["BACKENDS", "make_store"]

#: valid values of ``storage.backend``
BACKENDS: tuple[str, ...] = ("edge", "client")


def _owner_store(workspace: str | Path) -> VectorStore | None:
    """The vector store of the process that owns ``workspace`` (``memwb app``), served to this one, or None."""
    from ..observability.spool import find_owner
    from .remote import RemoteStore

    owner = find_owner(workspace)
    if owner is None or not owner.store_url or not owner.store_token:
        return None
    return RemoteStore(owner.store_url, owner.store_token)  # type: ignore[return-value]


def make_store(cfg: StorageSection, workspace: str | Path, ephemeral: bool = False) -> VectorStore:
    """The store ``cfg`` describes; the caller calls ``ensure_collection(dim)``.

    ``ephemeral=True``: edge -> a temporary shard removed on ``close()``;
    client -> local mode ``:memory:`` unless a URL is configured.
    An edge shard held by the workspace's owner process (``memwb app``) is reached through it
    (:class:`~.remote.RemoteStore`). Raises ConfigError (key ``storage.backend`` / ``storage.url``)
    for an unknown backend or a client backend without a URL; StoreError when the store cannot be opened.
    """
    backend = cfg.backend.strip().lower()
    if backend == "edge":
        from .edge import EdgeStore

        if ephemeral:
            return EdgeStore(ephemeral=True)
        from ..paths import WorkspacePaths, workspace_root

        path = WorkspacePaths(workspace_root(workspace), cfg.path).qdrant
        try:
            return EdgeStore(path)
        except StoreError as e:
            remote = _owner_store(workspace) if "already open" in str(e) else None
            if remote is None:
                raise
            return remote
    if backend == "client":
        from .client import ClientStore

        url = cfg.url or os.environ.get("QDRANT_URL")
        api_key = cfg.api_key or os.environ.get("QDRANT_API_KEY")
        if not url:
            if not ephemeral:
                raise ConfigError(
                    "storage.backend 'client' needs storage.url or env QDRANT_URL (':memory:' for local mode)",
                    key="storage.url",
                )
            url = ":memory:"
        return ClientStore(url=url, api_key=api_key, collection=cfg.collection)
    raise ConfigError(
        f"unknown storage.backend {cfg.backend!r}; valid: {', '.join(BACKENDS)}", key="storage.backend"
    )
