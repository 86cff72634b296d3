"""Candidate assembly: the rows of every route become one :class:`Candidate`
per memory with everything fusion needs (rescaled similarity, keyword coverage,
exact/identifier match, metadata match, importance, age, half-life, route ranks,
source weight, date match), and the per-candidate rules that adjust it
(identifier mismatch, seed 004's pending values)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import numpy as np

from ..config import IntentSection, KeywordScale, RetrievalSection, SupersedeMode, WriteSection
from ..embedding import CachedEmbedder, rescale_similarity
from ..errors import ConfigError
from ..models import MemoryStatus, Source
from ..store.base import ScoredPayload, VectorStore
from ..text import (
    _CJK,
    asks,
    content_terms,
    is_lookup,
    keyword_coverage,
    kin_pairs,
    kin_phrase_terms,
    kin_term,
    others_relatives,
    possessor,
    relative_chains,
    relative_words,
    relatives,
    stem_offset,
    weighted_coverage,
)
from ..write.categories import AnswerTypes, about_other_person, categories_of
from . import temporal
from .admission import Admission
from .calibration import DenseBackground, QueryBackground, gate_similarity
from .contrast import contrasts
from .crosslang import (
    FamilySettings,
    cross_coverage,
    family_coverage,
    memory_families,
    query_families,
    zh_cores,
)
from .fusion import Candidate
from .query import QueryPlan
from .relations import OTHER, STATES, path_fit

__all__ = ["CandidateBuilder", "RoutePool", "names_speaker", "pool_routes"]

Payload = dict[str, Any]


def is_cjk(text: str) -> bool:
    """True when at least 30% of the non-space characters of ``text`` are CJK ideographs. (``str.split()``
    drops exactly the characters ``str.isspace`` names, in C: a retrieve asks this of every candidate.)"""
    chars = len("".join(text.split()))
    return chars > 0 and len("".join(_CJK.findall(text))) >= 0.3 * chars


def cjk_coverage(q_terms: frozenset[str], doc_terms: Any, content: str,
                 weights: Mapping[str, float] | None = None) -> float:
    """Keyword coverage in [0, 1] where a Chinese query term also counts when it occurs inside the
    memory's text: jieba may cut the memory differently ('猫' vs '猫咪', '快递' inside '寄快递'),
    and a one-character query has nothing else to match on. ``weights``: term -> weight (QueryPlan.cover_weights,
    retrieval.coverage_term_prior; a term it lacks weighs 1): the weighted share held; None = the plain share."""
    if not q_terms:
        return 0.0
    doc = set(doc_terms)
    held = [t for t in q_terms if t in doc or (_CJK.fullmatch(t) is not None and t in content)]
    if weights is None:
        return len(held) / len(q_terms)
    total = sum(weights.get(t, 1.0) for t in q_terms)
    return sum(weights.get(t, 1.0) for t in held) / total if total > 0 else 0.0


def names_speaker(query: str, speaker: str) -> bool:
    """Whether ``query`` names ``speaker`` (a participant of a stored conversation): the name as a
    whole word, case-insensitive ('Where did Priya go hiking?' names 'priya', 'Priyanka' does not),
    or, for a name written in CJK characters, anywhere in the query ('小林上周末去哪儿' names '小林':
    Chinese has no spaces between words). An empty speaker is never named."""
    name = speaker.strip()
    if not name:
        return False
    if _CJK.search(name):
        return name in query
    return re.search(r"(?<!\w)" + re.escape(name) + r"(?!\w)", query, re.IGNORECASE) is not None


class RoutePool:
    """The union of the routes' rows: ``payloads`` by id (first seen order), per-id
    ``ranks``/``scores`` by channel (1-based rank), and the ids of the fact channel."""

    def __init__(self) -> None:
        self.payloads: dict[str, Payload] = {}
        self.ranks: dict[str, dict[str, int]] = {}
        self.scores: dict[str, dict[str, float]] = {}
        self.fact_ids: set[str] = set()


#: channels whose scores are similarities, so that equal scores are ties (:func:`pool_routes`)
TIED_CHANNELS = frozenset({"vector", "keyword"})


def pool_routes(channels: Mapping[str, list[ScoredPayload]], admit: Admission) -> RoutePool:
    """Merge channel lists (each best first) into a :class:`RoutePool`, skipping the rows ``admit``
    refuses (another owner's, flagged, the assistant's word on the user:
    :class:`memory_engine.retrieve.admission.Admission`). A fact row counts in ``fact_ids`` either way.
    Rows of a similarity channel (:data:`TIED_CHANNELS`: dense, BM25) with the same score share the rank of the
    first of them (competition ranking, '1224'): the store returns exact ties (two memories of the same BM25
    score) in an order of its own (random ids, segment layout), which made rank-based fusion (RRF) rank the same
    data differently from run to run. The other channels' order is their own (recent: by time; fact: by key)."""
    pool = RoutePool()
    for channel, rows in channels.items():
        rank, last = 0, None
        for i, p in enumerate(rows, start=1):
            if channel not in TIED_CHANNELS or last is None or float(p.score) != last:
                rank, last = i, float(p.score)
            if channel == "fact":
                pool.fact_ids.add(p.id)
            if not admit.admits(p):
                continue
            pool.payloads[p.id] = p.payload
            pool.ranks.setdefault(p.id, {})[channel] = rank
            pool.scores.setdefault(p.id, {})[channel] = float(p.score)
    return pool


def member_evidence(membership: float | None, icfg: IntentSection, answer: bool = False) -> float:
    """How much of ``intent.relevance`` a memory found by query-time category membership (the intent route's
    score, None = not found that way) earns, in [0, 1]: a linear ramp from ``intent.member_min`` (0) to
    ``intent.member_full`` (1); with ``answer`` (an answer type's membership) from ``intent.answer_member_min`` to
    ``intent.answer_member_full``. A write-time tag of the routed category earns 1. The floor then sees the
    noisy-OR of this and the memory's own similarity (:attr:`Candidate.relevance`): a memory barely nearer the
    category than the reject class needs some similarity to the request as well."""
    if membership is None:
        return 0.0
    lo, hi = (icfg.answer_member_min, icfg.answer_member_full) if answer else (icfg.member_min, icfg.member_full)
    if hi <= lo:
        return 1.0 if membership >= lo else 0.0
    return float(min(1.0, max(0.0, (membership - lo) / (hi - lo))))


class CandidateBuilder:
    """Turns pooled rows into candidates. ``candidate(...)`` scores one payload against a
    query (the entity hop reuses it); ``assemble(pool, plan)`` builds every candidate of a
    pool, fetching vectors for rows the dense route did not score, and applies:

    * identifier mismatch: the query names an identifier the memory lacks ->
      similarity and coverage x ``retrieval.identifier_mismatch``;
    * relative mismatch: a question names relatives (舅舅, daughter) and the memory names only
      other ones (姑姑, son), or the question asks about a relative through another (我老婆的弟弟) and
      the memory names that relative only as the user's own (我弟弟, without the wife) -> similarity,
      coverage, keyword and category evidence x ``retrieval.relative_mismatch``; a question through a relation path ('我姐夫',
      'my mother-in-law') and a memory that names relatives but not the path (retrieve/relations.py) -> also
      the category evidence x ``retrieval.relation_path_mismatch``, and no relevance borrowed from neighbours;
    * entity mismatch: a lookup of at most ``retrieval.entity_max_terms`` content terms asks about an entity the
      memory does not name while the memory names another
      of the same kind in the same frame (the dentist / the vet appointment, retrieve/contrast.py) ->
      similarity, coverage and keyword x ``retrieval.entity_mismatch``;
    * date match: the memory's event time or the (local) day it was written overlaps the
      query's date range -> ``temporal_match`` = 1 (``retrieval.told_day_match`` when only the written day does
      and the memory reports an earlier day: 'yesterday I renewed my passport'), and the query's date words count as
      covered (:func:`memory_engine.retrieve.temporal.coverage_with_date`); once one candidate matches
      the date, the others that name a day of their own (an event time) have similarity, coverage and
      keyword x ``retrieval.date_mismatch``;
    * pending values (seed 004): an unconfirmed old value shows only when its relevance is
      >= ``write.supersede_strong_similarity``, weighted by ``retrieval.inferred_weight``.

    Raises ConfigError at construction for weights outside [0, 1].
    """

    def __init__(self, store: VectorStore, embedder: CachedEmbedder, rcfg: RetrievalSection,
                 wcfg: WriteSection, cjk_baseline: float | None = None, icfg: IntentSection | None = None,
                 cross_baseline: float | None = None) -> None:
        for name in ("identifier_mismatch", "relative_mismatch", "entity_mismatch", "date_mismatch", "inferred_weight",
                     "user_stated_weight"):
            if not 0.0 <= float(getattr(rcfg, name)) <= 1.0:
                raise ConfigError(f"retrieval.{name} must be in [0, 1]", key=f"retrieval.{name}")
        self.store, self.embedder, self.rcfg = store, embedder, rcfg
        self.pending_floor = wcfg.supersede_strong_similarity
        self.pending_mode = wcfg.supersede_mode == SupersedeMode.PENDING_CONFIRMATION
        self.cjk_baseline, self.cross_baseline = cjk_baseline, cross_baseline
        self.icfg = icfg or IntentSection()
        self.families = FamilySettings(rcfg.family_prefix, rcfg.family_prefix_share, rcfg.family_max_glosses) \
            if rcfg.word_families else None
        if rcfg.gate_calibration and not rcfg.gate_calibration_z_floor > rcfg.gate_calibration_z_zero:
            raise ConfigError("retrieval.gate_calibration_z_floor must be above gate_calibration_z_zero",
                              key="retrieval.gate_calibration_z_floor")
        # the floor's gate on the query's own background (retrieve/calibration.py); None = the fixed baseline
        self.background = DenseBackground(embedder) if rcfg.gate_calibration else None

    def statuses(self) -> tuple[str, ...]:
        """The statuses a retrieval reads: current, plus pending values in pending_confirmation mode."""
        return (MemoryStatus.CURRENT.value,) + ((MemoryStatus.PENDING_CONFIRMATION.value,) if self.pending_mode else ())

    @staticmethod
    def _other_relative(query: str, content: str, kin: frozenset[str]) -> bool:
        """The question asks about a relative through another ('我老婆的弟弟', "my sister's husband") and the memory
        names that relative only as the user's own ('我弟弟还在读研究生') without the qualifying relative: it is
        about another person (text.relative_chains). Likewise a question about the user's own relative ('my wife')
        and a memory that names it only as a named person's or a he / she's ("Dan's wife", '她老公')."""
        qualified, qualifiers, own = relative_chains(query)
        if own and not qualified:
            # the question asks the user's own relative ('my wife'); a memory naming that relative only as
            # another person's ("Dan's wife", '陈晓她老公') is about someone else (text.others_relatives)
            asked = kin & own
            return bool(asked) and asked <= others_relatives(content) and not asked & relative_chains(content)[2]
        if not qualified or kin & qualifiers:
            return False
        asked = kin & qualified
        return bool(asked) and asked <= relative_chains(content)[2]

    @staticmethod
    def _owners_differ(query: str, content: str) -> bool:
        """The question asks one owner's attribute and the memory says it is the other's: the first content term the
        two share (in the question's order) is a relative's in one and the speaker's own in the other
        (text.possessor): '我老公生日是哪天' / '我的生日是3月15号', 'when is my birthday?' / "my husband's birthday is
        May 2"."""
        shared = content_terms(query) & content_terms(content)
        if not shared:
            return False
        low = query.lower()
        term = min(shared, key=lambda t: (stem_offset(low, t) % (len(low) + 1), t))
        asked, said = possessor(query, term), possessor(content, term)
        return asked is not None and said is not None and asked != said

    def candidate(self, mid: str, pl: Payload, cos: float, q_terms: frozenset[str], ranks: dict[str, int],
                  scores: dict[str, float], exact_hit: bool, session_id: str | None, ts: float,
                  cjk_query: bool = False, query: str = "", cjk_statement: bool = False,
                  weights: Mapping[str, float] | None = None) -> Candidate:
        """One memory as a fusion candidate; ``cos`` the raw query cosine, ``ts`` now in epoch seconds;
        ``cjk_query``: the query is written mostly in Chinese/Japanese characters (see :meth:`similarity`);
        ``query``: the user's query text, for the speaker it names (:func:`names_speaker`: the memory's own
        speaker named -> ``speaker_match`` 1.0 and, with ``retrieval.speaker_coverage``, the name's words
        count as covered); ``cjk_statement``: ``cjk_query`` and the query states the user's present rather than
        looking something up (QueryPlan.last_turn_lookup false), for the hybrid fusion's dense scale;
        ``weights``: the query terms' coverage weights (QueryPlan.cover_weights, None = 1 each): the weighted
        coverage over the plain one is the candidate's ``gate_share`` (fusion.Candidate.gate_relevance)."""
        rcfg = self.rcfg
        mtype = pl.get("memory_type", "episodic")
        meta = pl.get("metadata") or {}
        checks = []
        if session_id:
            checks.append(1.0 if pl.get("session_id") == session_id else 0.0)
        topic = meta.get("topic")
        if topic:
            checks.append(1.0 if content_terms(str(topic).replace("_", " ")) & q_terms else 0.0)
        src = pl.get("source", "user_stated")
        content = str(pl.get("content") or "")
        # only a declared speaker: a transcript label read from the text would also take a Chinese note
        # header ('快递地址：...') for a person
        speaker = str(meta.get("speaker") or "").strip().lower()
        spoke = names_speaker(query, speaker) if query and speaker else False
        doc_terms: Any = pl.get("terms") or ()
        if spoke and rcfg.speaker_coverage:
            # the person the query names said it: their name is matched by who spoke, not by the words
            doc_terms = set(doc_terms) | (content_terms(speaker) & q_terms)
        coverage = self.coverage(q_terms, doc_terms, content, pl, query, cjk_query)
        # the informative share of that coverage (retrieval.coverage_term_prior), for the floor's gate
        gate_share = 1.0
        if weights is not None and coverage > 0.0:
            gate_share = min(1.0, self.coverage(q_terms, doc_terms, content, pl, query, cjk_query, weights) / coverage)
        # the similarity the floor's gate reads, as a share of the ranking's (the cross-script baseline; 1 = same)
        sim, gate_sim = self.similarity(cos, cjk_query, content), self.similarity(cos, cjk_query, content, True)
        return Candidate(
            memory_id=mid,
            similarity=sim,
            gate_similarity_share=gate_sim / sim if sim > 0.0 else 1.0,
            coverage=coverage,
            gate_share=gate_share,
            exact_match=1.0 if exact_hit else 0.0,
            metadata_match=sum(checks) / len(checks) if checks else 0.0,
            importance=float(pl.get("importance", 0.5)),
            age_seconds=max(0.0, ts - float(pl.get("updated_at") or pl.get("created_at") or ts)),
            half_life_days=getattr(rcfg.half_life_days, mtype, None),
            route_ranks=ranks,
            route_scores=scores,
            source_weight=(rcfg.inferred_weight if src == Source.MODEL_INFERRED.value
                           else rcfg.tool_weight if src == Source.TOOL.value else rcfg.user_stated_weight),
            tokens=int(pl.get("tokens") or 0),
            speaker_match=1.0 if spoke else 0.0,
            cjk_statement=cjk_statement,
            # when it was said, for the order of equal scores (rank_key: the newer statement first)
            written_at=float(pl.get("created_at") or 0.0),
            text=content,
        )

    def coverage(self, q_terms: frozenset[str], doc_terms: Any, content: str, pl: Payload, query: str,
                 cjk_query: bool, weights: Mapping[str, float] | None = None) -> float:
        """Keyword coverage in [0, 1] of the query's ``q_terms`` by one memory: its terms (``doc_terms``), its text,
        another form of a word (word_families), the relation a path question names (relation_paths) and, across
        scripts, the bilingual dictionary (cross_language_coverage); ``weights`` as :func:`cjk_coverage`."""
        rcfg = self.rcfg
        coverage = cjk_coverage(q_terms, doc_terms, content, weights)
        fs = self.families
        if fs is not None and coverage < 1.0 and query:
            # another form of the query's word: 'flight' / 'flew', 'anxious' / 'anxiety' (retrieve/crosslang.py)
            met = family_coverage(query, q_terms, content, fs)
            if met:
                coverage = max(coverage, cjk_coverage(q_terms, set(doc_terms) | met, content, weights))
        if rcfg.zh_compound_cores and coverage < 1.0 and cjk_query:
            # a compound's verb said alone: 跑步 met by '我每天跑5公里' (a word of the memory's own, retrieve/crosslang.py)
            words = set(doc_terms)
            met_core = frozenset(t for t in q_terms if t not in words and zh_cores(t) & words)
            if met_core:
                coverage = max(coverage, cjk_coverage(q_terms, words | met_core, content, weights))
        if rcfg.kin_coverage and coverage < 1.0:
            # a word for several relatives is met by a word for some of them, in any script ('siblings' by 'my
            # brother', 'kids' by 'my son', 父母 by 'mom'; text.relative_words); never the reverse: 'her two kids'
            # says nothing about the daughter, and 舅妈 (the uncle's side, as 舅舅) is no member of 舅舅
            kin = relative_words(content)
            met_kin = frozenset(t for t in q_terms if (k := kin_term(t)) and any(w < k for w in kin)) \
                if kin else frozenset()
            if met_kin:
                coverage = max(coverage, cjk_coverage(q_terms, set(doc_terms) | met_kin, content, weights))
        if rcfg.relation_paths and coverage < 1.0 and query and path_fit(query, content) == STATES:
            # the memory states the relation the question names in one word or a chain ('我姐前年嫁给了赵磊' for
            # '我姐夫'): the question's path words are met there (retrieve/relations.py)
            coverage = max(coverage, cjk_coverage(q_terms, set(doc_terms) | (kin_phrase_terms(query) & q_terms),
                                                  content, weights))
        if rcfg.cross_language_coverage and coverage < 1.0 and cjk_query != is_cjk(content):
            # an English query for a Chinese memory (or the reverse) shares no word with it
            coverage = max(coverage, cross_coverage(
                q_terms, pl.get("terms") or (), rcfg.cross_language_gloss_share,
                query_families(query, q_terms, fs) if fs is not None and query else None,
                memory_families(content, fs) if fs is not None else frozenset(), weights,
                rcfg.cross_language_gloss_heads))
        return coverage

    def similarity(self, cos: float, cjk_query: bool, content: str, gate: bool = False) -> float:
        """Rescaled similarity for relevance. When query and memory are both mostly CJK text and
        ``cjk_baseline`` is set, the baseline is the one measured for Chinese pairs (e5 packs
        unrelated Chinese pairs tighter: median cosine 0.86-0.88 on MemDaily dev against 0.79
        for English on LoCoMo dev); a cross-language pair keeps the general baseline, so an
        English query still reaches a memory stored in Chinese. A pair in different scripts takes
        ``cross_baseline`` when set (e5: unrelated cross-script pairs sit at a median cosine of 0.754-0.763
        on the dev suites, under the English 0.78; embedding.DEFAULT_CROSS_SCRIPT_BASELINES) for the floor's gate
        (``gate`` True, fusion.Candidate.gate_relevance) and, with ``retrieval.cross_script_rank``, everywhere."""
        cjk_memory = is_cjk(content)
        if cjk_query and self.cjk_baseline is not None and cjk_memory:
            return rescale_similarity(cos, self.cjk_baseline)
        if (cjk_query != cjk_memory and self.cross_baseline is not None
                and (gate or self.rcfg.cross_script_rank)):
            return rescale_similarity(cos, self.cross_baseline)
        return self.embedder.rescale(cos)

    def gate_similarity(self, cos: float, content: str, background: QueryBackground,
                        memory_side: tuple[float, float] | None = None) -> float:
        """The floor gate's dense similarity in [0, 1] on the query's own background (retrieve/calibration.py): the
        cosine's z over the background of the memory's script (averaged with the memory-side z over ``memory_side``
        = (mean, sd) when given), 0 at ``retrieval.gate_calibration_z_zero`` and ``retrieval.floor`` at
        ``gate_calibration_z_floor``."""
        rcfg = self.rcfg
        z = background.z(cos, is_cjk(content))
        if memory_side is not None:
            z = (z + (cos - memory_side[0]) / memory_side[1]) / 2.0
        return gate_similarity(z, rcfg.gate_calibration_z_zero, rcfg.gate_calibration_z_floor, rcfg.floor)

    def memory_sides(self, ids: list[str], cjk_query: bool) -> dict[str, tuple[float, float]]:
        """{memory id: (mean, sd)} of each memory's cosine to the calibration background read as queries in the
        query's script (retrieve/calibration.DenseBackground.memory_side), from the stored vectors."""
        rows = [p for p in self.store.retrieve(ids, with_vectors=True) if p.dense is not None]
        if self.background is None or not rows:
            return {}
        mean, sd = self.background.memory_side(np.asarray([p.dense for p in rows], dtype=np.float32), cjk_query)
        return {p.id: (float(m), float(s)) for p, m, s in zip(rows, mean, sd, strict=True)}

    def similarities(self, pool: RoutePool, qvec: np.ndarray) -> dict[str, float]:
        """Raw query cosine of every pooled memory (dense-route score, else from its stored vector)."""
        sims = {mid: s["vector"] for mid, s in pool.scores.items() if "vector" in s}
        missing = [mid for mid in pool.payloads if mid not in sims]
        if missing:
            for p in self.store.retrieve(missing, with_vectors=True):
                if p.dense is not None:
                    sims[p.id] = float(np.dot(np.asarray(p.dense, dtype=np.float32), qvec))
        return sims

    def assemble(self, pool: RoutePool, plan: QueryPlan, categories: tuple[str, ...] | str | None = None,
                 answer_types: frozenset[str] = frozenset(), gate_names: frozenset[str] = frozenset()
                 ) -> list[Candidate]:
        """Candidates of every pooled memory; ``categories``: the fact categories the request was routed to
        (a memory tagged with one counts as matched with relevance ``intent.relevance``; one tagged only with
        others has its similarity x ``intent.mismatch``); ``answer_types``: the names of the answer types of
        questions (write/categories.py ``AnswerTypes``): a question routed to one grades its members by their
        answer-type membership, and a member naming another entity of the slot (retrieve/contrast.py) loses
        that evidence with its similarity; ``gate_names``: query terms that name a participant
        (retrieve/speakers.participant_terms), weighted ``retrieval.gate_name_weight`` in the gate's coverage of a
        memory in the query's script (across scripts the question's other words cannot be matched by the
        memory's words, so their absence says nothing and the name keeps its weight); a one-line request routed to
        a request category does not match memories by the day they were written
        (``intent.requests_match_written_day``)."""
        rcfg, icfg = self.rcfg, self.icfg
        name_weights: Mapping[str, float] | None = None
        if gate_names:
            base = plan.cover_weights or dict.fromkeys(plan.cover_terms, 1.0)
            name_weights = {t: v * rcfg.gate_name_weight if t in gate_names else v for t, v in base.items()}
        sims = self.similarities(pool, plan.vector)
        q_idents, q_range, ts = plan.identifiers, plan.date_range, plan.ts
        # BM25 is unbounded: divide by the query's best keyword score (CombSUM of max-normalised scores)
        best_id = max((mid for mid, s in pool.scores.items() if "keyword" in s),
                      key=lambda mid: pool.scores[mid]["keyword"], default=None)
        best_kw = pool.scores[best_id]["keyword"] if best_id is not None else 0.0
        cjk_query = is_cjk(plan.query)
        statement = cjk_query and not plan.last_turn_lookup
        scale = rcfg.keyword_scale_cjk if statement and rcfg.keyword_scale_cjk is not None else rcfg.keyword_scale
        if best_id is not None and scale == KeywordScale.BEST_COVERAGE:
            # the best row holding one of eight query words is no full keyword match: scale up to an estimate
            # of the score of a row holding them all (IDF taken as flat over the words it misses, or, with
            # general-IDF term weights, as those weights: a row holding only 去 holds little of the query)
            terms = pool.payloads[best_id].get("terms") or ()
            held = (weighted_coverage(plan.term_weights, terms) if plan.term_weights
                    else keyword_coverage(plan.route_terms, terms))
            best_kw = best_kw / held if held > 0 else best_kw
        routed = frozenset((categories,) if isinstance(categories, str) else categories or ())
        answer = bool(routed) and routed <= answer_types
        # a one-line request routed to a fact category ('帮我把这个月的宽带费交了', 'book my train for next Friday') dates
        # the task, not the memories it needs: the day a memory was written does not match it (its event time does)
        task_date = (bool(routed) and not answer and not icfg.requests_match_written_day and "\n" not in plan.query.strip()
                     and not is_lookup(plan.query, 0))
        # a question about the user alone ranks another person's statement below the user's own (intent.other_person_weight)
        self_only = icfg.other_person_weight < 1.0 and AnswerTypes.asks(plan.query)
        # a short lookup names the entity it asks about (retrieve/contrast.py)
        contrast_on = plan.lookup and rcfg.entity_mismatch < 1.0 and len(plan.cover_terms) <= rcfg.entity_max_terms
        asked = contrast_on and asks(plan.query)
        cands = []
        for mid, pl in pool.payloads.items():
            has_ident = bool(q_idents & set(pl.get("terms") or ()))
            same_script = name_weights is not None and is_cjk(str(pl.get("content") or "")) == cjk_query
            c = self.candidate(mid, pl, sims.get(mid, 0.0), plan.cover_terms, pool.ranks[mid], pool.scores[mid],
                               mid in pool.fact_ids or has_ident, plan.session_id, ts, cjk_query, plan.query, statement,
                               name_weights if same_script else plan.cover_weights)
            if self_only and about_other_person(str(pl.get("content") or "")):
                c = replace(c, source_weight=c.source_weight * icfg.other_person_weight)
            if "meaning" in pool.scores[mid]:
                # a fact found by meaning is on topic by construction (similarity >= fact_similarity)
                c = replace(c, exact_match=max(c.exact_match, rcfg.fact_meaning_relevance))
            if routed:
                tagged = categories_of(pl)
                evidence = 1.0 if tagged & routed else member_evidence(pool.scores[mid].get("intent"), icfg, answer)
                if evidence > 0:
                    # the request needs this kind of fact, whatever the words (issue 16, facts by intent)
                    c = replace(c, category_match=icfg.relevance * evidence)
                elif tagged and icfg.mismatch < 1.0:
                    c = replace(c, similarity=c.similarity * icfg.mismatch)
            if best_kw > 0 and "keyword" in pool.scores[mid]:
                c = replace(c, keyword=min(1.0, max(0.0, pool.scores[mid]["keyword"] / best_kw)))
            if q_idents and not has_ident:
                c = replace(c, similarity=c.similarity * rcfg.identifier_mismatch,
                            coverage=c.coverage * rcfg.identifier_mismatch, keyword=c.keyword * rcfg.identifier_mismatch)
            if q_range is not None:
                # payload values are untyped (epoch seconds or None)
                start: Any = pl.get("event_start")
                end: Any = pl.get("event_end")
                # a memory is about the (user's local) day it was written, and about the date it names
                # (in the offset it was written in: memory.writer_day)
                offset: Any = pl.get("utc_offset")
                day = plan.dates.user_day(float(pl.get("created_at") or ts), plan.now.tzinfo,
                                          None if offset is None else float(offset))
                event = None if start is None else temporal.rebase(
                    float(start), float(end), None if offset is None else float(offset), plan.now.tzinfo, plan.dates)
                on_event = event is not None and q_range.overlaps(*event)
                match = 1.0 if on_event else 0.0
                if not on_event and not task_date and q_range.overlaps(*day):
                    # a report of an earlier day ('yesterday I renewed my passport') is about that day more than
                    # the day it was told (retrieval.told_day_match); a plan made that day is about both
                    match = rcfg.told_day_match if event is not None and event[1] <= day[0] else 1.0
                if match > 0.0:
                    # the date the query names is matched by the memory's time, not by its words
                    cov = temporal.coverage_with_date(plan.cover_terms, temporal.date_terms(q_range.phrase),
                                                      pl.get("terms") or (), q_range.phrase)
                    # the day is matched: the gate reads the coverage plain (gate_share 1)
                    c = replace(c, temporal_match=match, coverage=max(c.coverage, cov),
                                gate_share=1.0 if cov > c.coverage else c.gate_share)
            if plan.relatives:
                text = str(pl.get("content") or "")
                kin = relatives(text)
                if rcfg.relation_paths and kin_pairs(plan.query) and path_fit(plan.query, text) == OTHER:
                    # a path question ('我婆婆的电话') is not answered by another relative's memory ('我妈的电话'),
                    # not by its words, its fact category or its neighbours (retrieve/relations.py)
                    f = rcfg.relation_path_mismatch
                    c = replace(c, similarity=c.similarity * f, coverage=c.coverage * f, keyword=c.keyword * f,
                                category_match=c.category_match * f, borrows=False)
                elif (kin and (not kin & plan.relatives or self._other_relative(plan.query, text, kin))) or (
                        not kin and self._owners_differ(plan.query, text)):
                    # ... nor by the user's own: '我的生日是3月15号' is no answer to '我老公生日是哪天'
                    # a question about the uncle is not answered by the aunt's birthday, even on the day it names
                    # (after the date match: the date words it covers must not undo the discount); the category
                    # evidence too: the son's peanut allergy is a food fact, but no answer about the daughter
                    f = rcfg.relative_mismatch
                    c = replace(c, similarity=c.similarity * f, coverage=c.coverage * f, keyword=c.keyword * f,
                                category_match=c.category_match * f)
            elif plan.lookup and relatives(text := str(pl.get("content") or "")) \
                    and self._owners_differ(plan.query, text):
                # the reverse: the husband's birthday is no answer to '我生日是哪天' (session 20 red-team)
                f = rcfg.relative_mismatch
                c = replace(c, similarity=c.similarity * f, coverage=c.coverage * f, keyword=c.keyword * f,
                            category_match=c.category_match * f)
            if contrast_on and contrasts(
                    plan.query, str(pl.get("content") or ""), str((pl.get("metadata") or {}).get("speaker") or "")):
                # the vet appointment is no answer about the dentist, however many words the two share
                f = rcfg.entity_mismatch
                # ... and a question's category evidence too ('我在重庆吃的那家火锅叫啥': the Chengdu hotpot is a food
                # memory of another city); a request keeps it (the needed fact may name another filler)
                c = replace(c, similarity=c.similarity * f, coverage=c.coverage * f, keyword=c.keyword * f,
                            category_match=c.category_match * f if answer or asked else c.category_match)
            if pl.get("status") == MemoryStatus.PENDING_CONFIRMATION.value:
                # seed 004: an unconfirmed old value shows only when strongly relevant, below the new one
                if c.relevance < self.pending_floor:
                    continue
                c = replace(c, source_weight=c.source_weight * rcfg.inferred_weight)
            cands.append(c)
        if q_range is not None and rcfg.date_mismatch < 1.0 and any(c.temporal_match for c in cands):
            # a question about one day is not answered by a memory that names another day and shares more words
            # ('这周...出差' for '上上周我去哪出差'); a memory naming no day (a habit, a standing fact: '每天早上吃降压药')
            # may answer a question that gives a day as context, and with no memory of that day nothing changes
            f = rcfg.date_mismatch
            cands = [replace(c, similarity=c.similarity * f, coverage=c.coverage * f, keyword=c.keyword * f)
                     if not c.temporal_match and pool.payloads[c.memory_id].get("event_start") is not None else c
                     for c in cands]
        if self.background is not None and not any(c.gate_relevance >= rcfg.floor for c in cands):
            cands = self.calibrate(cands, sims, pool, plan.vector, cjk_query)
        return cands

    def calibrate(self, cands: list[Candidate], sims: Mapping[str, float], pool: RoutePool, qvec: np.ndarray,
                  cjk_query: bool) -> list[Candidate]:
        """``cands`` with their ``calibrated_similarity_share`` (retrieval.gate_calibration, :meth:`gate_similarity`:
        the query side, and with ``gate_calibration_memory_side`` the memory side, one vector read of the
        memories), for the floor's gate when no candidate opens it on the fixed baseline. Only a candidate of dense
        similarity above 0 that no mismatch rule discounted (a relative, entity, identifier, date or category
        mismatch says it is about something else, on a scale made for the fixed baseline) gets one."""
        if self.background is None:
            return cands
        background = self.background.of(qvec)
        base: dict[str, float] = {}
        for c in cands:
            if c.similarity > 0.0:
                b = self.similarity(sims.get(c.memory_id, 0.0), cjk_query, c.text)
                if c.similarity >= b * (1.0 - 1e-9):
                    base[c.memory_id] = b
        if not base:
            return cands
        sides = self.memory_sides(list(base), cjk_query) if self.rcfg.gate_calibration_memory_side else {}
        out = []
        for c in cands:
            undiscounted = base.get(c.memory_id)
            if undiscounted is not None and (c.memory_id in sides or not self.rcfg.gate_calibration_memory_side):
                cal = self.gate_similarity(sims.get(c.memory_id, 0.0), c.text, background, sides.get(c.memory_id))
                c = replace(c, calibrated_similarity_share=cal / undiscounted)
            out.append(c)
        return out
