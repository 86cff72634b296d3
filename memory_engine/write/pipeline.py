"""The write pipeline (SEED_DIGEST section 3, issue 16), run per call::

    clean + redact -> forget intent (archive what it names, stop) -> confirmation
    ("yes, book that one": the assistant turn it takes up becomes the user's, write/roles.py)
    -> repair of a value said a few turns before ("I said Tuesday but I meant Thursday": the
    repaired turn is stored and the one it repairs superseded, write/repair.py; stop)
    -> thread links (a suggestion answers the request before it, the user's own decision settles it)
    -> gate (noise
    rejection, importance, type; below the threshold kept as episodic) -> roles
    (assistant/tool: never a fact; tool: planted-instruction flags) -> embed ->
    candidate pool (hedges) | fact overwrite | dedup (touch, confirm) ->
    correction supersedes (with evidence; a spoken correction of a structured fact too,
    write/fact_correction.py) -> fact category (user statements,
    write/categories.py) -> store (turns of one session written with the same
    time keep their arrival order, write/order.py)

:class:`WritePipeline` holds only its stages (built from store, embedder and
config); everything about one request lives in the :class:`AddRequest` and the
:class:`WriteRun` it returns, so one pipeline serves many threads (the engine
serialises writes per owner, not globally).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from ..config import EngineConfig
from ..embedding import CachedEmbedder, cjk_pair_baseline
from ..errors import StoreError
from ..models import MemoryRecord, MemoryType, WriteOutcome, WriteResult
from ..retrieve import temporal
from ..scope import Scope
from ..store.base import ScoredPayload, VectorStore
from ..text import content_terms
from . import rules
from .candidates import CandidatePool
from .categories import Categories
from .changes import ChangeLinker
from .clean import Cleaner
from .dedup import DuplicateFinder, merged_kind_patch
from .fact_correction import FactCorrectionFinder
from .facts import FactBook, fact_key
from .forgetting import Forgetter
from .gate import WriteGate
from .injection import planted_instruction
from .intents import EXPLICIT_CORRECTION, addresses_memory, forget_target, names_matter, says_more
from .order import SessionOrder
from .pii import PiiSettings, asked_secret, leads_with_value
from .records import build_record, touch_patch, upsert_records
from .repair import RecentRepair, Repair
from .roles import (
    COMMITMENT_KEY,
    REPLY_TO_KEY,
    Confirmer,
    as_said_by_user,
    confirmation_extra_terms,
    is_denial,
    is_guess,
    standing_commitment,
    turn_before,
)
from .supersede import CorrectionFinder, Superseder

__all__ = ["AddRequest", "WritePipeline", "WriteRun"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class AddRequest:
    """One validated write: the arguments of :meth:`MemoryEngine.add` with the memory type
    parsed (``hint``), ``ts`` the epoch seconds of the statement and ``now`` the caller's clock
    (None = ``ts``) against which relative dates in the text are resolved."""

    text: str
    user_id: str
    tenant_id: str
    ts: float
    session_id: str | None = None
    role: str = "user"
    hint: MemoryType | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    fact: dict[str, Any] | None = None
    permanent: bool = False
    now: datetime | None = None


@dataclass(frozen=True)
class WriteRun:
    """What one run produced: the caller's :class:`WriteResult` and ``content``, the text as
    cleaned and redacted (what a span may show; None when memory is disabled)."""

    result: WriteResult
    content: str | None


class WritePipeline:
    """The write stages over one store and embedder; see the module docstring.
    Construction validates every stage's configuration (ConfigError)."""

    def __init__(self, store: VectorStore, embedder: CachedEmbedder, config: EngineConfig,
                 pii_key: bytes = b"") -> None:
        self.store, self.embedder, self.config = store, embedder, config
        self.dates = temporal.DateSettings.from_config(config.memory)
        w = config.write
        # pii_key: the workspace's secret for the search terms of redacted values (pii.fingerprint_terms)
        key = pii_key if config.pii.fingerprint_terms else b""
        self.clean = Cleaner(w, PiiSettings.from_config(config.pii), key)
        self.gate = WriteGate(w)
        self.facts = FactBook(store)
        self.dedup = DuplicateFinder(store, embedder, w)
        self.corrections = CorrectionFinder(store, embedder, w, config.retrieval.route_limit)
        self.fact_corrections = FactCorrectionFinder(store, embedder, w, config.retrieval.route_limit)
        self.superseder = Superseder(store, w.supersede_mode, config.lifecycle, w.undo_days)
        self.candidates = CandidatePool(store, embedder, w, config.keyword)
        self.forgetter = Forgetter(store, embedder, w, config.keyword)
        self.order = SessionOrder(store, w)
        self.categories = Categories(embedder, config.intent)
        self.confirmer = Confirmer(store, w)
        self.repair = RecentRepair(store, w)
        self.changes = ChangeLinker(store, embedder, w, config.retrieval.route_limit, cjk_pair_baseline(config.embedding))

    def run(self, req: AddRequest) -> WriteRun:
        """Apply one request; returns the outcome (stored / merged / rejected / candidate).
        Raises StoreError / EmbeddingError from the backends (nothing half-written is reported)."""
        if not self.config.memory.enabled:
            return WriteRun(WriteResult(WriteOutcome.REJECTED.value, None, "memory_disabled"), None)
        cleaned = self.clean(req.text, self._asked_secret(req))
        clean, kinds = cleaned.text, cleaned.redactions
        if self.clean.redact_pii and (req.metadata or req.fact is not None):  # every stored string, not only the text
            fact = None if req.fact is None else {**req.fact, "value": self.clean.value(req.fact["value"])}
            req = replace(req, metadata=self.clean.value(req.metadata), fact=fact)
        if req.role == "user" and req.fact is None and req.hint is None:
            target = forget_target(clean)
            if target is not None:  # "forget that I ...": acts on the store, is not stored itself
                forgot = self._forget(req, target, kinds)
                # a 'request' that names something, matches nothing and points at nothing said ('forget the
                # fancy place', a restaurant named 一坐一忘) is a statement using the verb: its words are kept
                # a statement said beside it ('forget my keys, I lost my wallet today') is kept either way
                if forgot.reason != "forget_intent:no_match" or not target or (
                        addresses_memory(clean) and not says_more(clean)):
                    return WriteRun(forgot, clean)
        offers: list[ScoredPayload] = []
        if req.role == "user" and req.fact is None:
            # "yes, book that one", "yes please" after "Want me to book it?": the offer becomes the user's
            offers = self.confirmer.takes_up(Scope(req.tenant_id, req.user_id, self.embedder.version),
                                             req.session_id, req.ts, clean)
        confirmation = bool(offers)
        if confirmation:
            merged = self._confirm(req, clean, kinds, offers)
            if merged is not None:
                return WriteRun(merged, clean)
        elif req.role == "user" and req.fact is None:
            # "no thanks", "不用了": the offer stays the assistant's and answers nothing about the user (write/roles.py)
            refused = self.confirmer.declines_offer(Scope(req.tenant_id, req.user_id, self.embedder.version),
                                                    req.session_id, req.ts, clean)
            if refused is not None:
                self.confirmer.decline(refused, clean, req.ts)
        if req.role == "user" and req.fact is None and req.hint is None:
            scope = Scope(req.tenant_id, req.user_id, self.embedder.version)
            repair = self.repair.find(scope, req.session_id, req.ts, clean, req.role, req.metadata)
            if repair is not None:
                return WriteRun(self._store_repair(req, clean, kinds, repair), clean)
        reply_to: str | None = None
        if req.role == "user" and req.fact is None and req.hint is None and not confirmation:
            # 'yes' after 'Do you have a car?': the question is the reply's context (write/roles.py replies)
            asked = self.confirmer.question(Scope(req.tenant_id, req.user_id, self.embedder.version),
                                            req.session_id, req.ts, clean)
            if asked is not None and self.config.write.denied_guesses and is_guess(asked[1]) and is_denial(clean):
                # "nope, days only" to "You work night shifts, right?": the guess is declined (write/roles.py)
                guess = self.store.retrieve([asked[0]])
                if guess:
                    self.confirmer.decline(guess[0], clean, req.ts)
            if asked is not None:
                reply_to = asked[1]
                req = replace(req, metadata={**req.metadata, REPLY_TO_KEY: {"id": asked[0], "text": asked[1]}})
        # request -> suggestion -> the user's own decision: the links retrieval ranks by (write/roles.py threads)
        thread = self.confirmer.thread_metadata(Scope(req.tenant_id, req.user_id, self.embedder.version),
                                                req.session_id, req.ts, req.role, clean, confirmation)
        if thread:
            req = replace(req, metadata={**req.metadata, **thread})
        if req.role == "assistant" and self.config.write.assistant_commitments:
            # "from now on I'll answer in French": the assistant's commitment, not the user's preference (write/roles.py)
            committed = standing_commitment(clean)
            if committed:
                req = replace(req, metadata={**req.metadata, COMMITMENT_KEY: committed})
        if req.role != "user" and req.fact is not None:
            # what the assistant or a tool said is never the user's fact (kept as a record of what was said)
            req = replace(req, fact=None, metadata={**req.metadata, "_not_a_fact": True})
        if req.role == "tool" and self.config.write.flag_tool_injection:
            w = self.config.write
            flags = planted_instruction(clean, w.injection_weights, w.injection_threshold, w.injection_encoded_min_chars,
                                        w.injection_spaced_min_chars)
            if flags:
                req = replace(req, metadata={**req.metadata, "_flags": list(flags)})
        has_fact = req.fact is not None
        v = self.gate.judge(clean, has_fact=has_fact, hint=req.hint, role=req.role, answers=reply_to is not None)
        if v.reject:
            extra: dict[str, Any] = dict(importance=v.importance, memory_type=v.memory_type.value) if v.scored else {}
            return WriteRun(WriteResult(WriteOutcome.REJECTED.value, None, v.reject, redactions=kinds, **extra), clean)
        return WriteRun(self._store(req, clean, kinds, v.signals, v.importance, v.memory_type, v.uncertain,
                                    v.below_threshold, cleaned.fingerprints, reply_to), clean)

    def _asked_secret(self, req: AddRequest) -> str | None:
        """The secret kind the assistant's turn just before this user turn asked for ('What's the alarm
        code?' -> ACCESS_CODE), so the value the answer starts with is redacted ("it's 7391, ...");
        None without such a turn within ``pii.answer_window_s`` (write/pii.py asked_secret)."""
        window = self.config.pii.answer_window_s
        if req.role != "user" or not self.clean.redact_pii or window <= 0 or not leads_with_value(req.text):
            return None
        scope = Scope(req.tenant_id, req.user_id, self.embedder.version)
        turn = turn_before(self.store, scope, req.session_id, req.ts, window)
        return None if turn is None else asked_secret(str(turn.payload.get("content") or ""))

    def _forget(self, req: AddRequest, target: str, kinds: tuple[str, ...]) -> WriteResult:
        """Archive what a forget instruction names (write/forgetting.py), with the evidence and an undo window."""
        matches = self.forgetter.find(target, req.tenant_id, req.user_id, req.session_id, req.ts)
        ids = [m.memory_id for m in matches]
        evidence = [m.as_dict() for m in matches]
        versions: list[tuple[str, str]] = []
        if ids:
            rows = {p.id: p.payload for p in self.store.retrieve(ids)}
            statuses = {pid: str(pl.get("status") or "current") for pid, pl in rows.items()}
            # a message holding more than the named thing keeps the rest as a new version (write/forgetting.py)
            for m, ev in zip(matches, evidence, strict=True):
                red = self.forgetter.redaction(target, m, rows.get(m.memory_id) or {}, names_matter(req.text))
                if red is not None:
                    red = self.forgetter.keep_rest(red, rows[m.memory_id], req.ts)
                    versions.append((m.memory_id, str(red.kept_as)))
                    ev.update(kept_as=red.kept_as, clauses_removed=red.removed)
            self.forgetter.archive(ids, req.ts, statuses, redacted_into=dict(versions))
        if not ids:  # nothing named: say so (outcome rejected = nothing stored, nothing archived), never 'forgotten'
            return WriteResult(WriteOutcome.REJECTED.value, None, "forget_intent:no_match", redactions=kinds)
        return WriteResult(WriteOutcome.FORGOTTEN.value, None, "forget_intent",
                           tuple(ids), redactions=kinds, evidence=tuple(evidence), redacted_versions=tuple(versions))

    def _store_repair(self, req: AddRequest, clean: str, kinds: tuple[str, ...], rep: Repair) -> WriteResult:
        """Store the repaired turn (its kind, importance and categories; the repair's words in
        ``metadata._repair_text``, and after the text when they say more than the value) and supersede the
        turn it repairs, with the evidence (write/repair.py)."""
        old = self.store.retrieve([rep.memory_id])[0].payload
        content = f"{rep.repaired}\n{clean}" if rep.says_more else rep.repaired
        mtype = MemoryType(str(old.get("memory_type") or MemoryType.EPISODIC.value))
        kept = {k: v for k, v in dict(old.get("metadata") or {}).items() if k in ("_category", "_categories", "_kind")}
        meta = {**req.metadata, **kept, "_repair_of": rep.memory_id, "_repair_text": clean}
        imp = float(old.get("importance") or 0.5)
        scope = Scope(req.tenant_id, req.user_id, self.embedder.version)
        rec = build_record(content, tenant_id=req.tenant_id, user_id=req.user_id, memory_type=mtype,
                           embedding_version=self.embedder.version,
                           ts=self.order.place(scope, req.session_id, req.ts), session_id=req.session_id,
                           role=req.role, metadata=meta, importance=imp, permanent=req.permanent, now=req.now,
                           supersedes=(rep.memory_id,), dates=self.dates)
        upsert_records(self.store, [rec], self.embedder.embed_documents([content]), self.config.keyword)
        self._supersede_or_drop([rep.memory_id], rec.id, req.ts)
        return WriteResult(WriteOutcome.STORED.value, rec.id, "supersedes", (rep.memory_id,), importance=imp,
                           memory_type=mtype.value, redactions=kinds, evidence=(rep.evidence(),))

    def _supersede_or_drop(self, superseded: list[str], new_id: str, ts: float) -> None:
        """Retire ``superseded`` in favour of the just-written ``new_id``; both or neither: when the store
        refuses, the new memory is dropped and a StoreError raised (the old ones stay current)."""
        try:
            self.superseder.supersede(superseded, new_id, ts)
        except Exception as e:
            try:
                self.store.delete([new_id])
            except Exception:  # noqa: BLE001 - the original failure is what the caller must see
                log.exception("could not drop correction %s after a failed supersede", new_id)
            raise StoreError(f"correction not applied: superseding {len(superseded)} memory(ies) failed: {e}") from e

    def _confirm(self, req: AddRequest, clean: str, kinds: tuple[str, ...], offers: list[ScoredPayload]
                 ) -> WriteResult | None:
        """Mark the assistant turns a confirmation takes up (``offers``, newest first; write/roles.py
        Confirmer.takes_up) as the user's; the result 'merged' into the newest when the confirmation names
        nothing new, else None (the turn is stored too)."""
        for offer in offers:
            self.confirmer.confirm(offer, clean, req.ts)
        if confirmation_extra_terms(clean):
            return None
        return WriteResult(WriteOutcome.MERGED.value, offers[0].id, f"confirms:{offers[0].id}", redactions=kinds)

    def _inherit_event_time(self, rec: MemoryRecord, superseded: list[str]) -> MemoryRecord:
        """A correction naming no date ('Actually the dentist is at 4pm, not 3pm') keeps the
        event time of the first memory it retires or links (``_corrects``) that has one, so
        'What do I have on December 8?' still finds the corrected appointment."""
        rows = {p.id: p.payload for p in self.store.retrieve(superseded)}
        for pid in superseded:
            start = (rows.get(pid) or {}).get("event_start")
            if start is not None:
                return replace(rec, event_start=start, event_end=rows[pid].get("event_end"))
        return rec

    def _store(self, req: AddRequest, clean: str, kinds: tuple[str, ...], sig: rules.Signals, imp: float,
               mtype: MemoryType, uncertain: bool, below: bool = False, pii_terms: tuple[str, ...] = (),
               reply_to: str | None = None) -> WriteResult:
        """Store one judged text. ``reply_to``: the assistant's question the text answers (write/roles.py
        replies): the memory is embedded and indexed with it and never merged as a duplicate (its meaning
        is the pair: one 'yes' is not another)."""
        scope = Scope(req.tenant_id, req.user_id, self.embedder.version)
        vec = self.embedder.embed_documents([clean])[0]
        # a redacted value stays findable by its keyed search term (write/pii.py fingerprints)
        terms = tuple(content_terms(clean)) + pii_terms
        stored_vec = vec  # what the memory is found by; the decisions below read the user's own words (vec)
        if reply_to is not None:
            # in the user's own person: the user asks about themselves as I / 我 (write/roles.py as_said_by_user)
            context = as_said_by_user(reply_to) if self.config.write.reply_in_user_person else reply_to
            stored_vec = self.embedder.embed_documents([f"{context}\n{clean}"])[0]
            terms = tuple(dict.fromkeys(terms + tuple(content_terms(reply_to))))
        # turns of one session written with the same time keep their order (write/order.py)
        at = self.order.place(scope, req.session_id, req.ts)
        rec = build_record(clean, tenant_id=req.tenant_id, user_id=req.user_id, memory_type=mtype,
                           embedding_version=self.embedder.version, ts=at, session_id=req.session_id,
                           role=req.role, metadata=req.metadata, importance=imp, permanent=req.permanent,
                           now=req.now, terms=terms, flags=tuple(req.metadata.get("_flags") or ()), dates=self.dates)
        if uncertain:
            return self.candidates.add(rec, stored_vec, scope, kinds)
        superseded: list[str] = []
        evidence: list[dict[str, Any]] = []
        corrects: list[str] = []
        if req.fact is not None:
            key, value = fact_key(req.fact["key"]), req.fact["value"]
            old = self.facts.current(scope, key)
            if old is not None and old.fact_value == value:
                self.store.set_payload([old.id], touch_patch(old, req.ts, updated=True))
                return WriteResult(WriteOutcome.MERGED.value, old.id, f"duplicate_fact:{key}", importance=imp,
                                   memory_type=MemoryType.FACT.value, redactions=kinds)
            if old is not None:
                superseded.append(old.id)
                evidence.append({"id": old.id, "rule": "fact_overwrite", "fact_key": key})
            if sig.correction:  # 'change my default courier to SF' also retires 'I use ZTO'
                for pid, _, ev in self.corrections.find(clean, vec, scope, req.metadata, req.role):
                    superseded.append(pid)
                    evidence.append(ev)
            rec = replace(rec, fact_key=key, fact_value=value)
            mtype = MemoryType.FACT
        else:
            dup = None if reply_to is not None else self.dedup.find(clean, vec, mtype, scope, req.role, pii_terms,
                                                                     (rec.event_start, rec.event_end))
            if dup is not None:
                self.store.set_payload([dup.id], {**touch_patch(dup, req.ts, updated=True),
                                                  **merged_kind_patch(dup, mtype, imp)})
                self.superseder.confirm_if_repeated(dup, req.ts)
                return WriteResult(WriteOutcome.MERGED.value, dup.id, f"duplicate_of:{dup.id}", importance=imp,
                                   memory_type=mtype.value, redactions=kinds)
            # 'she's seven, not six' carries no marker word of the rules: the explicit pattern counts too
            explicit = sig.correction or EXPLICIT_CORRECTION.search(clean) is not None
            if explicit:
                # a dated past day ('last night', 'on Friday') is one episode, not a change of habit
                episode = rec.event_end is not None and rec.event_end <= req.ts
                # an uncurated remark retires nothing: what it would retire it links instead (ranked below it)
                related, links = self.corrections.examine(clean, vec, scope, req.metadata, req.role, episode,
                                                          archive=not below)
                superseded.extend(pid for pid, _, _ in related)
                evidence.extend(ev for _, _, ev in related)
                if links:  # older statements of the replaced value it does not archive: ranked below it
                    corrects = [ev["id"] for ev in links]
                    evidence.extend(links)
                if related and req.hint is None:
                    mtype = MemoryType(related[0][1])  # a correction replaces a memory of the same kind
            if self.fact_corrections.enabled and reply_to is None and (
                    not below or self.config.write.fact_correction_below_threshold):
                # 'actually my shipping address changed, send things to ...' retires the shipping_address fact it
                # names (write/fact_correction.py); the statement stays a memory of its own kind
                for ev in self.fact_corrections.find(clean, vec, scope, req.metadata, req.role):
                    if ev["id"] not in superseded:
                        superseded.append(ev["id"])
                        evidence.append(ev)
        meta = rec.metadata
        if corrects:  # read by the retrieve stale stage (retrieve/stale.py demote_corrected)
            meta = {**meta, "_corrects": corrects}
        if mtype != MemoryType.FACT and not superseded and not corrects:
            # 'just finished moving to Shenzhen' replaces 'I live in Chengdu': linked, nothing archived
            replaced = self.changes.find(clean, vec, scope, req.metadata, req.role, rec.event_start)
            if replaced:
                # a start ('just started at Tencent') is weaker evidence: used only for a present-tense question
                changed = [ev["id"] for ev in replaced if ev["rule"] != "started_state"]
                started = [ev["id"] for ev in replaced if ev["rule"] == "started_state"]
                meta = {**meta, **({"_replaces": changed} if changed else {}), **({"_succeeds": started} if started else {})}
                evidence.extend(replaced)
        if mtype != MemoryType.FACT and req.role == "user" and rules.is_constraint(clean, sig):
            meta = {**meta, "_kind": "constraint"}
        if req.role == "user" and self.categories.enabled:  # what a request of that kind will need (issue 16)
            labels = self.categories.fact_labels(stored_vec, rec.fact_key)
            if labels:
                meta = {**meta, "_category": labels[0].name}
                if len(labels) > 1:  # a close call between neighbouring kinds: a request of either finds it
                    meta["_categories"] = [lb.name for lb in labels]
        rec = replace(rec, memory_type=mtype, metadata=meta, supersedes=tuple(superseded))
        if (superseded or corrects) and rec.event_start is None:
            rec = self._inherit_event_time(rec, superseded + corrects)
        upsert_records(self.store, [rec], stored_vec[None, :], self.config.keyword)
        if superseded:
            self._supersede_or_drop(superseded, rec.id, req.ts)
        return WriteResult(WriteOutcome.STORED.value, rec.id, "supersedes" if superseded else "", tuple(superseded),
                           importance=imp, memory_type=mtype.value, redactions=kinds, evidence=tuple(evidence))
