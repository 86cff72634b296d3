"""The write gate (seed 000 write threshold, seed 002 uncertainty): chit-chat and
one-off commands are rejected, importance is scored by rules, the memory type is
classified, and what scores below ``write.threshold`` is not stored. Uncertain
statements go to the candidate pool instead (:mod:`memory_engine.write.candidates`)."""

from __future__ import annotations

from dataclasses import dataclass

from ..config import WriteSection
from ..errors import ConfigError
from ..models import MemoryType
from . import rules

__all__ = ["Verdict", "WriteGate"]


@dataclass(frozen=True)
class Verdict:
    """What the gate decided about one cleaned text: ``reject`` (a reason such as ``chit_chat``
    or ``below_threshold:0.50``, None = keep), the rule ``signals``, ``importance`` (0..1),
    the ``memory_type`` and whether the statement is ``uncertain`` (-> candidate pool).
    ``scored`` is False when a rule rejected the text before scoring (importance and type unset)."""

    reject: str | None
    signals: rules.Signals
    importance: float
    memory_type: MemoryType
    uncertain: bool
    scored: bool = True


class WriteGate:
    """``judge(clean, has_fact, hint)`` -> :class:`Verdict`. A structured fact is never rejected
    by the chit-chat rule; a caller's type hint, a fact or an uncertain statement skips the
    threshold. Raises ConfigError at construction for ``write.threshold`` outside [0, 1]."""

    def __init__(self, cfg: WriteSection) -> None:
        if not 0.0 <= cfg.threshold <= 1.0:
            raise ConfigError("write.threshold must be in [0, 1]", key="write.threshold")
        self.cfg = cfg

    def judge(self, clean: str, *, has_fact: bool = False, hint: MemoryType | None = None) -> Verdict:
        reason = rules.reject_reason(clean)
        sig = rules.signals(clean)
        if reason and not has_fact:
            return Verdict(reason, sig, 0.0, MemoryType.EPISODIC, False, scored=False)
        imp = rules.importance(clean, sig, self.cfg, has_fact=has_fact)
        mtype = rules.classify(sig, has_fact, hint)
        uncertain = sig.uncertain and not has_fact and hint in (None, MemoryType.EPISODIC) and mtype != MemoryType.FACT
        if hint is None and not has_fact and not uncertain and imp < self.cfg.threshold:
            return Verdict(f"below_threshold:{imp:.2f}", sig, imp, mtype, False)
        return Verdict(None, sig, imp, mtype, uncertain)
