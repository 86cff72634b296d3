"""Spoken corrections of structured facts (issue 16, failure classes 6 and 9).

A fact is written with a key and a value (``add(text, fact={"key": "shipping_address", "value": ...})``,
:class:`memory_engine.write.facts.FactBook`: one current value per key). The user later corrects it in
plain speech, without a fact write: "actually my shipping address changed, send things to 14 Elm Road
now", "不对，我已经搬到重庆了，不在成都了". Until now the fact stayed current: ``get_fact`` and retrieval
returned the stale value. :class:`FactCorrectionFinder` finds the facts such a statement names and the
write pipeline supersedes them (archive mode: status superseded, ``superseded_by`` the correction,
undoable for ``write.undo_days`` through ``MemoryEngine.undo_forget``; the retrieve stages see only
current memories, so the stale value leaves the top k).

What happens to the value: ``get_fact(key)`` returns None after the correction, not a new value. The
correction's words are kept as a memory of their own (retrieval finds them for "where do my parcels go?"),
but no typed value is extracted: an address, a courier or a diet said in free speech has no parser that
could say with confidence which span is the new value, and a wrong value returned as current is worse
than none. A caller who knows the new value writes it as a fact as before.

A statement retires a fact only on evidence that it names it (data rule of issue 16: never retire what a
correction does not name). One sentence of the statement (:func:`memory_engine.write.rules.sentences`) must

* be the user's own words (role ``user``, the fact's speaker, :func:`~memory_engine.write.correction.same_speaker`),
  not a question, not a condition or hypothetical ('if I moved to Seattle', '如果我搬到深圳的话',
  :data:`~memory_engine.write.correction.CONDITION`), not someone else's words ('my doctor told me',
  :data:`~memory_engine.write.correction.REPORTED`), not scoped to one occasion ('for this one order',
  '这次', ``write.fact_correction_one_off``), not about a person the fact does not name
  ('老王住的是重庆，不是成都', 'my sister moved');
* say that something changed: a correction marker (:func:`~memory_engine.write.intents.correction_strength`)
  or a reported change (:func:`~memory_engine.write.intents.reports_change`: 'changed', 'now', '现在', '改了');
* name the fact, by one of two bases (the evidence's ``basis``):

  - ``fact_value``: it negates or replaces the stored value: at least ``write.fact_correction_value_share`` of
    the value's countable terms (numbers normalised, :func:`~memory_engine.write.supersede.number_terms`) are in a
    negated clause ('不在成都了', "not vegetarian anymore") or in the replaced phrase ('FedEx instead of UPS');
    a fact whose text is itself negated ('我不吃辣') is never retired by a negation of its value (the statement
    agrees with it), nor is a fact by a negation of another thing's value (:func:`negates_another_thing`: 'the
    meeting is not at Acme Corp', '不住在成都的酒店了');
  - ``fact_key``: it carries the fact's subject words (the fact text's countable terms that are not the value's:
    'My shipping address is X' -> {ship, address}), at least ``write.fact_correction_subject_min_terms`` of them and
    a share of at least ``write.fact_correction_subject_share``, says something beyond them (a new value) and
    negates nothing ('我的收货地址没变' names the subject but changes nothing);

  - ``fact_key_partial`` (``write.fact_correction_partial_subject``): as ``fact_key``, but carrying only part of the
    subject words ('my address changed' vs 'My shipping address is X') or all of a subject shorter than
    ``write.fact_correction_subject_min_terms`` ('快递换了' vs '我的快递默认用中通'), at least
    ``write.fact_correction_partial_min_terms`` of the fact's *wide subject* (its subject words and its key's words,
    :func:`wide_subject`), among them the subject's head (:meth:`FactCorrectionFinder.heads`: the last word of the
    typed key, and for a Chinese fact the subject word nearest to it: 'my work schedule changed' names 'work' of
    work_email, not its head 'email', and retires nothing). Such a sentence names a fact only when it can mean one: :meth:`FactCorrectionFinder.find`
    retires it only when no fact is named on another basis and it is the one current fact of the owner (all of them
    read, up to ``write.fact_correction_partial_scan``) whose wide subject holds any of the sentence's words; with a
    home and a shipping address, 'my address changed' retires neither (losing data is the worst bug);

* and, when it replaces something ('by email instead of by post', '不用花呗'), replace this fact's value:
  a replacement names what it replaces, so a fact it does not name stays whatever its subject;
* be similar to the fact's text, rescaled, at least ``write.fact_correction_similarity``.

The delivery time ("change the delivery time to evenings") names neither the address's value nor its
subject words (delivery, time vs shipping, address), so the address fact stays.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Set
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..config import WriteSection
from ..embedding import CachedEmbedder
from ..errors import ConfigError
from ..models import MemoryType
from ..scope import Scope
from ..store.base import VectorStore
from ..text import content_terms, ends_as_question
from . import rules
from .correction import CONDITION, META_MARKER, REPORTED, countable_terms, same_speaker, term_hits
from .intents import correction_strength, reports_change
from .supersede import _about_someone_else, number_terms

__all__ = ["PARTIAL", "FactCorrectionFinder", "FactCorrectionParams", "FactVerdict", "key_head", "subject_terms",
           "wide_subject"]

log = logging.getLogger(__name__)

#: clause boundaries inside a sentence: a negation governs its own clause only
_CLAUSE = re.compile(r"[,，;；:：、]|\b(?:but|and|so)\b", re.IGNORECASE)
#: 'instead of Y', 'rather than Y', '不是Y', '不用Y', '而不是Y', 'not Y' at a clause end: the replaced phrase
_REPLACED = re.compile(r"\b(?:instead of|rather than)\s+(.+)$|(?:而不是|不是|不用|不要|别用)(.+)$", re.IGNORECASE)


@dataclass(frozen=True)
class FactCorrectionParams:
    """The ``write.fact_correction_*`` settings (see :class:`memory_engine.config.WriteSection`).
    :meth:`from_config` raises ConfigError for a share or similarity outside [0, 1] or min terms < 1."""

    enabled: bool
    similarity: float
    value_share: float
    subject_share: float
    subject_min_terms: int
    #: ``write.fact_correction_one_off`` as one pattern (None = off)
    one_off: re.Pattern[str] | None = None
    #: ``write.fact_correction_partial_subject`` / ``_partial_min_terms`` / ``_partial_scan``
    partial: bool = False
    partial_min_terms: int = 1
    partial_scan: int = 500

    @classmethod
    def from_config(cls, cfg: WriteSection) -> FactCorrectionParams:
        for name in ("fact_correction_similarity", "fact_correction_value_share", "fact_correction_subject_share"):
            if not 0.0 <= float(getattr(cfg, name)) <= 1.0:
                raise ConfigError(f"write.{name} must be in [0, 1]", key=f"write.{name}")
        if cfg.fact_correction_partial_min_terms < 1 or cfg.fact_correction_partial_scan < 1:
            raise ConfigError("write.fact_correction_partial_min_terms and _partial_scan must be >= 1",
                              key="write.fact_correction_partial_min_terms")
        if cfg.fact_correction_subject_min_terms < 1:
            raise ConfigError("write.fact_correction_subject_min_terms must be >= 1",
                              key="write.fact_correction_subject_min_terms")
        words = [w.strip() for w in cfg.fact_correction_one_off if w.strip()]
        one_off = re.compile("|".join(rf"\b{re.escape(w)}\b" if w.isascii() else re.escape(w) for w in words),
                             re.IGNORECASE) if words else None
        return cls(bool(cfg.fact_correction_enabled), float(cfg.fact_correction_similarity),
                   float(cfg.fact_correction_value_share), float(cfg.fact_correction_subject_share),
                   int(cfg.fact_correction_subject_min_terms), one_off, bool(cfg.fact_correction_partial_subject),
                   int(cfg.fact_correction_partial_min_terms), int(cfg.fact_correction_partial_scan))


@dataclass(frozen=True)
class FactVerdict:
    """One fact under a statement: the archive ``evidence`` dict (``id``, ``rule`` = 'fact_correction',
    ``basis``, ``fact_key``, ``share``, ``named_terms``, ``similarity``, ``span``, ``archived`` True), or
    None and the reason it is ``refused``."""

    evidence: dict[str, Any] | None = None
    refused: str = ""


def _terms(text: str) -> set[str]:
    return number_terms(set(content_terms(text)) - rules.MARKER_TERMS)


#: basis of a correction that names part of a fact's subject (module docstring)
PARTIAL = "fact_key_partial"
_KEY_SPLIT = re.compile(r"[._\-/:]+")
_CJK_WORD = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]{2,}")


def subject_terms(payload: dict[str, Any]) -> set[str]:
    """The subject words of a fact payload: its text's countable terms that are not its value's
    ('My shipping address is X' -> {ship, address})."""
    old_text = str(payload.get("content") or "")
    value = _terms(str(payload.get("fact_value") or ""))
    return countable_terms(_terms(old_text) - value - term_hits(_terms(old_text), value))


def key_head(payload: dict[str, Any]) -> set[str]:
    """The countable terms of the last word of a fact's typed key: the head of the noun phrase the key names
    ('shipping_address' -> {address}, 'default_courier' -> {courier}, 'user.city' -> {city}); empty without a key."""
    words = [w for w in _KEY_SPLIT.split(str(payload.get("fact_key") or "")) if w.strip()]
    return countable_terms(_terms(words[-1])) if words else set()


def wide_subject(payload: dict[str, Any]) -> set[str]:
    """:func:`subject_terms` and the countable terms of the fact's typed key, its separators as spaces
    ('shipping_address' -> {ship, address}, 'default_courier' -> {default, courier}): what a partial correction
    may name, and what makes two facts candidates for the same partial correction."""
    key = _KEY_SPLIT.sub(" ", str(payload.get("fact_key") or ""))
    return subject_terms(payload) | countable_terms(_terms(key))


def negated_in_clauses(sentence: str) -> set[str]:
    """Terms (numbers normalised) a sentence negates, clause by clause: the words after the first negation
    of each clause up to the clause's end, the meta markers ('不对', '搞错了', 'correction') left out.
    '不对，我已经搬到重庆了，不在成都了' -> {成都 ...}; "I'm not vegetarian anymore, I eat fish" -> {vegetarian}."""
    out: set[str] = set()
    for clause in _CLAUSE.split(META_MARKER.sub(" ", sentence)):
        m = rules.NEGATION.search(clause or "")
        if m is not None:
            out |= _terms(clause[m.end():])
    return out


#: a value that modifies a noun right after it ('成都的酒店', "Acme's office"): the clause is about that noun
_MODIFIES = re.compile(r"\s*(?:的|'s\b)\s*\w", re.IGNORECASE)


def negates_another_thing(sentence: str, value: str, value_terms: Set[str], fact_terms: Set[str]) -> bool:
    """Whether a clause of ``sentence`` that negates the fact's value (``value_terms`` among its negated terms) is
    about something else than the fact: a subject before the negation that the fact's text (``fact_terms``) does
    not hold ('the meeting is not at Acme Corp'), or the value a modifier of a noun after it ('不住在成都的酒店了',
    "not at Acme's office"). Such a clause negates where the meeting or the hotel is, not the user's value."""
    for clause in _CLAUSE.split(META_MARKER.sub(" ", sentence)):
        m = rules.NEGATION.search(clause or "")
        if m is None or not term_hits(value_terms, _terms(clause[m.end():])):
            continue
        before = countable_terms(_terms(clause[: m.start()]))
        if before - term_hits(before, fact_terms | value_terms):
            return True
        at = clause.lower().find(value.lower(), m.end()) if value else -1
        if at >= 0 and _MODIFIES.match(clause, at + len(value)):
            return True
    return False


def replaced_terms(sentence: str) -> set[str] | None:
    """Terms of what a sentence says it replaces ('FedEx instead of UPS' -> {ups}, '改用信用卡，不用花呗' ->
    {花呗}), the rest of its clause; None when it replaces nothing."""
    for clause in _CLAUSE.split(sentence):
        m = _REPLACED.search(clause or "")
        if m is not None:
            return _terms(m.group(1) or m.group(2) or "")
    return None


class FactCorrectionFinder:
    """``find(clean, vec, scope, metadata, role)``: the current facts of the owner a user statement
    corrects (module docstring), as evidence dicts in similarity order, among the ``retrieval.route_limit``
    facts nearest to it. Raises ConfigError at construction for bad ``write.fact_correction_*`` settings
    or a limit < 1."""

    def __init__(self, store: VectorStore, embedder: CachedEmbedder, cfg: WriteSection, limit: int) -> None:
        if limit < 1:
            raise ConfigError("retrieval.route_limit must be >= 1", key="retrieval.route_limit")
        self.store, self.embedder, self.limit = store, embedder, limit
        self.params = FactCorrectionParams.from_config(cfg)

    @property
    def enabled(self) -> bool:
        return self.params.enabled

    def find(self, clean: str, vec: np.ndarray, scope: Scope, metadata: dict[str, Any] | None = None,
             role: str = "user") -> list[dict[str, Any]]:
        if not self.params.enabled or role != "user" or ends_as_question(clean):
            return []
        if not any(self._changes(s) for s in rules.sentences(clean)):
            return []  # nothing in it says a value changed: no store access
        flt = scope.filter(memory_types=(MemoryType.FACT.value,))
        out: list[dict[str, Any]] = []
        for p in self.store.search_dense(vec.tolist(), flt, self.limit):
            if not scope.owns(p):
                continue  # defence in depth: the filter already isolates
            verdict = self.judge(clean, p.id, p.payload, self.embedder.rescale(p.score), metadata or {}, role)
            if verdict.evidence is not None:
                out.append(verdict.evidence)
            else:
                log.debug("statement %r does not retire fact %s: %s", clean, p.id, verdict.refused)
        return self._unambiguous(out, scope)

    def _unambiguous(self, found: list[dict[str, Any]], scope: Scope) -> list[dict[str, Any]]:
        """``found`` without the partial-subject evidence (basis ``fact_key_partial``) that could mean more than
        one fact (module docstring): kept only when it is the only evidence and its fact is the one current fact
        of the owner whose :func:`wide_subject` holds any term of the sentence, all facts read (at most
        ``write.fact_correction_partial_scan``; more = refused)."""
        partial = [e for e in found if e["basis"] == PARTIAL]
        if not partial:
            return found
        named = [e for e in found if e["basis"] != PARTIAL]
        if named or len(partial) > 1:
            log.info("partial correction refused: %d facts could be meant", len(named) + len(partial))
            return named
        ev = partial[0]
        said = _terms(ev["span"])
        rows = self.store.scroll(scope.filter(memory_types=(MemoryType.FACT.value,), embedding_version=None),
                                 limit=self.params.partial_scan + 1)
        if len(rows) > self.params.partial_scan:
            log.info("partial correction refused: more than %d facts to rule out", self.params.partial_scan)
            return []
        meant = [p.id for p in rows if scope.owns(p) and p.payload.get("fact_key") is not None
                 and term_hits(wide_subject(p.payload), said)]
        if meant != [ev["id"]]:
            log.info("partial correction %r refused: it could mean facts %s", ev["span"], meant)
            return []
        return [ev]

    def heads(self, payload: dict[str, Any]) -> set[str]:
        """The head words of a fact's subject, what a partial correction must say: its key's head
        (:func:`key_head`) and, for a fact said in Chinese under an English key, the one Chinese subject word the
        embedder puts nearest to that head ('我的快递默认用中通' / default_courier -> 快递, not 默认; '我家的地址是…' /
        home_address -> 地址, not 家). Chinese noun phrases are head-final but a subject word need not be a noun
        (默认 'by default'), so the key decides which word is the head. Empty without a key."""
        head = key_head(payload)
        zh = sorted(t for t in subject_terms(payload) if _CJK_WORD.fullmatch(t))
        if not head or not zh:
            return head
        vecs = self.embedder.embed_documents([" ".join(sorted(head)), *zh])
        sims = vecs[1:] @ vecs[0]
        return head | {zh[int(np.argmax(sims))]}

    @staticmethod
    def _changes(sentence: str) -> bool:
        return correction_strength(sentence, rules.CORRECTION.search(sentence) is not None) is not None or \
            reports_change(sentence)

    def judge(self, clean: str, memory_id: str, payload: dict[str, Any], sim: float,
              metadata: dict[str, Any], role: str = "user") -> FactVerdict:
        """Whether statement ``clean`` retires the fact in ``payload`` (rescaled similarity ``sim`` in [0, 1]):
        the first of its sentences that names the fact with a basis (module docstring). Pure: no store access."""
        if role != "user" or not same_speaker(role, metadata, payload, clean):
            return FactVerdict(refused="another speaker's fact")
        if payload.get("memory_type") != MemoryType.FACT.value or payload.get("fact_key") is None:
            return FactVerdict(refused="not a fact")
        if sim < self.params.similarity:
            return FactVerdict(refused=f"similarity {sim:.2f} below write.fact_correction_similarity")
        old_text = str(payload.get("content") or "")
        old_terms = set(payload.get("terms") or ()) or set(content_terms(old_text))
        value = _terms(str(payload.get("fact_value") or ""))
        value_c = countable_terms(value) or value
        subject = subject_terms(payload)
        wide = wide_subject(payload) if self.params.partial else set()
        old_negated = rules.polarity(old_text)
        refused = "no sentence says a value changed"
        for s in rules.sentences(clean):
            if not self._changes(s):
                continue
            if CONDITION.search(s):
                refused = "a condition"
                continue
            if self.params.one_off is not None and self.params.one_off.search(s):
                refused = "one occasion"  # 'for this one order, use JD instead': the default stays
                continue
            if REPORTED.search(META_MARKER.sub(" ", s)):  # '说错了' is the speaker's own repair, not reported speech
                refused = "someone else's words"
                continue
            if _about_someone_else(s, old_text, old_terms):
                refused = "about someone the fact does not name"
                continue
            replaced = replaced_terms(s)
            if replaced is not None and not (value_c and term_hits(value_c, replaced)):
                refused = "replaces another value"  # 'by email instead of by post' replaces no courier
                continue
            named = term_hits(value_c, negated_in_clauses(s) | (replaced or set())) if not old_negated else set()
            if named and not (replaced and term_hits(value_c, replaced)) and negates_another_thing(
                    s, str(payload.get("fact_value") or ""), value_c, _terms(old_text)):
                refused = "negates the value of something else"  # 'the meeting is not at Acme Corp'
                continue
            v_share = len(named) / len(value_c) if value_c else 0.0
            if named and v_share >= self.params.value_share:
                return FactVerdict(evidence=self._evidence(memory_id, payload, "fact_value", v_share, named, sim, s))
            said = _terms(s)
            carried = term_hits(subject, said)
            k_share = len(carried) / len(subject) if subject else 0.0
            basis = "fact_key"
            if len(subject) < self.params.subject_min_terms or k_share < self.params.subject_share:
                part = term_hits(wide, said)
                if not self.params.partial or len(part) < self.params.partial_min_terms:
                    refused = f"names neither the value (share {v_share:.2f}) nor the subject (share {k_share:.2f})"
                    continue
                if not term_hits(self.heads(payload), said):
                    # 'my work schedule changed' shares 'work' with work_email, 'the shipping on my order changed'
                    # 'ship' with shipping_address: a modifier of the subject names another thing
                    refused = f"names part of the subject ({', '.join(sorted(part))}) but not its head"
                    continue
                # part of the subject: retired only when the owner has no other fact it could mean (find)
                basis, subject, carried = PARTIAL, wide, part
                k_share = len(part) / len(wide)
            if rules.polarity(META_MARKER.sub(" ", s)):
                refused = "negates something other than the value"  # '我的收货地址没变'
                continue
            if not countable_terms(said - term_hits(said, subject)):
                refused = "names the subject but no new value"
                continue
            return FactVerdict(evidence=self._evidence(memory_id, payload, basis, k_share, carried, sim, s))
        return FactVerdict(refused=refused)

    @staticmethod
    def _evidence(memory_id: str, payload: dict[str, Any], basis: str, share: float, named: Set[str], sim: float,
                  span: str) -> dict[str, Any]:
        return {"id": memory_id, "rule": "fact_correction", "basis": basis, "fact_key": payload.get("fact_key"),
                "share": round(share, 4), "named_terms": sorted(named), "similarity": round(sim, 4),
                "span": span.strip(), "archived": True}
