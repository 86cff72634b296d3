"""Turn order within a session (issue 16, write side).

A caller importing a conversation often knows only the session's time (LoCoMo's
``date_time``, a chat export's day) and writes every turn with the same ``now``.
Stored at one identical ``created_at``, the turns lose their order, and every
stage that reads it goes blind: the conversation context
(:mod:`memory_engine.retrieve.context`) takes "the turns nearest in write time" and
gets arbitrary turns of the session, the stale-value stage cannot tell the newer
statement. So a statement stamped at, or at most ``write.session_order_window_s``
before, the latest memory of its session is placed ``write.session_order_step_s``
after it (arrival order); statements with their own distinct times are untouched.
"""

from __future__ import annotations

from ..config import WriteSection
from ..errors import ConfigError
from ..scope import Scope
from ..store.base import VectorStore

__all__ = ["SessionOrder"]


class SessionOrder:
    """``place(scope, session_id, ts)`` -> the ``created_at`` (epoch seconds) of a statement said at
    ``ts``: ``ts`` itself without a session, when the feature is off (window 0) or when the
    session's latest memory (any status, archived included) is older than ``ts``; else that
    memory's ``created_at`` + step when it lies within [ts, ts + window]. One ordered store
    scroll per call. Raises ConfigError at construction for a negative window or a step
    outside (0, window] (with a window)."""

    def __init__(self, store: VectorStore, cfg: WriteSection) -> None:
        window, step = cfg.session_order_window_s, cfg.session_order_step_s
        if window < 0 or (window > 0 and not 0 < step <= window):
            raise ConfigError("write.session_order_window_s must be >= 0 and session_order_step_s in (0, window]",
                              key="write.session_order_window_s")
        self.store, self.window, self.step = store, window, step

    def place(self, scope: Scope, session_id: str | None, ts: float) -> float:
        if not session_id or self.window <= 0:
            return ts
        flt = scope.filter(session_id=session_id, statuses=None, include_archived=True, embedding_version=None)
        rows = self.store.scroll(flt, limit=1, order_by="created_at", descending=True)
        if not rows:
            return ts
        last = float(rows[0].payload.get("created_at") or 0.0)
        if ts <= last <= ts + self.window:
            return last + self.step
        return ts
