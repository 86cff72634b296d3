"""Memory lifecycle (SEED_DIGEST section 5): decay/archive/expiry/eviction rules
and their job, explicit forget and erase, consolidation, re-embedding and the
asynchronous writer. Each takes a :class:`~memory_engine.engine.MemoryEngine`.

Submodules are imported lazily by callers (``from memory_engine.lifecycle.runner
import run_lifecycle``) so importing the package stays cheap.
"""

from __future__ import annotations

__all__ = ["consolidate", "forget", "llm", "policy", "reembed", "runner", "writer"]
