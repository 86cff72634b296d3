"""Query preparation, the first retrieval stage: the query's content terms, its
identifiers and date range, the vague-query rewrite (seed 000/003) and the
query embedding, bundled as one :class:`QueryPlan` per call."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime

import numpy as np

from ..config import RetrievalSection
from ..embedding import CachedEmbedder
from ..errors import ConfigError
from ..scope import Scope
from ..store.base import VectorStore
from ..text import content_terms, identifiers, is_lookup, relatives, surface_words, zh_term_weights
from ..write.pii import PiiSettings, Redaction, fingerprints, redact
from . import temporal
from .addressee import about_user_only, refers_to_assistant

__all__ = ["ASSISTANT_LABELS", "VAGUE", "VAGUE_TERMS", "QueryPlan", "QueryPlanner", "VagueRewriter", "dialogue_text"]

#: a look-back reference: 'that one', 'last time', 上次, 那个 ...
VAGUE = re.compile(
    r"上次|那个|那款|那家|那件|那双|那本|之前|刚才|前面|还记得|\b(that one|last time|the one|earlier|previous|"
    r"that|it|those|again)\b",
    re.IGNORECASE,
)
#: words of a vague reference itself; they say "look back", not what about
VAGUE_TERMS = frozenset("one last time earlier previous again 上次 那个 之前 刚才 前面 那款 那家 那件 上回 说的".split())


#: a speaker label opening a dialogue line: 'User: ...', '用户：...', 'A: ...' (1-16 characters, no space, starting
#: with a letter: '10:30 开会' and 'https://...' are not labels)
_SPEAKER = re.compile(r"^\s*([A-Za-z\u4e00-\u9fff][^\s:：/]{0,15})\s*[:：](?!//)\s*")
#: speaker labels of the assistant's side of a conversation (case-insensitive)
ASSISTANT_LABELS = frozenset("assistant ai bot chatbot agent system model gpt 助手 小助手 助理 机器人 系统 客服 ai助手".split())


#: the two sides' usual labels, recognised also inside one line ('用户：... 助手：... 用户：...')
_KNOWN_LABEL = re.compile(
    r"(?:^|(?<=[\s。！？!?.，,；;]))(用户|助手|客服|机器人|user|assistant|human|ai|bot)\s*[:：](?!//)\s*", re.IGNORECASE)


def _turns(query: str) -> list[tuple[str, str]] | None:
    """(label lower-cased, text) per turn, or None: JSON chat messages ([{"role", "content"}, ...]),
    lines that all open with a speaker label, or one text that opens with a known label, cut at
    every known label ('用户：...' alone is one turn: the label is no word of the user's)."""
    q = query.strip()
    if q.startswith("[") and q.endswith("]"):
        try:
            msgs = json.loads(q)
        except ValueError:
            msgs = None
        if isinstance(msgs, list) and len(msgs) >= 2 and all(
                isinstance(m, dict) and isinstance(m.get("role"), str) and isinstance(m.get("content"), str)
                for m in msgs):
            return [(m["role"].strip().lower(), m["content"].strip()) for m in msgs]
    lines = [ln for ln in q.splitlines() if ln.strip()]
    if len(lines) >= 2:
        turns = []
        for ln in lines:
            m = _SPEAKER.match(ln)
            if m is None:
                break
            turns.append((m.group(1).lower(), ln[m.end():].strip()))
        else:
            return turns
    marks = list(_KNOWN_LABEL.finditer(q))
    if not marks or q[:marks[0].start()].strip():
        return None
    return [(m.group(1).lower(), q[m.end():(marks[i + 1].start() if i + 1 < len(marks) else len(q))].strip())
            for i, m in enumerate(marks)]


def dialogue_text(query: str, max_chars: int) -> str | None:
    """The user's side of a dialogue query, or None when ``query`` is not one.

    A dialogue query is a JSON list of chat messages (``role`` / ``content``), at least two
    non-empty lines that all start with a speaker label ('用户：', 'User:', 'A:'), or one text
    that starts with a known label ('用户：... 助手：... 用户：...', or '用户：...' alone). The
    result is the text of the turns whose label is not an assistant's
    (:data:`ASSISTANT_LABELS`), labels removed, newest last, keeping only the latest turns
    that fit in ``max_chars`` characters (at least the last one, cut to its last
    ``max_chars``). Why: the current conversation names the past event in the user's own
    words, mostly in the last turns; the assistant's replies ('听起来很治愈') and the labels
    themselves match every memory alike, and an embedder reads only the leading window of a
    long text (e5: 512 tokens, about 500 Chinese characters), which would keep the oldest
    turns and drop the newest. If every turn is the assistant's, all are kept.
    ``max_chars`` >= 1 (ConfigError at the planner)."""
    turns = _turns(query)
    if turns is None:
        return None
    said = [t for who, t in turns if who not in ASSISTANT_LABELS and t] or [t for _, t in turns if t]
    kept: list[str] = []
    used = 0
    for t in reversed(said):
        if kept and used + len(t) > max_chars:
            break
        kept.append(t[-max_chars:])
        used += len(kept[-1])
    return "\n".join(reversed(kept)) or None


@dataclass(frozen=True)
class QueryPlan:
    """One query, prepared. ``text``: what the routes search (the rewrite, else the query);
    ``terms``: the query's content terms without vague words; ``route_terms``: terms of
    ``text``; ``cover_terms``: what keyword coverage is judged on (the user's own terms,
    the rewrite only widens recall); ``identifiers`` of ``text``; ``date_range`` the query
    names (None when none or temporal scoring is off); ``vector`` the query embedding;
    ``ts`` / ``now``: the call's clock (epoch seconds / aware datetime); ``relatives`` the
    relatives a lookup names (:func:`memory_engine.text.relatives`; empty for a dialogue and for a
    statement of the user's present, :func:`memory_engine.text.is_lookup`, where another relative's
    story is a fair association); ``lookup``: the query is such a lookup (the entity mismatch,
    retrieve/contrast.py, applies to it alone); ``dialogue``: the query is a
    conversation of several turns and ``text``/``terms`` are its user turns
    (:func:`dialogue_text`; a single labelled turn is read without its label, as a question);
    ``user_only``: a first-person question about the user that does not refer to the assistant
    (:func:`memory_engine.retrieve.addressee.about_user_only`): the assistant's unconfirmed words may
    not answer it (``retrieval.assistant_needs_addressee``; never for a dialogue query); ``to_assistant``:
    the query refers to the assistant or its suggestion (:func:`memory_engine.retrieve.addressee.refers_to_assistant`),
    so the assistant's words are the answer and do not defer to the user's (retrieve/stale.py)."""

    query: str
    text: str
    rewritten: str | None
    terms: frozenset[str]
    route_terms: frozenset[str]
    cover_terms: frozenset[str]
    identifiers: frozenset[str]
    date_range: temporal.DateRange | None
    vector: np.ndarray
    session_id: str | None
    ts: float
    now: datetime
    relatives: frozenset[str] = frozenset()
    dialogue: bool = False
    user_only: bool = False
    to_assistant: bool = False
    dates: temporal.DateSettings = temporal.DEFAULT_DATES
    #: query-side keyword weight of each of ``route_terms`` (retrieval.zh_term_prior: Chinese terms by general
    #: IDF, text.zh_term_weight); None = every term 1.0
    term_weights: Mapping[str, float] | None = None
    #: the same weight for each of ``cover_terms`` when retrieval.coverage_term_prior (the coverage the floor
    #: sees, candidates.cjk_coverage); None = every term 1.0
    cover_weights: Mapping[str, float] | None = None
    #: the query looks something up (text.is_lookup; for a conversation, its last user turn): False for a
    #: statement of the user's present, which the floor treats as a call for related experience (cutoffs.py);
    #: judged on a conversation too, unlike :attr:`lookup`
    last_turn_lookup: bool = True

    @property
    def lookup(self) -> bool:
        """A lookup that is no conversation (``last_turn_lookup`` and not ``dialogue``): the entity and relative
        mismatches (retrieve/contrast.py) apply to it alone, since a conversation's earlier turns may name
        another entity fairly."""
        return self.last_turn_lookup and not self.dialogue


class VagueRewriter:
    """Seed 000/003: expand a vague query ('上次那个', 'that one') of at most
    ``retrieval.rewrite_max_terms`` content terms with up to ``rewrite_terms`` words of the
    session's ``rewrite_memories`` latest memories. Off with ``rewrite_vague`` = false or
    without a session. Raises ConfigError at construction for negative sizes."""

    def __init__(self, store: VectorStore, rcfg: RetrievalSection) -> None:
        for name in ("rewrite_terms", "rewrite_memories", "rewrite_max_terms"):
            if int(getattr(rcfg, name)) < 0:
                raise ConfigError(f"retrieval.{name} must be >= 0", key=f"retrieval.{name}")
        self.store, self.rcfg = store, rcfg

    def rewrite(self, query: str, terms: frozenset[str], scope: Scope, session_id: str | None) -> str | None:
        r = self.rcfg
        if not r.rewrite_vague or not session_id or not VAGUE.search(query) or len(terms) > r.rewrite_max_terms:
            return None
        recent = self.store.scroll(scope.filter(session_id=session_id), limit=r.rewrite_memories,
                                   order_by="created_at", descending=True)
        extra: list[str] = []
        for p in recent:
            for w in surface_words(p.payload.get("content", "")):
                if w not in extra and not w.startswith("[") and not (content_terms(w) <= terms):
                    extra.append(w)
        extra = extra[: r.rewrite_terms]
        return f"{query} {' '.join(extra)}" if extra else None


class QueryPlanner:
    """``plan(query, scope, session_id, ts, now)`` -> :class:`QueryPlan` (one embedding call).
    With a ``pii_key`` (the workspace secret, ``pii.fingerprint_terms``) a phone number, e-mail or
    id the query names adds the keyed search term the write path left for the redacted value
    (:func:`memory_engine.write.pii.fingerprints`) to the keyword terms and the identifiers, so the
    memory it was redacted from is an exact match."""

    def __init__(self, store: VectorStore, embedder: CachedEmbedder, rcfg: RetrievalSection,
                 pii: PiiSettings | None = None, pii_key: bytes = b"",
                 dates: temporal.DateSettings = temporal.DEFAULT_DATES) -> None:
        if rcfg.temporal_weight < 0:
            raise ConfigError("retrieval.temporal_weight must be >= 0", key="retrieval.temporal_weight")
        if rcfg.dialogue_max_chars < 1:
            raise ConfigError("retrieval.dialogue_max_chars must be >= 1", key="retrieval.dialogue_max_chars")
        self.embedder = embedder
        self.rewriter = VagueRewriter(store, rcfg)
        self.temporal = rcfg.temporal_weight > 0
        self.dialogue = rcfg.dialogue_queries
        self.dialogue_max_chars = rcfg.dialogue_max_chars
        self.pii, self.pii_key = pii, pii_key
        self.dates = dates
        self.addressee = rcfg.assistant_needs_addressee
        self.lookup_max_terms = rcfg.relative_lookup_max_terms
        if rcfg.zh_term_prior and rcfg.zh_idf_full <= rcfg.zh_idf_low:
            raise ConfigError("retrieval.zh_idf_full must exceed retrieval.zh_idf_low", key="retrieval.zh_idf_full")
        self.zh_prior = (rcfg.zh_idf_low, rcfg.zh_idf_full, rcfg.zh_idf_min_weight) if rcfg.zh_term_prior else None
        if rcfg.coverage_term_prior and rcfg.zh_idf_full <= rcfg.zh_idf_low:
            raise ConfigError("retrieval.zh_idf_full must exceed retrieval.zh_idf_low", key="retrieval.zh_idf_full")
        self.cover_prior = ((rcfg.zh_idf_low, rcfg.zh_idf_full, rcfg.zh_idf_min_weight) if rcfg.coverage_term_prior
                            else None)

    def plan(self, query: str, scope: Scope, session_id: str | None, ts: float, now: datetime,
             redaction: Redaction | None = None) -> QueryPlan:
        """``redaction``: ``query`` already redacted with this planner's PII settings (None = redact it here)."""
        date_range = temporal.resolve(query, now, self.dates) if self.temporal else None
        said = dialogue_text(query, self.dialogue_max_chars) if self.dialogue else None
        # a conversation of several turns (one labelled turn is a plain question without its label)
        turns = said is not None and "\n" in said
        own = said or query
        terms = content_terms(own) - VAGUE_TERMS
        rewritten = None if turns else self.rewriter.rewrite(own, terms, scope, session_id)
        text = rewritten or own
        route_terms = content_terms(rewritten) if rewritten else terms
        if date_range is not None:
            # the date the query names is matched by the memories' time (retrieve/candidates.py), not by BM25 on
            # its words: '上上周' must not pull in the memory that says '这周', nor '3号' any memory with a 3
            # when the date is all the query names ('what did I do on June 3?'), its words stay but not its
            # numbers: a 3 in 'suite 3' or '-3.25' is no June 3
            route_terms = route_terms - temporal.date_terms(date_range.phrase) or frozenset(
                t for t in route_terms if not any(ch.isdigit() for ch in t))
        # one lookup test for the whole plan: the last user turn (the whole query when it is one line)
        last_lookup = is_lookup(own.rsplit("\n", 1)[-1], self.lookup_max_terms)
        pii_terms = (frozenset(fingerprints(redaction if redaction is not None else redact(query, self.pii), self.pii_key, self.pii))
                     if self.pii_key else frozenset())
        route_terms = route_terms | pii_terms
        weights = zh_term_weights(route_terms, *self.zh_prior) if self.zh_prior else None
        cover_terms = terms or route_terms
        cover_weights = zh_term_weights(cover_terms, *self.cover_prior) if self.cover_prior else None
        return QueryPlan(query=query, text=text, rewritten=rewritten, terms=terms, route_terms=route_terms,
                         term_weights=weights, cover_weights=cover_weights,
                         last_turn_lookup=last_lookup,
                         cover_terms=cover_terms, identifiers=frozenset(identifiers(text)) | pii_terms,
                         date_range=date_range, vector=self.embedder.embed_query(text), session_id=session_id,
                         ts=ts, now=now, relatives=relatives(own) if last_lookup and not turns else frozenset(),
                         dialogue=turns,
                         user_only=self.addressee and not turns and about_user_only(own),
                         to_assistant=self.addressee and not turns and refers_to_assistant(own), dates=self.dates)
