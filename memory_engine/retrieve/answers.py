"""Answer type (issue 16, session 12): a question that asks for a time is answered by a memory that states one.

"When is the plumber coming?" after "the plumber can probably come Wednesday" / "the plumber is Dave from Rooter
Pros" / "Dave texted back, Friday 10am works for him": the memory that shares the question's words ("plumber")
ranks first by relevance, but it states no time, so it cannot answer; the one that does (the final value of a
provisional plan, often worded without the question's noun) should. Likewise '搬家是哪天？' over '搬家公司是在货拉拉上找的'
and '我一般什么时候跑步？' over '最近入手了一块佳明手表'.

A question asks for a time when it holds one of ``retrieval.time_question_words`` (a closed class of interrogatives,
zh and en) and is no question about the past (:func:`memory_engine.write.intents.query_tense` 'past', or an
English past operator: 'when did I go to Paris?' is answered by the memory's own write time, which every memory
has). A memory states a time (:func:`states_time`) when it names a weekday or a clock time
(:func:`memory_engine.write.changes.states_time`) in a sentence that is not a question (an offer "leaving 6:40am and
landing 8:05am, $189. Should I grab it?" states 6:40am; the whole question "can you come Friday?" states nothing),
or the write path resolved a date in it (payload ``event_start`` / ``event_end``, epoch seconds) that does not end
before the memory was written: a past event ("he fixed our water heater last year") dates that event, not the one
asked about.

Among the best ``top_k + retrieval.stale_window`` candidates, every one that states no time scores at most
``retrieval.time_answer_discount`` x the best one that does, when that one has at least
``retrieval.time_answer_relevance_share`` of its relevance. A candidate the stale stage ranked below a newer value of
its slot (``stale``: {older id: the current value}, :meth:`memory_engine.retrieve.stale.StaleValues.apply`) is never
that best one: "我一般晚上八点去健身房" -> "最近改成早上六点半" -> "还是晚上去健身吧" asked "我一般几点去健身？" keeps the
flip back first although only the stale statements name a clock time. Nothing is archived; only the order changes.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from ..errors import ConfigError
from ..write.changes import states_time as _states_clock_or_date
from ..write.intents import ends_as_question, query_tense
from .fusion import Candidate, rank_key

__all__ = ["TimeAnswers", "asks_time", "states_time", "word_pattern"]

#: an English past operator or past time adverb of a question ('when did ...', 'when was ...')
_PAST_EN = re.compile(r"\b(?:did|was|were|had)\b|\b(?:ago|yesterday)\b", re.IGNORECASE)
#: a sentence: text up to and including its end mark, or the end of the text (a clock time's '6:40' and a price's
#: '$1.50' keep their marks: a '.' or ':' only ends a sentence before a space or the end)
_SENTENCE = re.compile(r"(?:[^.!?。！？\n]|\.(?=\S))+[.!?。！？]*")


def word_pattern(words: Sequence[str]) -> re.Pattern[str] | None:
    """One pattern for ``words``: English ones as whole words (case-insensitive), Chinese ones as substrings."""
    alts = [(r"\b" + re.escape(w) + r"\b") if re.match(r"[A-Za-z]", w) else re.escape(w)
            for w in sorted({w.strip() for w in words if w.strip()}, key=len, reverse=True)]
    return re.compile("|".join(alts), re.IGNORECASE) if alts else None


def asks_time(query: str, pattern: re.Pattern[str] | None) -> bool:
    """Whether ``query`` is a one-line question holding a time interrogative (``pattern``, None = never) that
    asks about the present or the future: not 'past' by :func:`query_tense` and no English past operator."""
    q = (query or "").strip()
    if pattern is None or "\n" in q or not ends_as_question(q) or not pattern.search(q):
        return False
    return query_tense(q) != "past" and not _PAST_EN.search(q)


def states_time(payload: dict[str, Any]) -> bool:
    """Whether a memory payload states a time a present question can be answered with: a weekday or a clock time
    in its content, or a resolved date (``event_start``) whose ``event_end`` (else start) is not before the
    memory's ``created_at`` day (epoch seconds; a day of slack, since a date 'today' ends at midnight)."""
    content = str(payload.get("content") or "")
    start = payload.get("event_start")
    if any(_states_clock_or_date(m.group(0), None) for m in _SENTENCE.finditer(content)):
        return True
    if start is None:
        return False
    stored_end = payload.get("event_end")
    end = stored_end if stored_end is not None else start
    written = float(payload.get("created_at") or 0.0)
    return float(end) >= written - 86_400.0


class TimeAnswers:
    """``enabled`` when ``retrieval.time_answer_discount`` < 1 and ``retrieval.time_question_words`` is not empty.
    ``apply(query, kept, payloads, top_k, window)`` returns ``kept`` re-ranked (module docstring); ConfigError for
    a share or discount outside [0, 1]."""

    def __init__(self, discount: float, relevance_share: float, words: Sequence[str]) -> None:
        if not 0.0 <= discount <= 1.0 or not 0.0 <= relevance_share <= 1.0:
            raise ConfigError("retrieval.time_answer_discount and time_answer_relevance_share must be in [0, 1]",
                              key="retrieval.time_answer_discount")
        self.discount, self.relevance_share = discount, relevance_share
        self.pattern = word_pattern(words)
        self.enabled = discount < 1.0 and self.pattern is not None

    def apply(self, query: str, kept: list[Candidate], payloads: dict[str, dict[str, Any]], top_k: int,
              window: int, stale: Mapping[str, str] | None = None) -> list[Candidate]:
        """``stale``: {older id: the newer value it yields to} from the stale stage (None = none); such a candidate
        counts as stating no time (module docstring)."""
        if not self.enabled or len(kept) < 2 or not asks_time(query, self.pattern):
            return kept
        head, tail = kept[: top_k + window], kept[top_k + window:]
        timed = [c for c in head if states_time(payloads.get(c.memory_id, {})) and c.memory_id not in (stale or {})]
        if not timed or len(timed) == len(head):
            return kept
        best = max(timed, key=lambda c: c.fused)
        out: list[Candidate] = []
        changed = False
        for c in head:
            if c in timed or best.relevance < self.relevance_share * c.relevance or c.fused <= self.discount * best.fused:
                out.append(c)
            else:
                out.append(replace(c, fused=self.discount * best.fused))
                changed = True
        if not changed:
            return kept
        out.sort(key=rank_key)
        return out + tail
