"""Whose turn answers a question that names a participant (issue 16, failure class 7: speakers).

A conversation of several people is stored turn by turn with each turn's speaker
(``metadata.speaker``: a group chat, two friends, a stand-up thread, a LoCoMo dialogue). A question
that names one participant ("Where did Priya go hiking?", "小林上周末去哪儿爬山了", "老王以前爬过哪座
山？") asks what *that* person said or did. Two kinds of turns by the other participants share its
words without answering it:

* a turn **spoken to** the named person: it names them and speaks in the second person ("Priya how
  was your long weekend? did you end up doing the hike", "小林，你上周末去哪儿爬山了？", "小林你也该去
  一次"). A name with a second-person pronoun in one turn is a vocative, the person addressed, not
  the person the turn tells about (Quirk et al. 1985, *A Comprehensive Grammar of the English
  Language* §10.52, vocatives; 刘月华等《实用现代汉语语法》称呼语). It asks or tells them; their
  own answer is their reply;
* a turn that **does not name** the named person at all: its speaker tells their own story in the
  first person (or, in Chinese, with no subject: "去了香山，人特别多").

A turn by another participant that names the person without addressing them ("Amy 之前遇到过类似的
migration 问题", "Priya said the trail was closed") reports on them and is left where it ranks.

:func:`speaker_demotions` ranks those turns below the named person's own best turn among the kept
candidates, when that turn answers the query on its own: at least ``share`` x the other turn's
relevance. Nothing is removed; the cap is the caller's (``retrieval.speaker_order_discount``).
A turn's speaker is ``metadata.speaker``, else the speaker label its text opens with ("Priya: ...", the
write path's :func:`memory_engine.write.correction.speaker_of`, note headers excluded). A label misread
from a note ("快递地址：...") matters only for a query naming it, and then that note is what it asks
about. Only a query that names exactly one of the candidates' speakers is ordered ("What did Tom tell
Priya?" names two and is left alone). Pure functions.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..text import content_terms
from ..write.correction import speaker_of as correction_speaker
from .candidates import names_speaker
from .fusion import Candidate

__all__ = ["addresses", "named_speaker", "participant_terms", "speaker_demotions", "speaker_of"]

#: second-person pronouns, the closed class (en: you / your / yours / yourself(ves) and their chat spellings
#: u / ur / ya; zh: 你 / 您 / 你们 / 您们): a name in the same turn is the person spoken to
_SECOND_PERSON = re.compile(r"\b(?:you|your|yours|yourself|yourselves|you'?re|you'?ve|you'?ll|you'?d|u|ur|ya)\b|你|您",
                            re.IGNORECASE)


def speaker_of(payload: Mapping[str, Any]) -> str:
    """Who said the memory, lower-cased: ``metadata.speaker``, else the speaker label its text opens with
    ("Priya: We did the coastal trail", a conversation stored without metadata), no note header ("Update: ...",
    "更正：..."); '' for neither. The write path's reading (:func:`memory_engine.write.correction.speaker_of`):
    one speaker for a correction and for this order."""
    return correction_speaker(dict(payload.get("metadata") or {}), str(payload.get("content") or ""))


def named_speaker(query: str, speakers: Sequence[str]) -> str | None:
    """The one speaker of ``speakers`` (lower-cased names) that ``query`` names
    (:func:`memory_engine.retrieve.candidates.names_speaker`), else None (none, or two or more)."""
    named = {s for s in speakers if s and names_speaker(query, s)}
    return next(iter(named)) if len(named) == 1 else None


def participant_terms(query: str, terms: frozenset[str], payloads: Iterable[Mapping[str, Any]]) -> frozenset[str]:
    """The ones of ``terms`` (the query's content terms) that are words of a participant's name the query names:
    a declared ``metadata.speaker`` of one of ``payloads`` (only a declared one, as for the speaker coverage:
    a label read from the text would also take a note header for a person) that ``query`` names
    (:func:`memory_engine.retrieve.candidates.names_speaker`). Empty when the query names no participant."""
    names = {str((pl.get("metadata") or {}).get("speaker") or "").strip().lower() for pl in payloads}
    out: set[str] = set()
    for name in names:
        if name and names_speaker(query, name):
            out |= content_terms(name) & terms
    return frozenset(out)


def addresses(text: str, name: str) -> bool:
    """Whether ``text`` speaks to ``name``: it names them and speaks in the second person (module
    docstring). ``name`` lower-cased, as :func:`speaker_of` gives it."""
    return names_speaker(text or "", name) and _SECOND_PERSON.search(text or "") is not None


def speaker_demotions(query: str, kept: Sequence[Candidate], payloads: Mapping[str, Mapping[str, Any]],
                      share: float, unnamed: bool = True) -> dict[str, tuple[str, ...]]:
    """{the named speaker's best turn: the other speakers' turns that rank below it} (module docstring);
    {} when the query names no single speaker of ``kept`` or that speaker has no turn among them.
    ``kept`` in rank order (best first); ``share`` in [0, 1]: the named speaker's turn ranks above a
    turn only when its relevance is at least ``share`` x that turn's; ``unnamed`` False: only the turns spoken to
    the named person, not those that do not name them (``retrieval.speaker_order_unnamed``)."""
    spoken = {c.memory_id: speaker_of(payloads.get(c.memory_id) or {}) for c in kept}
    name = named_speaker(query or "", sorted(set(spoken.values())))
    if name is None:
        return {}
    own = next((c for c in kept if spoken[c.memory_id] == name), None)
    if own is None:
        return {}
    below = []
    for c in kept:
        who = spoken[c.memory_id]
        if not who or who == name or own.relevance < share * c.relevance:
            continue
        text = str((payloads.get(c.memory_id) or {}).get("content") or "")
        if addresses(text, name) or (unnamed and not names_speaker(text, name)):
            below.append(c.memory_id)
    return {own.memory_id: tuple(below)} if below else {}
