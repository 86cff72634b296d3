"""Entity hop (multi-hop questions): the top hits name entities the query does
not ('my manager is Sarah Lee'); a keyword search for them finds memories one
hop away ('Sarah Lee works in London'). A memory reached that way inherits its
parent's relevance and ranks below the parent (``hop_discount`` x its score).

A link is a shared name (an entity of either memory, or a name introduced by a
naming word: '林静的女儿叫朵朵', 'a dog called Lucky') or at least
``retrieval.hop_min_shared`` shared content words the query does not hold: a
project and its dependency share the project's words ('the checkout redesign
depends on the pricing service'), a dependency and its blocker the dependency's
('支付组的结算接口推迟了'). Chains of ``retrieval.hop_depth`` links are followed
(person -> relation -> attribute; project -> dependency -> blocker): a memory
reached at one hop is searched from in turn, and each step ranks below its parent.

Two links carry no shared word. A Chinese full name and the given name family and friends use
('王悦悦' -> '悦悦', '欧阳娜娜' -> '娜娜'): a person name of a single- or two-character surname
plus a given name of ``retrieval.hop_given_name_chars`` characters links to that given name. And a
memory whose subject is a bare third-person pronoun ('She offered to check on my mom', '他说可以去申请
仲裁') stands for a person named before it, often in another session: it links to the nearest earlier
memory of the owner (at most ``retrieval.hop_antecedent_window`` back) that names a person, the
recency baseline of pronoun resolution (Hobbs 1978; Mitkov, *Anaphora Resolution*, 2002: the most
recent compatible antecedent); compatible means its gender cues agree with the pronoun
(``retrieval.hop_gender_agreement``, :mod:`memory_engine.retrieve.referents`).

A link must stay on one person: a memory that names a surname the top hits already know under another
given name ('Kevin Chen' when the hits name 'Helen Chen') is someone else and is not reached
(``retrieval.hop_name_conflict``). And a question that names a relation path ('我小舅子', 'my mother-in-law')
does not reach a memory about another relative through kinship words alone
(:mod:`memory_engine.retrieve.relations`: '我弟弟还在读研究生' shares only 弟弟 with '我老婆的弟弟叫刘洋' and is the
user's own brother; ``retrieval.relation_paths``).

Beside the keyword search's rows the hop tests the first-stage pool (``retrieval.hop_pool_links``
candidates): the segmenter may fuse a name with its neighbour in a memory's stored terms ('陈浩在').
A single Chinese character links nothing (``retrieval.hop_single_char_links``). A role word of the
question ('my manager', '我领导', a kinship term) stands for the person a kept memory introduces in that
role (``retrieval.hop_role_referents``, :func:`memory_engine.retrieve.referents.role_referents`): that
person's memories are hop targets and chain links under any form of the name (刘总 for 刘建国), and a
memory about an earlier holder of the role or another person of the referent's surname leaves the
answer. When the top hit names nothing the question names, the chain focus anchors on the chain
(``retrieval.hop_chain_focus_chain_anchor``)."""

from __future__ import annotations

import math
import re
from dataclasses import replace
from functools import lru_cache
from typing import Any

import numpy as np

from ..config import RetrievalSection
from ..errors import ConfigError
from ..store.base import ScoredPayload, StoreFilter, VectorStore
from ..text import (
    _CJK,
    RECONFIGURE_HOOKS,
    _jieba,
    _jieba_lock,
    content_terms,
    entities,
    relation_nouns,
    relatives,
    sparse_query,
    zh_names,
)
from .admission import Admission
from .candidates import CandidateBuilder, is_cjk
from .fusion import Candidate, rank_key
from .query import QueryPlan
from .referents import (
    agrees,
    full_names,
    gender_cues,
    name_conflict,
    named_terms,
    people_of,
    person_names,
    pronoun_gender,
    role_referents,
    same_person,
    zh_surname,
)
from .relations import OTHER, STATES, path_fit
from .routes import HOP_CHANNEL

__all__ = ["EntityHop", "given_names", "hop_terms", "named_terms", "person_names", "pronoun_led"]

#: a memory whose subject is a bare third-person singular pronoun: the sentence starts with it (after an
#: optional connective) in English, or it is the first word in Chinese ('他说…', '她下周…')
_PRONOUN_LED = re.compile(r"^\s*(?:(?:and|but|so|then|also)\s+)?(?:he|she)\b|^\s*[他她]", re.IGNORECASE)

#: jieba part-of-speech flags of nouns (common, proper, verbal): what a Chinese memory is about
_ZH_NOUNS = ("n", "nz", "vn", "nr", "ns", "nt", "nrt", "nw")


#: English honorific abbreviations (the closed class of titles before a name, Wikipedia "English honorifics"):
#: 'Dr.' names no one, so two memories about two doctors share no person through it
_HONORIFICS = frozenset({"mr", "mrs", "ms", "miss", "mx", "dr", "prof", "sir", "madam"})


def _split_in(term: str, query: str) -> bool:
    """Whether a Chinese ``term`` of two or more characters is in ``query`` with words between its characters:
    a separable verb (离合词, e.g. 上线 -> 上不了线, 见面 -> 见了一面; Chao, *A Grammar of Spoken Chinese*, 1968)
    the segmenter splits in the query, so the query holds the word though not the term."""
    if len(term) < 2 or not _CJK.fullmatch(term):
        return False
    i = 0
    for ch in query:
        if i < len(term) and ch == term[i]:
            i += 1
    return i == len(term)


def hop_terms(content: str) -> frozenset[str]:
    """The words a hop searches for: named entities (:func:`memory_engine.text.entities`) and,
    in Chinese, every noun of two or more characters. Chinese has no capitals to mark a name
    and jieba tags only people, places and organisations, so events and things
    ('教育创新研讨会', '洗碗机') would never link two memories; BM25's IDF then prefers the
    rare ones over generic nouns ('时间'). A relation noun (:func:`memory_engine.text.relation_nouns`: 下属,
    邻居, 表弟) counts whatever jieba tags it: it names the person the memory is about."""
    out = set(entities(content))
    if _CJK.search(content):
        import jieba.posseg as pseg

        _jieba()
        with _jieba_lock:
            nouns = [w.word for w in pseg.cut(content) if w.flag in _ZH_NOUNS and len(w.word) > 1]
        # a relation noun is what the memory is about even when the tagger reads it as a verb ('我的下属是个警察')
        for n in (*nouns, *relation_nouns(content)):
            out |= content_terms(n)
    return frozenset(out)


def given_names(names: frozenset[str], chars: int) -> frozenset[str]:
    """The given names of Chinese full names among ``names``: the last ``chars`` characters of a CJK name of
    ``chars`` + 1 or ``chars`` + 2 characters (a one- or two-character surname: 王悦悦 -> 悦悦, 欧阳娜娜 -> 娜娜);
    empty when ``chars`` is 0. A two-character name (刘洋) keeps its surname: one character alone names no one."""
    if chars < 1:
        return frozenset()
    return frozenset(n[-chars:] for n in names if _CJK.fullmatch(n) and chars < len(n) <= chars + 2)


def pronoun_led(content: str) -> bool:
    """Whether the memory's subject is a bare third-person pronoun ('She offered…', '他说…'): who 'she' is was
    said before. Other names in it do not say who the subject is ('She … while I'm in Denver')."""
    return bool(_PRONOUN_LED.search(content))


@lru_cache(maxsize=65_536)
def _link_words(content: str, given_chars: int = 0, nouns: bool = True) -> tuple[frozenset[str], frozenset[str]]:
    """(names, words) of a memory for linking: names = entities, introduced names, the given names of its
    Chinese full names (:func:`given_names`) and, when ``nouns``, every Chinese noun (:func:`hop_terms`);
    words = every content term. Without ``nouns`` a Chinese common noun is one word among the others: a
    compound ('支付网关', '研讨会') still brings two terms, a lone generic one ('公司' of '分公司') no link.
    Cached: a store's memories recur across queries and jieba's tagger costs about a millisecond a sentence."""
    names = (hop_terms(content) if nouns else entities(content)) | named_terms(content)
    return names | given_names(person_names(content), given_chars), content_terms(content)


RECONFIGURE_HOOKS.append(_link_words)


def _people_count(content: str, names: frozenset[str]) -> int:
    """How many people ``content`` names: each full name once ('Helen Chen' is one), every other person word
    (:func:`person_names`) once. A memory of several people ('我姐李娜嫁给了周涛') has gender cues of one of
    them only, so they say nothing about the others."""
    full = full_names(content)
    parts = {t for g, s in full for t in (g, s, s + g)}
    return len(full) + len({n for n in names if n not in parts})


def _names_person(content: str, person: str) -> bool:
    """Whether ``content`` names ``person`` (a word of :func:`people_of`) under any form of the name
    (:func:`same_person`: 刘总 for 刘建国)."""
    return any(same_person(p, person) for p in people_of(content))


class EntityHop:
    """``enabled`` when ``retrieval.entity_hops`` and ``hop_limit`` > 0. ``hop(parents, fused,
    payloads, flt, admit, plan)`` keyword-searches the entities of each parent's content
    (minus the query's terms; the rows ``admit`` refuses left out,
    :class:`~memory_engine.retrieve.admission.Admission`) and returns ``{memory id: (candidate, parent id)}`` for at most
    ``hop_limit`` memories whose own relevance is below the parent's; each candidate carries
    the parent's relevance in ``exact_match`` and a ``hop`` route rank. New rows' payloads are
    added to ``payloads``. ``discount(fused, hopped, parent_scores)`` caps a hopped memory's
    fused score at ``hop_discount`` x its parent's. Raises ConfigError for a
    ``hop_discount`` outside [0, 1] or ``hop_limit`` < 0."""

    def __init__(self, store: VectorStore, builder: CandidateBuilder, rcfg: RetrievalSection) -> None:
        if not 0.0 <= rcfg.hop_discount <= 1.0:
            raise ConfigError("retrieval.hop_discount must be in [0, 1]", key="retrieval.hop_discount")
        if rcfg.hop_limit < 0 or rcfg.hop_parents < 1:
            raise ConfigError("retrieval.hop_limit must be >= 0 and hop_parents >= 1", key="retrieval.hop_limit")
        if rcfg.hop_depth < 1 or rcfg.hop_min_shared < 1:
            raise ConfigError("retrieval.hop_depth and hop_min_shared must be >= 1", key="retrieval.hop_depth")
        self.store, self.builder = store, builder
        self.enabled = bool(rcfg.entity_hops and rcfg.hop_limit)
        self.limit, self.parents, self.discount_factor = rcfg.hop_limit, rcfg.hop_parents, rcfg.hop_discount
        self.floor = rcfg.floor
        self.depth, self.min_shared = rcfg.hop_depth, rcfg.hop_min_shared
        if rcfg.hop_given_name_chars < 0 or rcfg.hop_antecedent_window < 0:
            raise ConfigError("retrieval.hop_given_name_chars and hop_antecedent_window must be >= 0",
                              key="retrieval.hop_antecedent_window")
        self.given_chars, self.antecedent_window = rcfg.hop_given_name_chars, rcfg.hop_antecedent_window
        self.gender_agreement, self.check_names = rcfg.hop_gender_agreement, rcfg.hop_name_conflict
        self.noun_names = rcfg.hop_noun_names
        self.by_query = rcfg.hop_rank_by_query
        self.relation_paths = rcfg.relation_paths
        self.chain_focus, self.focus_share = rcfg.hop_chain_focus, rcfg.hop_chain_focus_share
        self.anchor_share = rcfg.hop_chain_focus_anchor_share
        self.chain_anchor = rcfg.hop_chain_focus_chain_anchor
        self.single_char_links, self.substring_names = rcfg.hop_single_char_links, rcfg.hop_substring_names
        self.role_referents, self.role_window = rcfg.hop_role_referents, rcfg.hop_role_window
        self.person_conflict = rcfg.hop_person_conflict
        if rcfg.hop_pool_links < 0:
            raise ConfigError("retrieval.hop_pool_links must be >= 0", key="retrieval.hop_pool_links")
        self.pool_links = rcfg.hop_pool_links
        # a search for every word of the parent ranks rows sharing one common word high: read as many rows as a
        # route does, then keep only the linked ones
        self.search_limit = rcfg.route_limit

    def hop(self, kept: list[Candidate], fused: list[Candidate], payloads: dict[str, dict[str, Any]],
            flt: StoreFilter, admit: Admission, plan: QueryPlan) -> dict[str, tuple[Candidate, str]]:
        by_id = {c.memory_id: c for c in fused}
        out: dict[str, tuple[Candidate, str]] = {}
        frontier = kept[: self.parents]
        seen = {c.memory_id for c in frontier}
        # the people the chain is about: full names of the hits it starts from, then of each memory it reaches
        known: set[tuple[str, str]] = set()
        for c in frontier:
            known |= full_names(str(payloads[c.memory_id].get("content", "")))
        ref, _ = self.referents(kept, payloads, plan)
        if ref:
            # the person the query's role word stands for ('我领导' -> 刘建国): the memories naming them (刘总 as well)
            # are reached from the memory that introduced them, wherever the keyword search ranks them
            person = next(iter(ref))
            intro = next(c for c in kept if _names_person(self._text(payloads, c.memory_id), person))
            for c in fused:
                if len(out) >= self.limit:
                    break
                if c.memory_id in seen or not _names_person(self._text(payloads, c.memory_id), person):
                    continue
                p = ScoredPayload(c.memory_id, 0.0, payloads[c.memory_id])
                h = self._linked(p, len(out) + 1, intro, by_id, payloads, admit, plan, {})
                if h is not None:
                    out[h.memory_id] = (h, intro.memory_id)
                    seen.add(h.memory_id)
        for _ in range(self.depth):
            reached: list[Candidate] = []
            for parent in frontier:
                if len(out) >= self.limit:
                    break
                for c in self._links(parent, by_id, payloads, flt, admit, plan, seen, self.limit - len(out), known):
                    out[c.memory_id] = (c, parent.memory_id)
                    seen.add(c.memory_id)
                    reached.append(c)
                    known |= full_names(str(payloads[c.memory_id].get("content", "")))
            if not reached or len(out) >= self.limit:
                break
            frontier = reached[: self.parents]
        return out

    def _links(self, parent: Candidate, by_id: dict[str, Candidate], payloads: dict[str, dict[str, Any]],
               flt: StoreFilter, admit: Admission, plan: QueryPlan, seen: set[str], room: int,
               known: set[tuple[str, str]] | None = None) -> list[Candidate]:
        """The memories linked to ``parent`` (the person a pronoun-led parent stands for, a shared name, or
        >= ``min_shared`` shared words outside the query), the antecedent first, then the ones nearest the query
        (raw dense cosine; BM25 rank breaks ties) when ``retrieval.hop_rank_by_query``, else best BM25 first, at
        most ``room``, each carrying the parent's relevance. With ``hop_name_conflict`` on, a memory naming a
        surname of ``known`` ((given, surname) pairs) under another given name is left out."""
        parent_pl = payloads[parent.memory_id]
        out: list[Candidate] = []
        ante = self._antecedent(parent_pl, flt)
        if ante is not None and ante.id not in seen and room > 0:
            avec = {} if ante.id in payloads else {
                q.id: q.dense for q in self.store.retrieve([ante.id], with_vectors=True)}
            c = self._linked(ante, 1, parent, by_id, payloads, admit, plan, avec)
            if c is not None:
                out.append(c)
                seen = seen | {ante.id}
        names, words = _link_words(parent_pl.get("content", ""), self.given_chars, self.noun_names)
        names, words = names - plan.terms, words - plan.terms
        if not names and len(words) < self.min_shared:
            return out
        rows = self.store.search_sparse(sparse_query(names | words), flt, self.search_limit + len(seen))
        if self.pool_links:
            # the first-stage pool, too: a name the segmenter fused with its neighbour in the stored terms
            # ('陈浩在一家药企' indexes 陈浩在, not 陈浩) is missed by the keyword search but not by the dense route
            found = {p.id for p in rows}
            rows = [*rows, *(ScoredPayload(c.memory_id, 0.0, payloads[c.memory_id])
                             for c in list(by_id.values())[: self.pool_links]
                             if c.memory_id not in found and c.memory_id in payloads)]
        missing = [p.id for p in rows if p.id not in payloads or (
            self.by_query and "vector" not in getattr(by_id.get(p.id), "route_scores", {}))]
        vecs = {p.id: p.dense for p in self.store.retrieve(missing, with_vectors=True)} if missing else {}
        linked: list[tuple[float, int, Candidate]] = []
        for rank, p in enumerate(rows, start=1):
            if p.id in seen:
                continue
            if not self.by_query and len(linked) >= room:
                break
            c_names, c_words = _link_words(str(p.payload.get("content", "")), self.given_chars,
                                          self.noun_names)
            shared = self._linking(((words | names) & (c_words | c_names)) - plan.terms)
            if not (shared & (names | c_names)) and len(shared) < self.min_shared and not (
                    self._written_in(names, str(p.payload.get("content", "")), plan)
                    or self._written_in(c_names, str(parent_pl.get("content", "")), plan)):
                continue  # one common word ('quarter', '下周') is no link
            if self._other_people(parent_pl.get("content", ""), str(p.payload.get("content", "")), shared):
                continue  # common words between two memories about two people ('小刘下午都在工位' / '刘经理…下午')
            if self.check_names and known and name_conflict(known, full_names(str(p.payload.get("content", "")))):
                continue  # the shared surname stands for someone else here ('Kevin Chen' when 'Helen Chen' is asked)
            if (self.relation_paths and all(relatives(t) for t in shared)
                    and path_fit(plan.query, str(p.payload.get("content", ""))) == OTHER):
                # a kinship word is a relation, not a person: '弟弟' links '我老婆的弟弟叫刘洋' to the user's own
                # brother only in words; a name ('Mia') links whoever else the memory mentions (retrieve/relations.py)
                continue
            c = self._linked(p, rank, parent, by_id, payloads, admit, plan, vecs)
            if c is not None:
                linked.append((self._query_cosine(p.id, by_id, vecs, plan), rank, c))
        if self.by_query:
            # the parent met the query's condition ('那个45岁的人'); of the memories about the same subject, the
            # ones that answer the rest of the query ('叫什么名字') come first, not the ones sharing most words
            linked.sort(key=lambda t: (-t[0], t[1]))
        return out + [c for _, _, c in linked[:room]]

    @staticmethod
    def _query_cosine(mid: str, by_id: dict[str, Candidate], vecs: dict[str, Any], plan: QueryPlan) -> float:
        """The raw query cosine of a linked memory: the dense route's score when it returned it, else from its
        vector (0 when neither is known). Raw, not rescaled: below the model's unrelated baseline the rescaled
        similarity is 0 for most attribute sentences, and their order there still says which one is nearer."""
        c = by_id.get(mid)
        if c is not None and "vector" in c.route_scores:
            return float(c.route_scores["vector"])
        v = vecs.get(mid)
        return float(np.dot(np.asarray(v, dtype=np.float32), plan.vector)) if v is not None else 0.0

    def _antecedent(self, parent_pl: dict[str, Any], flt: StoreFilter) -> ScoredPayload | None:
        """The person a pronoun-led memory stands for: the nearest earlier memory of the owner, at most
        ``antecedent_window`` back, that names a person (:func:`person_names`) whose gender agrees with the
        pronoun when ``gender_agreement`` is on (a memory naming one person whose gender cues are all the
        other gender is skipped: '她推荐…' does not stand for '我哥周浩'), or None (window 0 = off, the parent
        names its own subject, or no earlier memory within the window names anyone who agrees)."""
        content = str(parent_pl.get("content", ""))
        created = parent_pl.get("created_at")
        if not self.antecedent_window or created is None or not pronoun_led(content):
            return None
        before = replace(flt, created_before=float(created) - 1e-6)
        pronoun = pronoun_gender(content) if self.gender_agreement else None
        for p in self.store.scroll(before, limit=self.antecedent_window, order_by="created_at", descending=True):
            text = str(p.payload.get("content", ""))
            people = person_names(text)
            if not people:
                continue
            if pronoun is None or _people_count(text, people) > 1 or agrees(pronoun, gender_cues(text)):
                return p
        return None

    def _linked(self, p: ScoredPayload, rank: int, parent: Candidate, by_id: dict[str, Candidate],
                payloads: dict[str, dict[str, Any]], admit: Admission, plan: QueryPlan,
                vecs: dict[str, Any]) -> Candidate | None:
        """``p`` as a memory reached from ``parent`` (hop route rank ``rank``), carrying the parent's relevance,
        or None when ``admit`` refuses it (another owner's, flagged, may not answer) or it passes the floor on
        its own."""
        if not admit.admits(p):
            return None
        inherited = parent.relevance
        c = by_id.get(p.id)
        if c is None:
            v = vecs.get(p.id)
            cos = float(np.dot(np.asarray(v, dtype=np.float32), plan.vector)) if v is not None else 0.0
            c = self.builder.candidate(p.id, p.payload, cos, plan.cover_terms, {}, {}, False, plan.session_id,
                                       plan.ts, is_cjk(plan.query), plan.query,
                                       is_cjk(plan.query) and not plan.last_turn_lookup)
        if c.relevance >= inherited or c.relevance >= self.floor:
            return None  # it passes on its own: the hop would only cap its score below the parent
        payloads.setdefault(p.id, p.payload)
        ranks = {**c.route_ranks, HOP_CHANNEL: rank}
        scores = {**c.route_scores, HOP_CHANNEL: float(p.score)}
        return replace(c, exact_match=max(c.exact_match, inherited), route_ranks=ranks, route_scores=scores)

    def _link(self, a: str, b: str, plan: QueryPlan) -> bool:
        """Whether memories ``a`` and ``b`` (contents) are linked as the hop links them: a shared name, or at
        least ``min_shared`` shared words, in both cases outside the query's terms."""
        return self._link_names(a, b, plan) is not None

    def _linking(self, shared: frozenset[str]) -> frozenset[str]:
        """The ``shared`` terms that may link two memories: without ``retrieval.hop_single_char_links``, no
        single Chinese character (a suffix or classifier the segmenter leaves alone: 店 of 4S店 and 洗车店, 家 of
        那家), which names no one thing."""
        if self.single_char_links:
            return shared
        return frozenset(t for t in shared if not (len(t) == 1 and _CJK.match(t)))

    def _link_names(self, a: str, b: str, plan: QueryPlan) -> frozenset[str] | None:
        """The names through which memories ``a`` and ``b`` are linked (:meth:`_link`; empty when they are
        linked by ``min_shared`` common words alone), or None when they are not linked."""
        a_names, a_words = _link_words(a, self.given_chars, self.noun_names)
        b_names, b_words = _link_words(b, self.given_chars, self.noun_names)
        shared = {t for t in self._linking(((a_names | a_words) & (b_names | b_words)) - plan.terms)
                  if t not in _HONORIFICS and not _split_in(t, plan.query)}
        if self._other_people(a, b, shared):
            return None
        via = frozenset(shared & (a_names | b_names)) or self._written_in(a_names, b, plan) or self._written_in(
            b_names, a, plan)
        return via if via or len(shared) >= self.min_shared else None

    def _written_in(self, names: frozenset[str], text: str, plan: QueryPlan) -> frozenset[str]:
        """With ``retrieval.hop_substring_names``, the Chinese ``names`` (two or more characters, outside the
        query's terms) written verbatim in ``text``: the segmenter cuts one name two ways in two sentences
        ('爱宠诊所搬到' -> 爱宠, '在爱宠诊所打' -> 爱 / 宠), so the terms miss a name both memories write."""
        if not self.substring_names:
            return frozenset()
        return frozenset(n for n in names if len(n) > 1 and _CJK.fullmatch(n) and n not in plan.terms
                         and not _split_in(n, plan.query) and n in text)

    def _other_people(self, a: str, b: str, shared: set[str] | frozenset[str]) -> bool:
        """Whether, with ``retrieval.hop_person_conflict``, memories ``a`` and ``b`` are about two different people:
        each names a person by surname and prefix or title (:func:`memory_engine.text.zh_names`: jieba's person
        tag also falls on 柯基 and 过敏), they name none in common and the ``shared`` terms hold none of them."""
        if not self.person_conflict:
            return False
        pa, pb = zh_names(a), zh_names(b)
        return bool(pa and pb and not (pa & pb) and not (set(shared) & (pa | pb)))

    @staticmethod
    def _text(payloads: dict[str, dict[str, Any]], mid: str) -> str:
        return str(payloads.get(mid, {}).get("content", ""))

    def referents(self, kept: list[Candidate], payloads: dict[str, dict[str, Any]],
                  plan: QueryPlan) -> tuple[frozenset[str], frozenset[str]]:
        """(referent, others) of the role words of a lookup (:func:`referents.role_referents` over the kept
        memories), both empty when ``retrieval.hop_role_referents`` is off or the query is no lookup."""
        if not self.role_referents or not plan.lookup:
            return frozenset(), frozenset()
        mems = [(self._text(payloads, c.memory_id), float(payloads.get(c.memory_id, {}).get("created_at") or 0.0))
                for c in kept]
        ref, others = role_referents(plan.query, mems, self.role_window)
        if ref or not self.relation_paths:
            return ref, others
        # a relation path ('我表妹的老公', "my sister's husband"): the one person a memory stating the path names is
        # the referent ('我表妹国庆嫁给了孙磊'); one named by a memory about another relative is someone else in a
        # like relation ('我姐嫁给了刘洋', retrieve/relations.py)
        states: list[tuple[float, str]] = []
        other: list[str] = []
        for content, created in mems:
            people = people_of(content)
            if len(people) != 1:
                continue
            fit = path_fit(plan.query, content)
            if fit == STATES:
                states.append((created, next(iter(people))))
            elif fit == OTHER:
                other.append(next(iter(people)))
        if not states:
            return frozenset(), frozenset()
        person = max(states)[1]
        return frozenset({person}), frozenset(p for p in other if not same_person(p, person))

    def _role_conflicts(self, kept: list[Candidate], payloads: dict[str, dict[str, Any]],
                        plan: QueryPlan) -> tuple[str | None, set[str]]:
        """(the referent of the query's role word, the kept memories about another person in that role): a
        memory naming people, none of them the referent, and one of them an earlier holder of the role ('my
        manager Tom' when the newest says 'my manager is Priya now') or, with ``hop_person_conflict``, a
        surname form of the referent's surname that is someone else ('张姐' beside the referent '张总')."""
        ref, others = self.referents(kept, payloads, plan)
        if not ref:
            return None, set()
        person = next(iter(ref))
        off: set[str] = set()
        for c in kept:
            people = people_of(self._text(payloads, c.memory_id))
            if not people or any(same_person(p, person) for p in people):
                continue
            if any(p in others or (self.person_conflict and _CJK.match(p) and _CJK.match(person)
                                   and zh_surname(p) == zh_surname(person)) for p in people):
                off.add(c.memory_id)
        return person, off

    def focus(self, kept: list[Candidate], below: list[Candidate], payloads: dict[str, dict[str, Any]],
              plan: QueryPlan) -> tuple[list[Candidate], list[Candidate]]:
        """(kept, below) with the memories off the chain moved below, when ``retrieval.hop_chain_focus``.

        The chain is the top hit plus every kept memory linked to it or to a memory already on the chain
        (:meth:`_link`, in rank order). Only when the chain has a second memory is the question read as a
        chained one; then a kept memory linked to none of it whose relevance is below ``hop_chain_focus_share``
        x the top hit's is about another subject that shares the query's generic words (another project's
        review through 系统, the user's own dentist through 'Dr.') and is dropped, unless it holds at least
        ``hop_chain_focus_anchor_share`` of the names the question shares with the top hit (the anchor; at least
        one name, ceil(share x |anchor|): then it is about the same subject). Link words leave out
        the query's terms, English honorifics and Chinese terms the query holds split (:func:`_split_in`).
        Nothing changes with fewer than three kept memories, when the top hit links to nothing, when it holds
        no name of the question, or when the query is no lookup (:attr:`QueryPlan.lookup`: a conversation or a
        statement of the user's present, '清明快到了，我想回老家给老人扫扫墓', asks for an association, which shares
        no word with the top hit by nature)."""
        if not self.chain_focus or not plan.lookup:
            return kept, below
        person, other = self._role_conflicts(kept, payloads, plan)
        if other:  # the other manager, the other 张: about someone else than the role's person
            below = sorted([*below, *(c for c in kept if c.memory_id in other)], key=rank_key)
            kept = [c for c in kept if c.memory_id not in other]
        if len(kept) < 3:
            return kept, below
        text = {c.memory_id: str(payloads.get(c.memory_id, {}).get("content", "")) for c in kept}
        chain = [kept[0].memory_id]
        rest = list(kept[1:])
        via: set[str] = set()  # the names the chain's links go through
        grew = True
        while grew:  # a link may reach the chain through a memory ranked below it (blocker below dependency)
            grew = False
            for c in list(rest):
                links = [v for m in chain if (v := self._link_names(text[c.memory_id], text[m], plan)) is not None
                         or (person and _names_person(text[c.memory_id], person)
                             and _names_person(text[m], person) and (v := frozenset({person})))]
                if links:
                    chain.append(c.memory_id)
                    rest.remove(c)
                    via.update(*links)
                    grew = True
        if len(chain) < 2:
            return kept, below
        # the subject the question names and the top hit holds ('Biscuit', '老周', '会员系统'): a chained question
        # starts from it; a memory holding all of it is about the same subject, linked or not
        q_names = _link_words(plan.query, self.given_chars, self.noun_names)[0]
        anchor = q_names & _link_words(text[chain[0]], self.given_chars, self.noun_names)[0]
        fallback = not anchor and self.chain_anchor
        if fallback:
            # the top hit holds no name of the question ('Riverside Vets texted, booster jabs on the 14th' for
            # 'when is Biscuit's next jab?'): the subject is the question's names another memory of the chain holds,
            # else the names the chain's links go through ('Calm' of 'my therapist suggested the Calm app' /
            # 'Calm renews on March 12' for 'the app my therapist recommended')
            anchor = q_names & frozenset().union(
                *(_link_words(text[m], self.given_chars, self.noun_names)[0] for m in chain)) or frozenset(via)
        if not anchor:
            return kept, below
        # fused, not relevance: the top hit may be the chain's start that only names the subject ('小雨的儿子叫豆豆',
        # low relevance) while a same-subject distractor matches the query's words better ('我女儿对花粉过敏')
        bar = self.focus_share * kept[0].fused
        # same subject: holds at least hop_chain_focus_anchor_share of the anchor (at least one name). The anchor
        # also holds the attribute asked for ('地点' of '医疗前沿对话会的地点是江苏南京'), which the second evidence
        # message of the subject lacks ('我将要参加医疗前沿对话会'): all of it (share 1) drops that message
        need = max(1, math.ceil(self.anchor_share * len(anchor) - 1e-9))
        # an anchor from the chain is weaker evidence of the subject than one the top hit shares with the question:
        # a memory as relevant on its own as the top hit stays ('I work at Shopee' beside a correction about the
        # sister's employer, which names the chain's 'Grab')
        # and, with the fallback, a memory that holds a name of the question the chain lacks is about the subject
        # asked for ('John: three times a week' for 'how often does John work out?' beside a chain of Maria's turns
        # linked by her name alone): the fallback anchor only stands in for names the question does not give
        words = {c.memory_id: _link_words(text[c.memory_id], self.given_chars, self.noun_names)[0] for c in rest}
        off = {c.memory_id for c in rest if c.fused < bar
               and len(anchor & words[c.memory_id]) < need
               and not (fallback and (c.relevance >= kept[0].relevance or q_names & words[c.memory_id]))}
        if not off:
            return kept, below
        return [c for c in kept if c.memory_id not in off], sorted(
            [*below, *(c for c in kept if c.memory_id in off)], key=rank_key)

    def discount(self, refused: list[Candidate], hopped: dict[str, tuple[Candidate, str]],
                 parent_score: dict[str, float]) -> list[Candidate]:
        """A memory reached through an entity ranks below the hit that named it (a second hop below the
        first: caps follow the chain in the order the hop reached them)."""
        fused = {c.memory_id: c.fused for c in refused}
        capped: dict[str, float] = {}
        for mid, (_, parent) in hopped.items():  # insertion order: a parent is capped before its child
            if mid in fused:
                base = capped.get(parent, parent_score.get(parent, fused.get(parent, 0.0)))
                capped[mid] = min(fused[mid], self.discount_factor * base)
        return sorted((replace(c, fused=capped[c.memory_id]) if c.memory_id in capped else c for c in refused),
                      key=rank_key)
