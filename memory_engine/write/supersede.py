"""Supersede and conflict (seed 000 step 4, seed 004): a correction retires the
older memories it names; in ``pending_confirmation`` mode they wait until the
new value is repeated.

Which memory a correction names is decided with evidence by
:mod:`memory_engine.write.correction` (:class:`CorrectionFinder`); the
*same subject* rule of consolidation's conflicts lives here (:class:`SubjectRule`):
two memories are about the same thing when their model-rescaled similarity is >=
``write.supersede_similarity`` and they share content terms (share = |A n B| /
min(|A|, |B|) >= ``write.supersede_keyword_overlap``, correction marker words
excluded); a similarity >= ``write.supersede_strong_similarity`` may stand in for
the shared terms where no correction text names the subject.

Data rule for a contrast ('X, not Y', 'X，不是Y', :func:`~memory_engine.write.intents.contrast_replacement`):
it restates only the corrected value, so it retires an older memory only when that memory
holds no content terms beyond the subject they share and Y ("My dentist appointment is on
Tuesday at 3pm" <- "... is Thursday at 3pm, not Tuesday"). An older memory with more in it
("dentist appointment next Tuesday at 3pm" <- "Actually the dentist is at 4pm, not 3pm")
stays current: archiving it would lose "next Tuesday"; the same holds for a contrast beside another marker
("Correction: the Berlin flight is June 14, not June 12", '更正一下，去武汉是下周六，不是下周五',
:func:`~memory_engine.write.intents.contrast_phrase`). It is *linked* instead, like an
older memory that states Y without a shared subject term ("My daughter is six" <- "Actually
she's seven, not six"): the correction's ``metadata._corrects`` lists its id, the write
result's evidence says so (``rule`` = ``corrects``, ``archived`` False) and the retrieve
stale stage ranks it below the correction whenever both are candidates
(:func:`memory_engine.retrieve.stale.demote_corrected`). Y is matched on content terms
with numbers normalised (:func:`number_terms`: 六 / 6 / six).

Archiving needs strong evidence that the correction names the older memory (issue 16 failure
class 9: losing data is the worst bug). The evidence dict says which (``basis``): ``replaced``
(the older memory states the replaced value Y, above), ``negation`` (the correction's clause
negates what the older memory affirms: 'I no longer live in Munich', '以后不要再推荐恐怖片';
'不对' / '搞错' / '不是X而是Y' negate no statement, :data:`~memory_engine.write.correction.META_MARKER`)
or ``restatement`` (it restates at least ``write.supersede_restated_share`` of the older memory's
terms, :func:`~memory_engine.write.correction.restated_share`: 'Change to Thursdays at 4pm for the
team weekly sync'; a restatement that leaves a name of the older memory unrestated must put a name of its own in
its place: 'switched to decaf at work' restates 'work' of 'I work at Amazon' and corrects nothing there), with the
share (``restated``) and the corrected clause (``span``). Nothing is
archived or linked for a marker in a condition or hypothetical ('If I moved to London I would no
longer...', '如果...', '的时候'), in someone else's words ('My doctor told me...', '我同事说'), nor for an older memory about a person the
correction does not name ('My brother is moving to Seattle' for 'Actually I moved to Seattle'), nor, without a
replaced value, when the words before it name another subject than the older memory ('My brother
switched to...', '隔壁组改用', '我儿子的同学不再...'); a replacement ('instead of', 'rather than') in a
dated past episode ('Last night I watched a film rather than reading') replaces no habit. An archive
is undoable for ``write.undo_days`` (:class:`Superseder`).
"""

from __future__ import annotations

import calendar
import logging
import re
from collections.abc import Iterable, Set
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..config import LifecycleSection, SupersedeMode, WriteSection
from ..embedding import CachedEmbedder
from ..errors import ConfigError
from ..models import MemoryRecord, MemoryStatus, MemoryType
from ..scope import Scope
from ..store.base import VectorStore
from ..text import (
    _CJK,
    companions,
    content_terms,
    entities,
    identifiers,
    named,
    people,
    relatives,
    stem_offset,
)
from . import rules
from .correction import (
    CONDITION,
    META_MARKER,
    REPORTED,
    SupersedeParams,
    countable_terms,
    judge,
    marker_context,
    restated_share,
    same_speaker,
    speaker_of,
    subject_terms,
    term_hits,
)
from .intents import (
    EXPLICIT_CORRECTION,
    about_speaker,
    contrast_phrase,
    contrast_replacement,
    correction_strength,
    marker_clause,
    replaced_phrase,
)
from .records import deprecate_patch

__all__ = ["Claim", "CorrectionFinder", "SubjectRule", "Superseder", "Verdict", "number_terms", "term_share"]

_EN_NUMBERS = {w: str(i) for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty".split())}
# terms are stemmed ('twelve' -> 'twelv'): the stems name the numbers too
_EN_NUMBERS |= {t: n for w, n in list(_EN_NUMBERS.items()) for t in content_terms(w)}
_ZH_DIGITS = {c: i for i, c in enumerate("零一二三四五六七八九")} | {"两": 2}
_ZH_NUMBER = re.compile(r"^([零一二两三四五六七八九十]{1,3})(.*)$")


def _zh_number(s: str) -> int | None:
    """'六' -> 6, '十二' -> 12, '二十' -> 20, '二十三' -> 23; None for anything else."""
    if "十" not in s:
        return _ZH_DIGITS[s] if len(s) == 1 else None
    tens, _, ones = s.partition("十")
    if len(tens) > 1 or len(ones) > 1:
        return None
    return (_ZH_DIGITS.get(tens, 1) if tens else 1) * 10 + (_ZH_DIGITS.get(ones, 0) if ones else 0)


_ORDINAL = re.compile(r"(\d{1,4})(?:st|nd|rd|th)")


def number_terms(terms: Iterable[str]) -> set[str]:
    """``terms`` with numbers normalised so a value matches across spellings: 'six' -> {'6'},
    '六岁' -> {'6岁', '6'}, '9' -> {'9'}, an ordinal '8th' -> {'8th', '8'} (a day of the month: 'December 8' is
    'the 8th'); any other term as it is."""
    out: set[str] = set()
    for t in terms:
        if (o := _ORDINAL.fullmatch(t)) is not None:
            out.update({t, o.group(1)})
            continue
        if t in _EN_NUMBERS:
            out.add(_EN_NUMBERS[t])
            continue
        m = _ZH_NUMBER.match(t)
        n = _zh_number(m.group(1)) if m else None
        if m is not None and n is not None:
            out.update({f"{n}{m.group(2)}", str(n)})
        else:
            out.add(t)
    return out


def term_share(a: Set[str], b: Set[str]) -> float:
    """Shared content terms of two memories, 0..1: |a n b| / min(|a|, |b|) (0 when either is empty)."""
    return len(a & b) / max(1, min(len(a), len(b)))


log = logging.getLogger(__name__)

class SubjectRule:
    """The same-subject test (module docstring) with the ``write`` section's thresholds.
    Raises ConfigError at construction for a threshold outside [0, 1]."""

    def __init__(self, cfg: WriteSection) -> None:
        for name in ("supersede_similarity", "supersede_keyword_overlap", "supersede_strong_similarity"):
            if not 0.0 <= float(getattr(cfg, name)) <= 1.0:
                raise ConfigError(f"write.{name} must be in [0, 1]", key=f"write.{name}")
        self.similarity = cfg.supersede_similarity
        self.overlap = cfg.supersede_keyword_overlap
        self.strong = cfg.supersede_strong_similarity

    def names(self, sim: float, new_terms: Set[str], old_terms: Set[str]) -> bool:
        """A correction names an old memory: similar enough AND sharing terms."""
        return sim >= self.similarity and term_share(new_terms, old_terms) >= self.overlap

    def related(self, sim: float, a: Set[str], b: Set[str]) -> bool:
        """Two statements are about the same thing: similar enough and sharing terms, or strongly similar."""
        if sim < self.similarity:
            return False
        return term_share(a, b) >= self.overlap or sim >= self.strong


@dataclass(frozen=True)
class Claim:
    """What a correction text says, read once before its older memories are judged
    (:meth:`CorrectionFinder.evidence_basis`): the ``clean`` text, its author's ``role`` and
    metadata ``meta``, ``strength`` ('explicit' / 'weak', :func:`~memory_engine.write.intents.correction_strength`),
    the corrected ``clause`` and the words before it in its sentence (``clause_before``), whether
    the sentence is a ``conditional``, the ``replaced`` phrase of a replacement (None otherwise) with its
    content terms (``replaced_terms``; ``replaced_nums`` numbers normalised), whether it is a
    ``contrast`` ('X, not Y'), the content terms of the corrected part (``new_terms``) and of the whole
    text (``full_terms``), marker words removed, its long identifiers (``new_idents``) and whether the
    clause negates something beyond the meta markers (``neg_new``)."""

    clean: str
    role: str
    meta: dict[str, Any]
    strength: str
    clause: str
    clause_before: str
    conditional: bool
    replaced: str | None
    replaced_terms: frozenset[str]
    replaced_nums: frozenset[str]
    contrast: bool
    new_terms: frozenset[str]
    full_terms: frozenset[str]
    new_idents: frozenset[str]
    neg_new: bool

    @property
    def span(self) -> str:
        """The corrected clause as the evidence reports it."""
        return self.clause.strip()


@dataclass(frozen=True)
class Verdict:
    """One older memory under a correction: the archive ``evidence`` dict, or the ``link`` a
    replacement leaves on a memory it may not archive (``archived`` False), and why it is not
    archived (``refused``, empty when it is; written to the debug log)."""

    evidence: dict[str, Any] | None = None
    link: dict[str, Any] | None = None
    refused: str = ""


def _long_identifiers(text: str) -> set[str]:
    return {i for i in identifiers(text) if sum(ch.isdigit() for ch in i) >= 3}


class CorrectionFinder:
    """``find(clean, vec, scope, metadata, role)``: older current memories (semantic, episodic,
    procedural) a correction replaces, as (memory id, memory type, evidence dict) triples in
    similarity order, among the ``retrieval.route_limit`` nearest (issue 16: a correction
    retires only what it names, with evidence). The decision is
    :func:`memory_engine.write.correction.judge` on the corrected clause
    (:func:`memory_engine.write.intents.marker_clause`): only the same speaker's memories
    (:func:`~memory_engine.write.correction.same_speaker`), never from an assistant or tool
    text; a weak marker ('cancel', 'actually', "don't", '不要') only in a first-person clause
    that contradicts a stated preference; long identifiers (>= 3 digits) must not differ; a
    replacement ('X instead of Y', 'X, not Y') only a memory that names Y and shares the subject
    apart from Y; and only with a ``basis`` in its evidence (module docstring). ``episode``: the
    correction is dated to a past day (its ``event_end`` is before it was said)."""

    TYPES = (MemoryType.SEMANTIC.value, MemoryType.EPISODIC.value, MemoryType.PROCEDURAL.value)

    def __init__(self, store: VectorStore, embedder: CachedEmbedder, cfg: WriteSection, limit: int) -> None:
        if limit < 1:
            raise ConfigError("retrieval.route_limit must be >= 1", key="retrieval.route_limit")
        self.store, self.embedder, self.limit = store, embedder, limit
        self.rule = SubjectRule(cfg)
        if not 0.0 <= cfg.supersede_restated_share <= 1.0:
            raise ConfigError("write.supersede_restated_share must be in [0, 1]", key="write.supersede_restated_share")
        self.restated = cfg.supersede_restated_share
        self.restated_min_terms = cfg.supersede_restated_min_terms
        self.params = SupersedeParams(cfg.supersede_similarity, cfg.supersede_scope_overlap,
                                      cfg.supersede_strong_similarity, cfg.supersede_min_shared)

    def find(self, clean: str, vec: np.ndarray, scope: Scope, metadata: dict[str, Any] | None = None,
             role: str = "user", episode: bool = False) -> list[tuple[str, str, dict[str, Any]]]:
        return self.examine(clean, vec, scope, metadata, role, episode)[0]

    def examine(self, clean: str, vec: np.ndarray, scope: Scope, metadata: dict[str, Any] | None = None,
                role: str = "user", episode: bool = False, archive: bool = True
                ) -> tuple[list[tuple[str, str, dict[str, Any]]], list[dict[str, Any]]]:
        """(what :meth:`find` retires, the older memories the correction only *links*: evidence dicts
        with ``id``, ``rule`` = 'corrects', ``replaced_terms``, ``kept_terms``, ``similarity``,
        ``archived`` False; module docstring). Only a replacement ('X, not Y', 'X instead of Y') links.
        With ``archive`` False (a correction the write gate did not curate, 'Tom works at Airbus, not Boeing'
        at importance 0.5) nothing is retired: what a replacement would retire is linked instead, so the older value still ranks
        below the correction (on 264755c it answered first)."""
        if role != "user":
            return [], []  # what the assistant or a tool said never retires the user's statement
        strength = correction_strength(clean, rules.CORRECTION.search(clean) is not None)
        if strength is None:
            return [], []
        markers = (EXPLICIT_CORRECTION, rules.CORRECTION) if strength == "explicit" else (rules.CORRECTION,)
        clause = marker_clause(clean, *markers)
        start = min(m.start() for m in (rx.search(clean) for rx in markers) if m)
        sentence, said_before, clause_before = marker_context(clean, start)
        if strength == "weak" and not about_speaker(clause_before + clause):
            return [], []  # "don't forget your passion": about someone else, not a change of the speaker's own
        if REPORTED.search(said_before):
            return [], []  # 'My doctor told me I shouldn't drink coffee anymore': someone else's words
        # 'if I moved...', 'once the bridge opens', "when I'm exhausted": what would be, not what changed
        conditional = CONDITION.search(sentence) is not None
        # 'coconut oil instead of butter' may only retire a memory that names butter
        replaced = replaced_phrase(clean) if strength == "explicit" else None
        replaced_terms = set(content_terms(replaced)) - rules.MARKER_TERMS if replaced else set()
        replaced_nums = number_terms(replaced_terms)
        contrast = replaced is not None and contrast_replacement(clean)
        wrong = contrast_phrase(clean) if strength == "explicit" and replaced is None else None
        if wrong is not None and not conditional:
            # 'Correction: the Berlin flight is June 14, not June 12': the contrast beside another marker restates
            # only the corrected value too, so the data rule holds (a richer memory is linked, never archived: the
            # airline, the seat and the conference were lost with 'June 12')
            contrast = True
            replaced_terms = set(content_terms(wrong)) - rules.MARKER_TERMS
        if replaced is not None and not contrast and episode:
            return [], []  # 'Last night I watched a film rather than reading': one evening, no change of habit
        if replaced is None and conditional:
            return [], []
        if strength == "weak":
            sig = rules.signals(clause)
            if not (sig.preference or sig.decision):
                return [], []  # "Actually I didn't expect the concert to be that loud": no stance is negated
        new_terms = set(content_terms(clause)) - rules.MARKER_TERMS
        full_terms = set(content_terms(clean)) - rules.MARKER_TERMS
        if replaced is not None:
            # the replaced value says which memory is meant, not what it is about: the subject must be
            # shared apart from it ('Thursday, not Tuesday' must not retire 'spin class on Tuesday')
            new_terms = full_terms - replaced_terms
        # '不对' / '搞错' / '不是X而是Y' negate no statement: a correction negates what the older memory affirms
        # only through the rest of its clause ('I no longer live in Munich', '以后不要再推荐恐怖片')
        claim = Claim(clean=clean, role=role, meta=metadata or {}, strength=strength, clause=clause,
                      clause_before=clause_before, conditional=conditional, replaced=replaced,
                      replaced_terms=frozenset(replaced_terms), replaced_nums=frozenset(replaced_nums), contrast=contrast,
                      new_terms=frozenset(new_terms), full_terms=frozenset(full_terms),
                      new_idents=frozenset(_long_identifiers(clean)),
                      neg_new=rules.polarity(META_MARKER.sub(" ", clause)))
        out: list[tuple[str, str, dict[str, Any]]] = []
        links: list[dict[str, Any]] = []
        for p in self.store.search_dense(vec.tolist(), scope.filter(memory_types=self.TYPES), self.limit):
            if not scope.owns(p):
                continue  # defence in depth: the filter already isolates
            verdict = self.evidence_basis(claim, p.id, p.payload, self.embedder.rescale(p.score))
            if verdict.evidence is not None and not archive:
                if claim.replaced is None:
                    continue  # only a replacement names its value outright ('我女儿以前的钢琴老师已经不在那家琴行教了')
                links.append({"id": p.id, "rule": "corrects", "replaced_terms": sorted(claim.replaced_terms),
                              "kept_terms": [], "similarity": verdict.evidence.get("similarity"), "archived": False})
            elif verdict.evidence is not None:
                out.append((p.id, p.payload.get("memory_type", MemoryType.SEMANTIC.value), verdict.evidence))
            elif verdict.link is not None:
                links.append(verdict.link)
            if verdict.refused:
                log.debug("correction %r does not retire %s: %s", claim.span, p.id, verdict.refused)
        return out, links

    def evidence_basis(self, c: Claim, memory_id: str, payload: dict[str, Any], sim: float) -> Verdict:
        """Whether correction ``c`` retires the older memory (``payload``, rescaled similarity ``sim``
        in [0, 1]): a :class:`Verdict` with the archive ``evidence`` (``basis`` / ``restated`` / ``span``,
        module docstring), or the ``link`` a replacement leaves on a memory it may not archive, and
        otherwise the reason it is ``refused``. Pure: no store access."""
        if not same_speaker(c.role, c.meta, payload, c.clean):
            return Verdict(refused="another speaker's memory")
        old_text = payload.get("content", "")
        old_idents = _long_identifiers(old_text)
        # the replaced value names this memory's identifier, whole or by its digits ('航班号是MU5101，不是MU5103' /
        # '不是5103' for 'MU5103'): the correction is about it, though the new identifier differs
        tail = {i for i in old_idents for r in c.replaced_nums | number_terms(c.replaced_terms)
                if i != r and r.isdigit() and len(r) >= 3 and i.endswith(r)}
        named_ident = bool(tail or old_idents & (c.replaced_nums | c.replaced_terms))
        if c.new_idents and old_idents and not (c.new_idents & old_idents) and not named_ident:
            return Verdict(refused="different identifiers")  # different entities (card 尾号0988 vs 尾号8890)
        # 'Sorry, I meant my sister's birthday is March 3rd, not my mom's': the replaced words name the person of
        # the older memory, so the correction is about it though its clause names someone else
        swapped = bool(c.replaced_terms) and bool(people(c.replaced or " ".join(sorted(c.replaced_terms))) & people(old_text))
        if not swapped and _about_someone_else(c.clause, old_text, payload.get("terms") or ()):
            # '说错了，老王住的是重庆，不是成都' corrects 老王's city, never the speaker's '我住在成都高新区'
            return Verdict(refused="about someone the memory does not name")
        if _names_someone_unnamed(old_text, c.clean, c.full_terms):
            # the reverse: 'My brother is moving to Seattle next month' is the brother's, which 'Actually I moved to
            # Seattle last month, so I don't live in Portland anymore' never names (session 19 red-team: it was archived
            # on month / move / seattle while 'I live in Portland' stayed current)
            return Verdict(refused="the memory is about someone the correction does not name")
        # the speakers' own names ("Gina: ..." prefixes every line of Gina) are no evidence
        names = content_terms(speaker_of(c.meta, c.clean)) | content_terms(
            speaker_of(payload.get("metadata"), old_text))
        old_terms = set(payload.get("terms") or ()) - rules.MARKER_TERMS - names
        if c.replaced is not None and not (c.replaced_nums & number_terms(old_terms)) and not tail:
            # a replacement names what it replaces; this memory does not say it
            return Verdict(refused="does not state the replaced value")
        if c.replaced is not None and not _affirms(old_text, set(c.replaced_nums)):
            # 'instead of giving up' replaces nothing in "I'm not giving up": it agrees with it
            return Verdict(refused="negates the replaced value already")
        if (c.replaced is not None or c.neg_new) and not subject_words(
                (negated_terms(c.clause) | c.replaced_terms) - names):
            # what it negates or replaces is a bare value (a day, a number): the rest of it names the subject
            about = correction_subject(c.clean, names | c.replaced_terms)
            if about and not _shares_subject(about, old_terms) and not named_ident:
                # (an identifier the replaced value names is the subject itself: 'MU5103' is the flight)
                # '看牙是周四上午，不是周二' replaces 周二 in the dentist memory, not in '周二晚上还要去参加表弟的
                # 婚礼', which shares only the replaced day: a replacement with a subject of its own retires
                # only a memory of that subject (fresh-user trial, session 6: both were archived)
                return Verdict(refused="shares only the replaced value")
        osig = rules.signals(old_text)
        old_negated = rules.polarity(old_text)
        ev = judge(memory_id, strength=c.strength, scope_terms=set(c.new_terms) - names, old_terms=old_terms,
                   similarity=sim, new_negated=c.neg_new, old_negated=old_negated, params=self.params,
                   old_stance=(osig.preference or osig.decision) and not osig.uncertain)
        kept = (number_terms(old_terms) - number_terms(c.new_terms) - c.replaced_nums
                - number_terms(c.replaced_terms) - _HEDGES if c.contrast else set())
        basis = "replaced"
        share = restated_share(number_terms(c.full_terms - names), number_terms(old_terms))
        if c.replaced is None:
            subject = number_terms(subject_terms(c.clause_before, content_terms) - rules.MARKER_TERMS - names)
            if subject and not subject & number_terms(old_terms):
                # 'My brother switched to Android', '隔壁组改用飞书': another subject changed
                return Verdict(refused="another subject")
            basis = "negation" if c.neg_new and not old_negated else "restatement"
            if basis == "negation" and not negated_terms(c.clause) - names & number_terms(old_terms):
                # '航班是9号不是8号' negates '8号', which '航班是早上七点的' never said: a negation retires
                # only a memory that affirms what it negates; else the restatement test decides
                basis = "restatement"
            if basis == "restatement" and (share < self.restated or len(
                    countable_terms(number_terms(old_terms))) < self.restated_min_terms):
                # '其实是我朋友推荐的这家火锅店' restates too little of what it would retire
                return Verdict(refused=f"restates too little (share {share:.2f})")
            old_names = named(old_text) - names
            unnamed = old_names - term_hits(old_names, set(c.full_terms)) if basis == "restatement" else set()
            if unnamed and not named(c.clean) - old_names - names:
                # 'switched to decaf at work' restates 'work' of 'I work at Amazon' and puts nothing named in
                # Amazon's place: the older memory's named value is not what it corrects (session 22: archived)
                return Verdict(refused=f"leaves its named value unrestated ({', '.join(sorted(unnamed))})")
        if ev is not None and not kept and not c.conditional:
            return Verdict(evidence={**ev.as_dict(), "basis": basis, "restated": round(share, 4), "span": c.span})
        refused = ("no evidence it names this memory" if ev is None else
                   f"holds more than the corrected value ({', '.join(sorted(kept))})" if kept else "a condition")
        if c.replaced is None and not (c.contrast and kept and ev is not None):
            return Verdict(refused=refused)
        # it states Y: outranked by the correction, nothing archived
        return Verdict(link={"id": memory_id, "rule": "corrects", "replaced_terms": sorted(c.replaced_terms),
                             "kept_terms": sorted(kept), "similarity": round(sim, 4), "archived": False},
                       refused=refused)


def _about_someone_else(text: str, old_text: str, old_terms: Iterable[str]) -> bool:
    """Whether the corrected clause ``text`` (a companion elsewhere in the message, '孩子跟我一起看电影', is no
    subject of it) is about a person (:func:`memory_engine.text.people`) the older memory
    does not name: one named before the first content term the two share (its subject: '老王住的是重庆' ->
    老王; 'my sister works at Gojek' -> sister), none of whom the older memory names."""
    shared = set(content_terms(text)) & set(old_terms)
    low = text.lower()
    found = [i for t in shared if (i := low.find(t)) >= 0]
    head = text[: min(found)] if found else text
    subject = set(people(head))
    m = _EN_NAME_BEFORE.search(head)
    if m and not _CJK.search(head) and m.group(1).lower() not in _NOT_A_NAME:
        subject.add(m.group(1).lower())  # 'correction: Tom lives in Houston' -> tom (people() reads no English names)
    return bool(subject) and not subject & (people(old_text) | set(old_terms))


#: a third-person pronoun: the correction may be about the person an older memory names ('其实她已经七岁了')
_THIRD_PERSON = re.compile(r"\b(?:he|she|him|her|his|hers|they|them|their)\b|他|她", re.IGNORECASE)


def _names_someone_unnamed(old_text: str, new_text: str, new_terms: Iterable[str]) -> bool:
    """Whether the older memory ``old_text`` is about a person (:func:`memory_engine.text.people`: a relative, a
    Chinese name; named before its first content term the correction shares) whom the correction ``new_text``
    (content terms ``new_terms``) neither names nor refers to by a third-person pronoun: 'My brother is moving to
    Seattle next month' is not what 'Actually I moved to Seattle last month' corrects."""
    if _THIRD_PERSON.search(new_text):
        return False
    terms = set(new_terms)
    shared = set(content_terms(old_text)) & terms
    low = old_text.lower()
    at = {t: i for t in shared if (i := stem_offset(low, t)) >= 0}
    head = old_text[: min(at.values())] if at else old_text
    subject = set(people(head)) - companions(head)  # '我跟王医生约了周二看牙' is the speaker's appointment
    # any person of the older memory the correction names will do: '同事老王' is the colleague 老王; and 'my niece Ada'
    # is Ada when the name is the first word the two share (an English name is an entity, not one of people()'s;
    # a place shared later, 'Seattle', names no one)
    first = min(((i, t) for t, i in at.items()), default=None)
    named = bool(set(people(old_text)) & (set(people(new_text)) | terms)) or (
        first is not None and (first[1] in entities(old_text) or _kin_ends(head)))
    return bool(subject) and not named


def _kin_ends(head: str) -> bool:
    """Whether ``head`` ends with a kinship word, so the word right after it is that relative's name ('我儿子豆豆',
    'my niece Ada': apposition), not a verb ('My brother is moving')."""
    tail = head.rstrip()
    if not tail:
        return False
    last = tail[-3:] if _CJK.search(tail[-1]) else tail.split()[-1]
    return bool(relatives(last))


#: a capitalised English word right before the corrected clause's first shared term: its subject's name
_EN_NAME_BEFORE = re.compile(r"\b([A-Z][a-z]+)[\s,]*$")
#: capitalised words that open a correction or name a time, not a person
_NOT_A_NAME = frozenset(w.lower() for w in (
    *calendar.day_name, *calendar.month_name,
    *"actually sorry oops no nope wait correction update well ok okay yes yeah also so but and oh hmm right "
     "fine then now today tonight tomorrow yesterday my our we the it this that".split()))


#: how sure the older value was ('装修预算大概20万'): no detail a contrast would lose by archiving it
_HEDGES = frozenset(content_terms("about around roughly approximately maybe probably perhaps 大概 大约 差不多 左右 估计 "
                                  "可能 应该 好像"))

#: weekday and month words: values a correction replaces ('Thursday, not Tuesday'), not its subject
_CALENDAR_WORDS = frozenset(content_terms(" ".join((*calendar.day_name, *calendar.day_abbr, *calendar.month_name,
                                                     *calendar.month_abbr))))
#: the words people wrap a correction in ('oops, my mistake', 'sorry, I said … but I meant …'): no subject
_APOLOGY_WORDS = frozenset(content_terms("oops sorry apologies mistake my bad meant said typo wait correction "
                                         "actually 刚才 刚刚 抱歉 不好意思 哦"))
_ZH_CALENDAR = re.compile(r"^(?:周|星期|礼拜)[一二三四五六日天末]?$|^[一二三四五六七八九十]+月$|^(?:上午|下午|晚上|早上|中午|今天|明天|昨天)$")


def subject_words(terms: set[str] | frozenset[str]) -> set[str]:
    """The words of a correction that name its subject rather than a value: countable terms
    (:func:`countable_terms`) without digits, weekday / month names or Chinese day and time-of-day
    words. '{flight, osaka, 14th}' -> {flight, osaka}; '{7pm}' or '{thursday}' -> set() (a bare value
    names no subject, so any memory stating the replaced value may be meant)."""
    return {t for t in countable_terms(set(terms)) if not any(ch.isdigit() for ch in t)
            and t.lower() not in _CALENDAR_WORDS and t not in _APOLOGY_WORDS and not _ZH_CALENDAR.match(t)}


def correction_subject(text: str, leave_out: Set[str]) -> set[str]:
    """The subject words (:func:`subject_words`) of a correction's ``text``: its content terms without
    the meta markers ('说错了', 'correction:'), the marker words, what it negates and ``leave_out``
    (the speakers' names, the replaced value's terms)."""
    terms = set(content_terms(META_MARKER.sub(" ", text))) - rules.MARKER_TERMS - set(leave_out)
    return subject_words(terms - negated_terms(text))


def _shares_subject(about: set[str], old_terms: set[str]) -> bool:
    """Whether an older memory's terms carry one of the subject words ``about``: the same term, or for
    Chinese a word inside the other ('看牙' / '上午看牙'), as :func:`restated_share` counts it."""
    return bool(term_hits(about, old_terms))


def negated_terms(clause: str) -> set[str]:
    """Content terms (numbers normalised, :func:`number_terms`) of what a correction's clause negates:
    the words after its first negation, the meta markers ('搞错了', 'that's wrong') left out:
    '航班是9号不是8号' -> {'8号' as a number term}, 'I no longer live in Munich' -> {'live', 'munich'},
    '不叫王芳' -> {'叫', '王芳'}. Empty when the clause negates nothing."""
    text = META_MARKER.sub(" ", clause)
    m = rules.NEGATION.search(text)
    if m is None:
        return set()
    return number_terms(set(content_terms(text[m.start():])) - rules.MARKER_TERMS)


def _affirms(text: str, terms: set[str]) -> bool:
    """True when a sentence of ``text`` that carries one of ``terms`` (numbers normalised,
    :func:`number_terms`) is not negated: a memory
    that says "I'm not giving up" does not state what "instead of giving up" replaces."""
    hits = [s for s in rules.sentences(text) if number_terms(content_terms(s)) & terms]
    return any(not rules.polarity(s) for s in hits) if hits else True


class Superseder:
    """Retires replaced memories. ``supersede(old_ids, new_id, ts)``: archive mode deprecates
    them at once (``superseded_by`` = the new id); ``pending_confirmation`` mode marks them
    pending. ``confirm_if_repeated(rec, ts)`` (seed 004): when the user repeats ``rec`` for
    the ``lifecycle.confirm_repeats``-th time, the values it replaced that are still pending
    are archived. Raises ConfigError at construction for ``confirm_repeats`` < 1."""

    def __init__(self, store: VectorStore, mode: SupersedeMode, lifecycle: LifecycleSection,
                 undo_days: float = 0.0) -> None:
        if lifecycle.confirm_repeats < 1:
            raise ConfigError("lifecycle.confirm_repeats must be >= 1", key="lifecycle.confirm_repeats")
        self.store, self.mode, self.confirm_repeats = store, SupersedeMode(mode), lifecycle.confirm_repeats
        self.undo_days = undo_days

    def supersede(self, old_ids: Iterable[str], new_id: str, ts: float) -> None:
        """Retire ``old_ids`` in favour of ``new_id``. When the store refuses, the fields the patch
        touched are put back on every old memory (best effort, logged) and the error is raised, so the
        caller can drop the new memory: a correction and its supersession succeed or fail together."""
        if self.mode == SupersedeMode.PENDING_CONFIRMATION:
            patch = {"status": MemoryStatus.PENDING_CONFIRMATION.value, "superseded_by": new_id, "updated_at": ts}
        else:
            # undoable like a forget instruction (MemoryEngine.undo_forget) for write.undo_days
            patch = {**deprecate_patch(ts, superseded_by=new_id), "forgotten_at": ts,
                     "undo_until": ts + self.undo_days * 86_400.0, "forget_reason": "correction",
                     "status_before": MemoryStatus.CURRENT.value}
        ids = list(old_ids)
        before = {p.id: {k: p.payload.get(k) for k in patch} for p in self.store.retrieve(ids)}
        try:
            self.store.set_payload(ids, patch)
        except Exception:
            for pid, fields in before.items():
                try:
                    self.store.set_payload([pid], fields or {"status": MemoryStatus.CURRENT.value})
                except Exception:  # noqa: BLE001 - keep undoing the others; the caller raises anyway
                    log.exception("could not restore memory %s after a failed supersede", pid)
            raise

    def confirm_if_repeated(self, rec: MemoryRecord, ts: float) -> None:
        if not rec.supersedes or rec.access_count + 1 < self.confirm_repeats:
            return
        pending = [p.id for p in self.store.retrieve(list(rec.supersedes))
                   if p.payload.get("status") == MemoryStatus.PENDING_CONFIRMATION.value]
        if pending:
            self.store.set_payload(pending, deprecate_patch(ts))
