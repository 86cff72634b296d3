"""The retrieval pipeline (SEED_DIGEST section 4), run per call::

    mandatory filter (tenant + user + status + not archived + embedding version)
    -> query plan (terms, identifiers, date range, vague-query rewrite, embedding)
    -> fact category of the request (write/categories.py)
    -> routes (dense, keyword, recent, fact, constraint, fact_meaning, intent, date) -> candidate assembly
    -> fusion (hybrid | weighted | five_term | rrf) -> conversation context (neighbours
    of the top candidates join, scores smoothed over turns) -> threads (the user's own decision
    answers the request it settles, retrieve/addressee.py) -> relevance floor -> entity hop
    -> stale values (an older same-subject memory ranks below the newer one)
    -> time answers (a 'when' question: a memory stating no time below one that does, retrieve/answers.py)
    -> top_k within the token budget -> hits (+ touch on hit)

:class:`RetrievalPipeline` holds only its stages; each call's data lives in the
:class:`RetrievalRequest` and the :class:`RetrievalRun` it returns. Errors
propagate: the engine turns them into a ``degraded`` result.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import numpy as np

from ..config import EngineConfig
from ..embedding import CachedEmbedder, cjk_baseline, cjk_pair_baseline, cross_script_baseline
from ..models import CandidateExplanation, Hit, from_epoch
from ..scope import Scope
from ..store.base import ScoredPayload, VectorStore
from ..text import content_terms
from ..write.categories import AnswerTypes, Categories
from ..write.intents import present_question, query_tense
from ..write.pii import PiiSettings, Redaction
from . import temporal
from .addressee import lift_decisions
from .admission import Admission
from .answers import TimeAnswers, word_pattern
from .candidates import CandidateBuilder, pool_routes
from .context import ConversationContext, Link
from .cutoffs import Budget, RelevanceFloor
from .fusers import fuser_for
from .fusion import Candidate, rank_key
from .hop import EntityHop
from .query import QueryPlan, QueryPlanner
from .routes import DEFAULT_ROUTES, RouteQuery, build_routes, channels_of
from .speakers import participant_terms, speaker_demotions
from .stale import StaleValues, demote_corrected, lift_replacements, lift_successors

__all__ = ["RetrievalPipeline", "RetrievalRequest", "RetrievalRun"]


log = logging.getLogger(__name__)

@dataclass(frozen=True)
class RetrievalRequest:
    """One validated retrieval: owner, optional session, ``top_k``, the call's clock
    (``ts`` epoch seconds and the aware ``now``), an optional memory-type restriction and, when the
    caller already made it, the query's PII ``redaction`` under ``config.pii`` (the engine's span; None =
    the planner makes its own)."""

    query: str
    user_id: str
    tenant_id: str
    top_k: int
    ts: float
    now: datetime
    session_id: str | None = None
    memory_types: Sequence[str] | None = None
    redaction: Redaction | None = None


@dataclass(frozen=True)
class RetrievalRun:
    """Hits best first, an explanation per candidate, and the rewritten query (None = not rewritten)."""

    hits: list[Hit]
    explanations: list[CandidateExplanation]
    rewritten: str | None


class RetrievalPipeline:
    """The retrieval stages over one store and embedder; see the module docstring.
    Construction validates every stage's configuration (ConfigError)."""

    def __init__(self, store: VectorStore, embedder: CachedEmbedder, config: EngineConfig,
                 routes: Sequence[str] = DEFAULT_ROUTES, pii_key: bytes = b"") -> None:
        r = config.retrieval
        self.store, self.embedder, self.config = store, embedder, config
        # pii_key: the workspace's secret for the search terms of redacted values (pii.fingerprint_terms)
        self.planner = QueryPlanner(store, embedder, r, PiiSettings.from_config(config.pii),
                                    pii_key if config.pii.fingerprint_terms else b"",
                                    temporal.DateSettings.from_config(config.memory))
        self.categories = Categories(embedder, config.intent)
        self.answers = AnswerTypes(embedder, config.intent)
        self.routes = build_routes(store, r, routes, rescale=embedder.rescale, icfg=config.intent,
                                   categories=self.categories, answers=self.answers)
        self.builder = CandidateBuilder(store, embedder, r, config.write, cjk_baseline(config.embedding), config.intent,
                                       cross_script_baseline(config.embedding))
        self.fuse = fuser_for(r)
        self.floor = RelevanceFloor(r)
        self.hop = EntityHop(store, self.builder, r)
        self.context = ConversationContext(store, self.builder, r)
        # Chinese memory pairs on their own scale (embedding.cjk_pair_baseline) only with retrieval.stale_cjk_pairs
        self.stale = StaleValues(store, embedder, r, cjk_pair_baseline(config.embedding) if r.stale_cjk_pairs else None)
        self.successor_onset = word_pattern(r.successor_onset_words)
        self.time_answers = TimeAnswers(r.time_answer_discount, r.time_answer_relevance_share, r.time_question_words)
        self.budget = Budget(r)
        self.touch_on_hit = r.touch_on_hit
        self.thread_order = r.thread_order

    def run(self, req: RetrievalRequest) -> RetrievalRun:
        scope = Scope(req.tenant_id, req.user_id, self.embedder.version)
        plan = self.planner.plan(req.query, scope, req.session_id, req.ts, req.now, req.redaction)
        types = tuple(req.memory_types) if req.memory_types else None
        flt = scope.filter(memory_types=types, statuses=self.builder.statuses())
        routed: tuple[str, ...] = ()
        if self.categories.enabled and len(content_terms(req.query)) >= self.config.intent.min_query_terms:
            # the user's own words say what the request needs; a vague-query rewrite only widens recall
            qvec = plan.vector if plan.rewritten is None else self.embedder.embed_query(req.query)
            routed = tuple(lb.name for lb in self.categories.query_labels(qvec))
            if not routed or self.config.intent.needs_with_routed:  # a need word names the kind (intent.needs)
                routed += tuple(lb.name for lb in self.categories.need_labels(req.query, qvec) if lb.name not in routed)
            if not routed and self.answers.enabled:  # a question about the user asks for a kind of value
                routed = tuple(lb.name for lb in self.answers.labels(req.query, qvec))
        rq = RouteQuery(req.query, plan.text, plan.route_terms, plan.vector, scope, flt, types,
                        routed[0] if routed else None, routed[1:], plan.term_weights,
                        None if plan.date_range is None else (plan.date_range.start, plan.date_range.end))
        channels: dict[str, list[ScoredPayload]] = {}
        for route in self.routes:
            rows = route.search(rq)
            channels.setdefault(route.channel, []).extend(rows)
        admit = Admission(scope, self.config.retrieval.exclude_flagged, plan.user_only,
                          self.config.retrieval.declined_needs_addressee and not plan.to_assistant,
                          self.config.retrieval.commitment_needs_addressee and not plan.to_assistant)
        pool = pool_routes(channels, admit)
        names = self._gate_names(plan, pool.payloads.values())
        fused = self.fuse(self.builder.assemble(pool, plan, routed, self.answers.names, names))
        links: list[Link] = []
        # a statement of the user's present calls for an experience, not for the turn next to a match
        if self.context.enabled and fused and (plan.last_turn_lookup or self.config.retrieval.context_statements):
            fused, links = self.context.apply(fused, pool.payloads, flt, admit, plan, self.fuse)
        if self.thread_order and not plan.to_assistant and fused:  # the user's decision answers their request
            fused = lift_decisions(fused, pool.payloads, self.config.retrieval.thread_relevance_share)
        kept, below = self.floor.split(fused, plan.last_turn_lookup)
        # a statement calls for one related experience, not for the memories its best match names
        if self.hop.enabled and kept and (plan.last_turn_lookup or self.config.retrieval.hop_statements):
            hopped = self.hop.hop(kept, fused, pool.payloads, flt, admit, plan)
            if hopped:
                parent_score = {c.memory_id: c.fused for c in fused}
                refused = self.context.smooth(
                    self.fuse([c for c in fused if c.memory_id not in hopped] + [c for c, _ in hopped.values()]), links)
                fused = self.hop.discount(refused, hopped, parent_score)
                kept, below = self.floor.split(fused, plan.last_turn_lookup)
        focus_gone: list[Candidate] = []
        if self.hop.enabled and kept:  # a chained question drops the memories off its chain (retrieve/hop.py)
            before_focus = kept
            kept, below = self.hop.focus(kept, below, pool.payloads, plan)
            left_in = {c.memory_id for c in kept}
            focus_gone = [c for c in before_focus if c.memory_id not in left_in]
        if self.config.retrieval.speaker_order and len(kept) > 1:
            # 'Where did Priya go hiking?': Priya's own turn above the turns spoken to her (retrieve/speakers.py)
            rc = self.config.retrieval
            below_speaker = speaker_demotions(req.query, kept, pool.payloads, rc.speaker_order_share,
                                              rc.speaker_order_unnamed)
            if below_speaker:
                kept, _ = demote_corrected(kept, below_speaker, self.config.retrieval.speaker_order_discount)
                rank = {c.memory_id: c for c in kept}
                fused = sorted((rank.get(c.memory_id, c) for c in fused), key=rank_key)
        # "now" / "现在" asks for the value that holds now, "before" / "以前" for an earlier one (write/intents.py)
        tense = query_tense(req.query) if self.config.retrieval.stale_query_tense else None
        by_grammar = False  # the present by the question's grammar alone, no time word (the stale stage's present gates)
        if tense is None and self.config.retrieval.stale_query_tense and self.config.retrieval.stale_tenseless_present \
                and present_question(req.query, chinese=self.stale.cjk_pair_baseline is not None,
                                     perfect_is_past=self.config.retrieval.stale_perfect_is_past):
            # 'how do I get my groceries?': the present by its grammar (a Chinese one only on the Chinese pair scale)
            tense, by_grammar = "present", True
        stale_below: dict[str, str] = {}  # {memory id: the newer value it ranks below} (the stale stage)
        if self.stale.enabled:  # a reported change found through the value it replaces (retrieve/stale.py)
            # a past-tense question asks for the replaced value: the replacement is not lifted beside it
            keys = {"present": ("_replaces", "_succeeds"), "past": ()}.get(tense or "", ("_replaces",))
            kept, below = lift_replacements(kept, below, pool.payloads, self.config.retrieval.stale_replacement_lift,
                                            keys)
        successors: dict[str, tuple[str, ...]] = {}
        stale_gone: list[Candidate] = []
        stale_vectors: dict[str, np.ndarray] = {}  # one store read of each vector for the two stale stages
        if self.stale.enabled and tense == "present" and (plan.last_turn_lookup or self.config.retrieval.stale_for_statements):
            # the present value of a slot a kept memory fills, told as a change, start or onset (retrieve/stale.py)
            head = req.top_k + self.config.retrieval.stale_window
            # a time word asks for the newest reading of a series, told without the attribute ('早上量的126/82')
            series = None if by_grammar else self.stale.reading_links(
                [c.memory_id for c in kept[:head] + below[:head]], pool.payloads, stale_vectors)
            kept, below, successors = lift_successors(
                kept, below, pool.payloads, self.config.retrieval.stale_successor_lift, head, self.successor_onset,
                self.config.retrieval.stale_across_sessions, series)
        if self.stale.enabled and len(kept) > 1:
            # a statement of the user's present recalls past experience: no current value to prefer (as 'past')
            before_stale = kept
            kept, stale_below = self.stale.yields(
                kept, pool.payloads, req.top_k, precedence=not plan.to_assistant, tense=tense,
                same_subject=plan.last_turn_lookup or self.config.retrieval.stale_for_statements,
                query_terms=frozenset(content_terms(req.query)) if by_grammar else None, successors=successors,
                vectors=stale_vectors)
            left = {c.memory_id for c in kept}
            stale_gone = [c for c in before_stale if c.memory_id not in left]
            rank = {c.memory_id: c for c in kept}
            fused = sorted((rank.get(c.memory_id, c) for c in fused), key=rank_key)
        if self.time_answers.enabled and len(kept) > 1:  # 'when is ...?' is answered by a memory that states a time
            kept = self.time_answers.apply(req.query, kept, pool.payloads, req.top_k, self.config.retrieval.stale_window,
                                           stale_below)
            rank = {c.memory_id: c for c in kept}
            fused = sorted((rank.get(c.memory_id, c) for c in fused), key=rank_key)
        final, over_k, over_budget = self.budget.take(kept, req.top_k)
        hits = [self._hit(c, pool.payloads[c.memory_id]) for c in final]
        if self.touch_on_hit:
            try:
                for c in final:
                    pl = pool.payloads[c.memory_id]
                    self.store.set_payload([c.memory_id], {"access_count": int(pl.get("access_count", 0)) + 1,
                                                           "last_access_at": req.ts})
            except Exception as e:  # noqa: BLE001 - bookkeeping: a failed count must not discard found hits
                log.warning("access-count update of %d hit(s) failed: %s", len(final), e)
        return RetrievalRun(hits, self._explain(fused, final, below, over_k, over_budget, stale_gone, focus_gone),
                            plan.rewritten)

    def _gate_names(self, plan: QueryPlan, payloads: Iterable[Mapping[str, Any]]) -> frozenset[str]:
        """The query's terms that name a participant of the pooled memories (:func:`participant_terms`), whose
        weight at the floor's gate is ``retrieval.gate_name_weight``; empty when the query has no other content
        term (a question of names alone is about the person) or the weight is 1."""
        if self.config.retrieval.gate_name_weight >= 1.0:
            return frozenset()
        names = participant_terms(plan.query, plan.cover_terms, payloads)
        return names if plan.cover_terms - names else frozenset()

    @staticmethod
    def _hit(c: Candidate, pl: dict[str, Any]) -> Hit:
        return Hit(memory_id=c.memory_id, content=pl["content"], score=round(c.fused, 6),
                   sources=channels_of(c.route_ranks),
                   memory_type=pl["memory_type"], created_at=from_epoch(pl["created_at"]) or datetime.now(UTC),
                   importance=float(pl.get("importance", 0.5)), relevance=round(c.relevance, 6),
                   metadata=dict(pl.get("metadata") or {}))

    def _explain(self, fused: list[Candidate], final: list[Candidate], below: list[Candidate],
                 over_k: list[Candidate], over_budget: list[Candidate], stale_gone: Sequence[Candidate] = (),
                 focus_gone: Sequence[Candidate] = ()) -> list[CandidateExplanation]:
        """``stale_gone``: candidates the stale stage left out for a present-tense question (stage ``stale``);
        ``focus_gone``: the ones the hop's chain focus moved below (stage ``hop_focus``). A floor drop carries the
        check it missed and its numbers (:meth:`RelevanceFloor.check` on the ranked list the floor last split)."""
        stage = {c.memory_id: "floor" for c in below} | {c.memory_id: "hop_focus" for c in focus_gone} | {
            c.memory_id: "top_k" for c in over_k} | {c.memory_id: "token_budget" for c in over_budget} | {
            c.memory_id: "stale" for c in stale_gone}
        rank_of = {c.memory_id: i for i, c in enumerate(final, start=1)}
        gate_open = self.floor.gate_open(fused)
        out = []
        for c in fused:
            at = stage.get(c.memory_id)
            check, value, threshold, key = (self.floor.check(c, gate_open) if at == "floor"
                                            else (None, None, None, None))
            out.append(CandidateExplanation(c.memory_id, dict(c.route_ranks), dict(c.route_scores),
                                            round(c.relevance, 6), round(c.fused, 6), rank_of.get(c.memory_id), at,
                                            check, value, threshold, key))
        return out
