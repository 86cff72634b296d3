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

__all__ = ["FactCorrectionFinder", "FactCorrectionParams", "FactVerdict"]

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

    @classmethod
    def from_config(cls, cfg: WriteSection) -> FactCorrectionParams:
        for name in ("fact_correction_similarity", "fact_correction_value_share", "fact_correction_subject_share"):
            if not 0.0 <= float(getattr(cfg, name)) <= 1.0:
                raise ConfigError(f"write.{name} must be in [0, 1]", key=f"write.{name}")
        if cfg.fact_correction_subject_min_terms < 1:
            raise ConfigError("write.fact_correction_subject_min_terms must be >= 1",
                              key="write.fact_correction_subject_min_terms")
        words = [w.strip() for w in cfg.fact_correction_one_off if w.strip()]
        one_off = re.compile("|".join(rf"\b{re.escape(w)}\b" if w.isascii() else re.escape(w) for w in words),
                             re.IGNORECASE) if words else None
        return cls(bool(cfg.fact_correction_enabled), float(cfg.fact_correction_similarity),
                   float(cfg.fact_correction_value_share), float(cfg.fact_correction_subject_share),
                   int(cfg.fact_correction_subject_min_terms), one_off)


@dataclass(frozen=True)
class FactVerdict:
    """One fact under a statement: the archive ``evidence`` dict (``id``, ``rule`` = 'fact_correction',
    ``basis``, ``fact_key``, ``share``, ``named_terms``, ``similarity``, ``span``, ``archived`` True), or
    None and the reason it is ``refused``."""

    evidence: dict[str, Any] | None = None
    refused: str = ""


def _terms(text: str) -> set[str]:
    return number_terms(set(content_terms(text)) - rules.MARKER_TERMS)


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
        return out

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
        subject = countable_terms(_terms(old_text) - value - term_hits(_terms(old_text), value))
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
            if len(subject) < self.params.subject_min_terms or k_share < self.params.subject_share:
                refused = f"names neither the value (share {v_share:.2f}) nor the subject (share {k_share:.2f})"
                continue
            if rules.polarity(META_MARKER.sub(" ", s)):
                refused = "negates something other than the value"  # '我的收货地址没变'
                continue
            if not countable_terms(said - term_hits(said, subject)):
                refused = "names the subject but no new value"
                continue
            return FactVerdict(evidence=self._evidence(memory_id, payload, "fact_key", k_share, carried, sim, s))
        return FactVerdict(refused=refused)

    @staticmethod
    def _evidence(memory_id: str, payload: dict[str, Any], basis: str, share: float, named: Set[str], sim: float,
                  span: str) -> dict[str, Any]:
        return {"id": memory_id, "rule": "fact_correction", "basis": basis, "fact_key": payload.get("fact_key"),
                "share": round(share, 4), "named_terms": sorted(named), "similarity": round(sim, 4),
                "span": span.strip(), "archived": True}
