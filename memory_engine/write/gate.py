"""The write gate (seed 000 write threshold, seed 002 uncertainty, issue 16): noise
(chit-chat, acknowledgements, content-free lines, one-off commands) is rejected;
importance is scored by rules and the memory type classified. What scores below
``write.threshold`` is kept as an episodic memory (``write.keep_below_threshold``;
rejected when off): the threshold decides what is curated, not whether the user's
words exist. Hedged statements ('maybe I should try yoga') go to the candidate pool
(:mod:`memory_engine.write.candidates`); other uncertain texts (questions, 'I think')
are kept as episodic memories (``write.uncertain_mode``). What the assistant or a
tool said is kept as an episodic record of what was said, never curated."""

from __future__ import annotations

from dataclasses import dataclass

from ..config import WriteSection
from ..errors import ConfigError
from ..models import MemoryType
from . import rules
from .roles import is_polar_reply

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
    below_threshold: bool = False


class WriteGate:
    """``judge(clean, has_fact, hint)`` -> :class:`Verdict`. A structured fact is never rejected
    by the chit-chat rule; a caller's type hint, a fact or an uncertain statement skips the
    threshold. Raises ConfigError at construction for ``write.threshold`` outside [0, 1]."""

    def __init__(self, cfg: WriteSection) -> None:
        if not 0.0 <= cfg.threshold <= 1.0:
            raise ConfigError("write.threshold must be in [0, 1]", key="write.threshold")
        self.cfg = cfg

    def judge(self, clean: str, *, has_fact: bool = False, hint: MemoryType | None = None,
              role: str = "user", answers: bool = False) -> Verdict:
        """``answers``: the text replies to the assistant's question about the user (write/roles.py): a bare
        yes / no ('yes', '没有') is that question's answer, not chit-chat."""
        reason = rules.reject_reason(clean, self.cfg)
        if answers and reason in ("chit_chat", "no_content") and is_polar_reply(clean):
            reason = None
        sig = rules.signals(clean)
        if reason and not has_fact:
            return Verdict(reason, sig, 0.0, MemoryType.EPISODIC, False, scored=False)
        imp = rules.importance(clean, sig, self.cfg, has_fact=has_fact)
        mtype = rules.classify(sig, has_fact, hint)
        uncertain = sig.uncertain and not has_fact and hint in (None, MemoryType.EPISODIC) and mtype != MemoryType.FACT
        if (uncertain and self.cfg.uncertain_mode == "episodic" and self.cfg.keep_below_threshold
                and not rules.hedged(clean, sig, self.cfg.hedge_clauses)):
            uncertain, mtype = False, MemoryType.EPISODIC  # a question or an opinion: kept, not curated
            below = hint is None
        else:
            below = hint is None and not has_fact and not uncertain and imp < self.cfg.threshold
        if role != "user" and hint is None:
            # the assistant's suggestion or a tool's output: a record of what was said, never the user's
            # preference, fact or constraint, and no candidate waiting to become one
            return Verdict(None, sig, imp, MemoryType.EPISODIC, False, below_threshold=True)
        if below:
            if not self.cfg.keep_below_threshold:
                return Verdict(f"below_threshold:{imp:.2f}", sig, imp, mtype, False)
            return Verdict(None, sig, imp, MemoryType.EPISODIC, False, below_threshold=True)
        return Verdict(None, sig, imp, mtype, uncertain)
