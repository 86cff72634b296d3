"""memwb memory engine: typed agent memories on Qdrant with hybrid retrieval,
lifecycle, tenant/user isolation and OpenTelemetry spans.

Public API::

    from memory_engine import MemoryEngine, EngineConfig, open_workspace
"""

from .config import EngineConfig, FusionStrategy, SupersedeMode
from .errors import ConfigError, MemoryEngineError, StoreError, ValidationError
from .models import Hit, MemoryRecord, MemoryStatus, MemoryType, RetrievalResult, WriteResult

__all__ = [
    "ConfigError",
    "EngineConfig",
    "FusionStrategy",
    "Hit",
    "MemoryEngine",
    "MemoryEngineError",
    "MemoryRecord",
    "MemoryStatus",
    "MemoryType",
    "RetrievalResult",
    "StoreError",
    "SupersedeMode",
    "ValidationError",
    "Workspace",
    "WriteResult",
    "open_workspace",
]


def __getattr__(name: str):  # lazy: importing the package must not load torch or Qdrant
    if name == "MemoryEngine":
        from .engine import MemoryEngine

        return MemoryEngine
    if name in ("open_workspace", "Workspace"):
        from . import workspace

        return getattr(workspace, name)
    raise AttributeError(name)
