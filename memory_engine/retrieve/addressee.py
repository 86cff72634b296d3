"""Whom a query asks about (issue 16, failure class 7): may what the assistant said answer it?

What the assistant suggested, guessed or restated is a record of *its* words. A first-person
question about the user ("do I like squash?", "which place did I decide on?", "我最后买了哪个",
"我喜欢喝什么咖啡") asks what the user said, did or owns, and the assistant's suggestion is no
answer to it, however close its words: it is left out of the candidates
(``retrieval.assistant_needs_addressee``). A question that refers to the assistant or to its
suggestion ("what did you recommend?", "the sport you suggested", "your advice on the hotel",
"你上次推荐的那家店", "你当时建议我买哪款") is answered by it. A query that is neither (no first
person: "Kyoto hotel near the station") leaves assistant memories in, at
``retrieval.inferred_weight``.

Decided by structure, not by sentences: a second-person subject ("you", "你", "您") or the
assistant named ("the assistant", "助手") before a verb of saying or proposing; a second-person
possessive before a suggestion noun ("your suggestion"); a suggestion noun or a passive
suggestion about the user ("recommended to me", "推荐给我", "给我推荐的"); first person: I / me /
my / we, 我 / 咱. A suggestion the user confirmed is the user's (:func:`memory_engine.write.roles.author_role`).

**Threads** (``retrieval.thread_order``; links written by :mod:`memory_engine.write.roles`): the user
asked ("any ideas for dinner tonight?"), the assistant suggested (``_answers`` the request), the user
chose for themselves ("I think I'll book Luigi's instead", ``_settles`` the suggestion and the request), or
accepted the suggestion ("yes please", "好，就它了": the suggestion, confirmed, is then the decision).
The decision is what the request came to, so for a query that does not refer to the assistant it
answers whatever the request answers: :func:`lift_decisions` gives it at least
``retrieval.thread_relevance_share`` x the request's relevance (for the floor) and the request's fused
score, and :func:`thread_demotions` ranks the request and the unconfirmed suggestion below it. For a
query that refers to the assistant ("what restaurant did you recommend to me?") the suggestion is the
answer: the request it answers and the decision that settled it rank below it (the request repeats
the question's words: "Can you recommend a restaurant ..."). Pure functions.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from ..write.roles import ANSWERS_KEY, CONFIRMED_KEY, SETTLES_KEY, author_role, commitment, declined
from .fusion import Candidate, rank_key

__all__ = ["about_user_only", "lift_decisions", "may_answer", "refers_to_assistant", "thread_demotions"]

#: past verbs of saying / proposing: "you suggested", not the request "can you tell me"
_SAID_EN = (r"(?:said|suggested|recommended|mentioned|told|proposed|advised|picked|chose|found|gave|sent|showed|listed|"
            r"thought|guessed|wrote|offered|came up with|pointed out|brought up|meant)")
_SAY_EN = r"(?:say|suggest|recommend|mention|tell|propose|advise|pick|choose|find|give|send|show|list|think|guess|write|offer)"
_SAY_ZH = r"(?:说|讲|推荐|建议|提到|提过|提起|提议|介绍|推|安利|给|发|找|选|挑|列|猜|觉得|认为|回答|答|写|举)"

_TO_ASSISTANT = re.compile(
    rf"\b(?:you|u|ya)\b(?:\s+\w+){{0,2}}?\s+{_SAID_EN}\b|\b(?:did|didn'?t|do|would|will)\s+(?:you|u|(?:the|my)\s+(?:assistant|bot|ai|chatbot|agent))\s+(?:\w+\s+)?"
    rf"{_SAY_EN}\b|"
    rf"\b(?:the|my)\s+(?:assistant|bot|ai|chatbot|agent)\b(?:\s+\w+){{0,2}}?\s+{_SAID_EN}\b|"
    r"\byour\s+(?:\w+\s+)?(?:suggestions?|recommendations?|advice|ideas?|picks?|proposals?|answers?|lists?|guess(?:es)?|"
    r"tips?|options?|choices?|words)\b|"
    r"\b(?:suggestions?|recommendations?|advice|tips?)\b|\b(?:recommended|suggested|proposed)\s+(?:to|for)\s+(?:me|us)\b|"
    rf"(?:你|您|你们)(?:上次|之前|刚才|刚刚|昨天|前天|那天|当时|以前|早上|上回|先前|一开始)?(?:跟我|给我|帮我|向我|和我|对我|替我)?"
    rf"{_SAY_ZH}|(?:助手|AI|ai|机器人|小助手)(?:上次|之前|刚才|当时)?{_SAY_ZH}|"
    r"(?:推荐|建议)(?:给我|过|的)|给我推荐(?:的|过)|被推荐",
    re.IGNORECASE,
)
_FIRST_PERSON = re.compile(r"\b(?:i|i'm|im|i've|i'd|i'll|me|my|mine|myself|we|we're|our|ours|us)\b|我|咱", re.IGNORECASE)


def refers_to_assistant(query: str) -> bool:
    """The query refers to the assistant or to its suggestion (module docstring)."""
    return bool(_TO_ASSISTANT.search(query or ""))


def about_user_only(query: str) -> bool:
    """A first-person question about the user that does not refer to the assistant: what the
    assistant said may not answer it."""
    q = query or ""
    return bool(_FIRST_PERSON.search(q)) and not refers_to_assistant(q)


def may_answer(payload: Mapping[str, Any], user_only: bool, declined_out: bool = False,
               commitment_out: bool = False) -> bool:
    """Whether a memory may answer a query; ``user_only`` = :func:`about_user_only` of the query
    (when the feature is on); ``declined_out``: the query does not refer to the assistant and
    ``retrieval.declined_needs_addressee`` is on; ``commitment_out``: the same with
    ``retrieval.commitment_needs_addressee``. Only an assistant memory is ever refused: unconfirmed
    for a question about the user, declined (:func:`memory_engine.write.roles.declined`) or an unaccepted
    standing commitment of its own (:func:`memory_engine.write.roles.commitment`) for any other."""
    if declined_out and declined(payload):
        return False
    if commitment_out and commitment(payload):
        return False
    return not (user_only and author_role(payload) == "assistant")


def _meta(payloads: Mapping[str, Mapping[str, Any]], mid: str) -> Mapping[str, Any]:
    return (payloads.get(mid) or {}).get("metadata") or {}


def _settled(payloads: Mapping[str, Mapping[str, Any]], mid: str) -> tuple[str, str | None]:
    """(offer id, request id or None) a decision settles; ('', None) for any other memory. A suggestion
    the user accepted ("yes please", "好，就它了") is the decision itself: ('', the request it answers)."""
    meta = _meta(payloads, mid)
    links = meta.get(SETTLES_KEY) or ()
    if not links:
        request = meta.get(ANSWERS_KEY)
        if request and meta.get(CONFIRMED_KEY) and author_role(payloads.get(mid) or {}) == "user":
            return "", str(request)
        return "", None
    return str(links[0]), (str(links[1]) if len(links) > 1 else None)


def lift_decisions(ranked: list[Candidate], payloads: Mapping[str, Mapping[str, Any]], share: float
                   ) -> list[Candidate]:
    """Every decision among ``ranked`` whose request is a candidate too borrows at least ``share``
    (in [0, 1]) x the request's relevance (``context_relevance``, read by the floor) and at least the
    request's fused score (module docstring, threads). For a query that does not refer to the
    assistant. Returns the candidates re-sorted (score desc, :func:`~memory_engine.retrieve.fusion.rank_key`); ``ranked`` unchanged when none."""
    by_id = {c.memory_id: c for c in ranked}
    out: dict[str, Candidate] = {}
    for c in ranked:
        _, request = _settled(payloads, c.memory_id)
        req = by_id.get(request or "")
        if req is None or req.memory_id == c.memory_id:
            continue
        out[c.memory_id] = replace(c, context_relevance=max(c.context_relevance, share * req.relevance),
                                   context_gate_relevance=max(c.gate_context, share * req.gate_relevance),
                                   fused=max(c.fused, req.fused))
    if not out:
        return ranked
    return sorted((out.get(c.memory_id, c) for c in ranked), key=rank_key)


def thread_demotions(ids: list[str], payloads: Mapping[str, Mapping[str, Any]], to_assistant: bool
                     ) -> dict[str, tuple[str, ...]]:
    """{ranked-above id: ids that rank below it} for the threads among ``ids`` (module docstring):
    a decision above its request and the suggestion it settles (unless the user confirmed that
    suggestion: it speaks for the user then); for ``to_assistant`` a suggestion above the request
    it answers and the decision that settled it."""
    present = set(ids)
    out: dict[str, tuple[str, ...]] = {}
    for mid in ids:
        if to_assistant:
            below = [str(r) for r in [_meta(payloads, mid).get(ANSWERS_KEY)] if r]
            below += [d for d in ids if _settled(payloads, d)[0] == mid]
        else:
            offer, request = _settled(payloads, mid)
            below = [request] if request else []
            if offer and author_role(payloads.get(offer) or {}) == "assistant":
                below.append(offer)
        below = [b for b in below if b in present and b != mid]
        if below:
            out[mid] = tuple(below)
    return out
