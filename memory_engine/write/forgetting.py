"""Explicit forget instructions act on the store (issue 16).

"Forget that I live in Berlin", "别记我的手机号了", "please delete what I said
about my ex": :func:`memory_engine.write.intents.forget_target` finds the words
naming what to forget; :class:`Forgetter` finds the owner's memories they name
and archives them with an undo window; the instruction itself is not stored.

A memory is named when BOTH hold (numbers are ``write.*`` configuration):

* rescaled dense similarity between the target and the memory >= ``forget_similarity``;
* the memory carries at least ``forget_term_overlap`` of the target's content
  terms (its own terms, plus the parts of its fact key: ``user.address``
  answers "my address"), each term weighed by how few of the candidate memories
  carry it (:func:`_term_weights`: "forget that my dog likes chips" names the chips,
  not "my dog likes peanut butter", which shares 'dog' and 'like'); a memory carrying
  all of them needs only ``forget_named_similarity`` ('forget the train' names 'I take
  the 8:15 train').

A memory about a relative is not the speaker's own detail: when the part of the memory
before the first target term it carries names a relative (:func:`memory_engine.text.relatives`:
"my sister works at Google", "My parents' address is ...", "我妈住在杭州"), the target names it
only when it names that relative too ("forget where my sister works"); a target naming a
relative never names a memory about none of the relatives it names ("forget my mom's number"
leaves "my dad's number"). "Stop remembering where I work" archives "I work at Stripe" and
keeps "my sister works at Google" (a forget that archives what it does not name loses data). A relative
coordinated with the speaker ("我和老公在备孕", "my wife and I are trying for a baby") makes the matter the
speaker's own as well: "forget that I'm trying for a baby" names it.

When no memory carries the target's words, the nearest ``forget_meaning_candidates``
memories carrying every target word by meaning are named (rule ``forget_meaning``:
"the therapy details" / "a therapist", 工资 / 薪资; see ``forget_term_meaning_similarity``);
failing that (a topic: "my medication" for "I take
sertraline", "我工资" for "月薪两万五"), the single nearest memory is named when its
similarity is >= ``forget_topic_similarity`` and exceeds the next one's by
``forget_topic_margin`` (over every memory of the owner's, a relative's too) and stands
``forget_topic_min_z`` background deviations above unrelated sentences (rule ``forget_topic`` in the evidence); the target is embedded
as a query (a short phrase asking for memories).

An empty target ("forget what I just said", "删除我刚才说的") names the
owner's newest memory of the request's session (of any session only when the
request has none) written before the instruction; a request naming a topic never
gets an empty target (see ``forget_target``).

A forget names a PART of a message when that message holds several clauses and only some of
them carry the target's words ("my number is 138..., and leave parcels with the guard
downstairs" / "forget my phone number"): :meth:`Forgetter.redaction` splits the memory into
clauses (sentence ends and commas, :func:`clause_spans`), names every clause carrying a
target term, by its words or by meaning (月薪 for 工资), and every clause closer to the target
than the best of those less ``forget_clause_margin``. When no clause carries one (a topic:
"my pay" for "I make about 85k"), the clauses that most bring the message to the target
(similarity plus leave-one-out loss, within ``forget_topic_clause_margin`` of the best) are
named. The clauses left form a new version of the memory (its id in the
old version's ``redacted_into``, the old id in the new one's ``_redacted_from``) and the old
version is archived under the undo window as any forget. A fact, a one-clause memory or one
whose every clause is named is archived whole. Losing the delivery note with the phone number,
or the job and the home town with the salary, is the data loss this guards against.

Archived memories get ``status = deprecated``, ``archived = 1`` and
``forgotten_at`` / ``undo_until`` / ``status_before``; :meth:`Forgetter.undo`
restores them while ``undo_until`` has not passed (``write.undo_days``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any

from ..config import KeywordSection, WriteSection
from ..embedding import CachedEmbedder
from ..models import MemoryRecord, MemoryStatus, MemoryType
from ..retrieve.calibration import DenseBackground
from ..retrieve.relations import STATES, path_fit
from ..store.base import StoreFilter, VectorStore
from ..text import (
    _CJK,
    companions,
    content_terms,
    count_tokens,
    entities,
    kin_pairs,
    relatives,
    stem_offset,
    surface_words,
)
from .records import deprecate_patch, new_id, upsert_records

__all__ = ["ForgetMatch", "Forgetter", "Redaction", "clause_spans"]

_DAY = 86_400.0

#: clause ends: sentence ends ('。！？；!?;', a full stop before a space), commas not inside a number ('4,200'),
#: a spaced dash ('call me at 138... — also I'm ...') and, without a comma, a coordinator opening a new
#: first-person clause ('my email is x and I prefer window seats', '... and my wife Anna is allergic to ...')
_CLAUSE_END = re.compile(r"[。！？；!?;\n]+|\.(?=\s|$)|[,，](?!\d)|\s+[—–]+\s*|\s+-{1,2}\s+"
                         r"|\s(?=(?:and|also|plus|but)\s+(?:I|I'm|I've|I'd|my|we|we're|our)\b)")
#: what a kept remainder may not start with: the separators and the coordinator that joined it to a removed clause
_LEAD = re.compile(r"^[\s,，;；.。—–-]*(?:(?:and|also|plus|btw|but)\b|还有|另外|以及|而且)?[\s,，]*", re.IGNORECASE)


#: a full stop after a short capitalised word is an abbreviation ('Dr.', 'St.', 'Mrs.'), not a sentence end
_ABBREV_END = re.compile(r"\b[A-Z][a-z]{1,2}\.$")


def clause_spans(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` character spans of the clauses of ``text``, each with its trailing separator,
    blank ones dropped: 'my number is 1, and leave parcels here' -> ['my number is 1,', ' and leave parcels here'];
    'I see Dr. Lee monthly' is one clause."""
    spans, start = [], 0
    for m in _CLAUSE_END.finditer(text):
        if m.group(0) == "." and _ABBREV_END.search(text[start: m.end()]):
            continue
        spans.append((start, m.end()))
        start = m.end()
    spans.append((start, len(text)))
    return [(a, b) for a, b in spans if text[a:b].strip(" \t\n,，。.;；!！?？")]


_COORD_START = re.compile(r"^\s*(?:and|also|plus|but)\b", re.IGNORECASE)
#: an English fragment with a subject or a finite auxiliary / copula states something of its own ('My salary is
#: 200k', "I'm a vegetarian"): it is a clause, never the continuation of a value ('apt 4', 'Shanghai')
_PREDICATE = re.compile(r"\b(?:i|we|he|she|they|is|are|am|was|were|has|have|had|does|do|did|will|can)\b|'(?:m|s|re|ve|d|ll)\b",
                        re.IGNORECASE)


def _states(part: str, words: list[str]) -> bool:
    return bool(words) and _PREDICATE.search(part.replace("’", "'")) is not None


#: a CJK ideograph or full-width / CJK punctuation: Chinese clauses are joined without a space
_WIDE = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]")


def _join(parts: list[str]) -> str:
    """The kept clauses as one text: each without the separators and coordinator that joined it to a removed
    clause, a space between Latin clauses ("I'm a nurse," + "and I rent a flat" -> "I'm a nurse, and I rent a
    flat"), none between Chinese ones."""
    out = ""
    for i, part in enumerate(parts):
        part = _LEAD.sub("", part) if i == 0 else part.strip()
        if out and part and not _WIDE.match(part) and not _WIDE.match(out[-1]):
            out += " "
        out += part
    return out.strip().rstrip(",，;；")


def _whole_clauses(parts: list[str], min_terms: int) -> list[str]:
    """``parts`` with every continuation joined to the clause before it: a part with fewer than ``min_terms``
    word terms ('Shanghai', '3单元502' after an address) or one holding a number right after a part holding one
    ('12 Elm Street, apt 4': the number continues the value). Forgetting the address must take its apartment."""
    out: list[str] = []
    carry = ""
    for i, part in enumerate(parts):
        part, carry = carry + part, ""
        terms = content_terms(part)
        if i + 1 < len(parts) and _COORD_START.match(part) and len(
                [t for t in terms if not any(ch.isdigit() for ch in t)]) < min_terms:
            carry = part  # 'and my sister' + 'and I share a Netflix account': the fragment opens what follows
            continue
        words = [t for t in terms if not any(ch.isdigit() for ch in t)]
        digits = len(words) < len(terms)
        if out and not _states(part, words) and (
                len(words) < min_terms or (digits and any(ch.isdigit() for ch in out[-1]))):
            out[-1] += part
        else:
            out.append(part)
    lead = [t for t in content_terms(out[0]) if not any(ch.isdigit() for ch in t)] if out else []
    if len(out) > 1 and len(lead) < min_terms and not _states(out[0], lead):
        out[1] = out[0] + out[1]  # a leading fragment belongs to what follows it
        out.pop(0)
    return out


#: what a redaction placeholder stands for: 'forget my phone number' names the clause 'my phone is [PHONE]'
_PLACEHOLDER_TERMS = {
    "[PHONE]": frozenset(content_terms("phone number mobile cell telephone 电话 手机 手机号 号码 电话号码")),
    "[EMAIL]": frozenset(content_terms("email mail address 邮箱 邮件 邮箱地址")),
}


def _clause_terms(clause: str) -> set[str]:
    """Content terms of ``clause`` with the words its redaction placeholders stand for."""
    out = set(content_terms(clause))
    for ph, words in _PLACEHOLDER_TERMS.items():
        if ph in clause:
            out |= words
    return out


@dataclass(frozen=True)
class Redaction:
    """The part of memory ``memory_id`` a forget leaves: ``kept`` (the text of its unnamed clauses) and the
    ``removed`` clauses' count; ``kept_as`` the new version's id once written."""

    memory_id: str
    kept: str
    removed: int
    kept_as: str | None = None


@dataclass(frozen=True)
class ForgetMatch:
    """One memory a forget instruction names: id, rescaled similarity, the target
    terms it carries and their share of the target's terms."""

    memory_id: str
    similarity: float
    shared_terms: tuple[str, ...]
    term_share: float
    rule: str = "forget_intent"

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.memory_id, "similarity": round(self.similarity, 4), "shared_terms": list(self.shared_terms),
                "term_share": round(self.term_share, 4), "rule": self.rule}


def _memory_terms(payload: dict[str, Any]) -> set[str]:
    terms = set(payload.get("terms") or ())
    key = str(payload.get("fact_key") or "")
    if key:
        terms |= set(re.split(r"[._\-\s/]+", key.lower())) | content_terms(key.replace(".", " "))
    return terms


def _about_relatives(content: str, shared: set[str]) -> frozenset[str]:
    """The relatives named in ``content`` before the first of the ``shared`` target terms (their
    possessor or subject: 'my sister works' -> the sisters; 'I live with my wife' -> none, the
    speaker's own). A stem is found by its longest prefix ('salari' in 'my salary'); a term not found at all
    counts as at the end."""
    low = content.lower()
    found = [i for t in shared if (i := stem_offset(low, t)) >= 0]
    prefix = content[: min(found)] if found else content
    return relatives(prefix) - companions(prefix)





def _names_person(target_kin: frozenset[str], content: str, shared: set[str], target: str = "") -> bool:
    """Whether a target (``target``, naming ``target_kin``: relatives, maybe none) can name ``content``: a memory
    about relatives (:func:`_about_relatives`) needs one of them named, by kinship or by their name; a
    target naming relatives needs a memory naming one of them. A target naming a relation path ('我婆婆的电话',
    "my mother-in-law's number", '我老婆的弟弟') needs a memory that states the path
    (:func:`memory_engine.retrieve.relations.path_fit`): the user's own mother's number is not the
    mother-in-law's."""
    if target and kin_pairs(target):
        return path_fit(target, content) == STATES
    about = _about_relatives(content, shared)
    if about and not (about & target_kin) and not (shared & entities(content)):
        # ...unless the target names that person ('forget anything about Carla' for 'my ex-girlfriend Carla ...')
        return False
    return not target_kin or bool(target_kin & relatives(content))


def _term_weights(t_terms: set[str], memories: list[set[str]]) -> dict[str, float]:
    """Each target term's weight, summing to 1: the inverse of how many of the candidate ``memories`` carry it
    (one carried by none weighs as one carried once). The terms that tell one statement from the others on the
    same subject weigh most: for {dog, like, chip} over 'my dog likes chips' / 'my dog likes walks' / 'my dog is
    Max', chip 0.55, like 0.27, dog 0.18, so the walks share 0.45 of the target, the chips 1.0."""
    raw = {t: 1.0 / max(1, sum(t in m for m in memories)) for t in t_terms}
    total = sum(raw.values())
    return {t: w / total for t, w in raw.items()}


class Forgetter:
    """``find(target, tenant_id, user_id, ...)`` -> matches; ``archive(matches, ts)``;
    ``undo(tenant_id, user_id, ts, ids)`` -> restored ids."""

    def __init__(self, store: VectorStore, embedder: CachedEmbedder, cfg: WriteSection,
                 keyword: KeywordSection | None = None) -> None:
        self.store, self.embedder, self.cfg, self.keyword = store, embedder, cfg, keyword

    def _filter(self, tenant_id: str, user_id: str, **kw: Any) -> StoreFilter:
        return StoreFilter(tenant_id=tenant_id, user_id=user_id,
                           statuses=(MemoryStatus.CURRENT.value, MemoryStatus.CANDIDATE.value,
                                     MemoryStatus.PENDING_CONFIRMATION.value), **kw)

    def find(self, target: str, tenant_id: str, user_id: str, session_id: str | None, ts: float) -> list[ForgetMatch]:
        """Memories of the owner the target names, best first (at most ``write.forget_limit``)."""
        owned = [tenant_id, user_id]
        if not target.strip():
            # a bare pronoun ('forget it') means the message just before it: the same session's newest memory
            # when the request has a session (never an older session's), else the owner's newest
            for sess in (session_id,):
                flt = self._filter(tenant_id, user_id, session_id=sess, created_before=ts)
                rows = self.store.scroll(flt, limit=1, order_by="created_at", descending=True)
                if rows and [rows[0].payload.get("tenant_id"), rows[0].payload.get("user_id")] == owned:
                    return [ForgetMatch(rows[0].id, 1.0, (), 1.0)]
            return []
        t_terms = set(content_terms(target))
        if not t_terms:
            return []
        t_kin = relatives(target)
        # the target is a short phrase asking for memories ('my salary'): embedded as a query
        vec = self.embedder.embed_query(target)
        out = []
        flt = self._filter(tenant_id, user_id, embedding_version=self.embedder.version)
        sims: list[tuple[float, Any]] = []
        others: list[float] = []  # the similarity of the owner's memories about someone else
        for p in self.store.search_dense(vec.tolist(), flt, max(self.cfg.forget_limit * 3, 20)):
            if [p.payload.get("tenant_id"), p.payload.get("user_id")] != owned:
                continue
            shared = t_terms & _memory_terms(p.payload)
            if not _names_person(t_kin, str(p.payload.get("content") or ""), shared, target):
                # about someone else: 'my sister works at Google' is not 'where I work'; for a target about the
                # speaker alone it still competes for the topic (a target naming a relative or a path has set it
                # aside on that relative: '把我小舅子的电话删了' is not the user's brother's number)
                if not t_kin:
                    others.append(float(self.embedder.rescale(p.score)))
                continue
            sims.append((float(self.embedder.rescale(p.score)), p))
        weight = _term_weights(t_terms, [_memory_terms(p.payload) for _, p in sims])
        for sim, p in sims:
            shared = t_terms & _memory_terms(p.payload)
            share = len(shared) / len(t_terms)
            floor = self.cfg.forget_named_similarity if share >= 1.0 else self.cfg.forget_similarity
            # the share that names a memory weighs each target term by how few of the owner's memories carry it:
            # 'forget that my dog likes chips' names the chips, not every memory of the dog that 'likes' something
            if sim >= floor and sum(weight[t] for t in shared) >= self.cfg.forget_term_overlap:
                out.append(ForgetMatch(p.id, float(sim), tuple(sorted(shared)), share))
        if not out and sims:
            # the target's words by meaning ('forget the therapy details' for 'I see a therapist every Thursday'):
            # the nearest memories carrying every one of them
            sims.sort(key=lambda x: -x[0])
            head = [(sim, p) for sim, p in sims[: self.cfg.forget_meaning_candidates]
                    if sim >= self.cfg.forget_named_similarity]
            t_words, carried = self._meaning_carried(target, [str(p.payload.get("content") or "") for _, p in head])
            for (sim, p), c in zip(head, carried, strict=True):
                if t_words and c >= t_words:
                    out.append(ForgetMatch(p.id, sim, (), 0.0, "forget_meaning"))
        if not out and sims:
            # a topic rather than the memory's words ('my medication' for 'I take sertraline', '我工资' for
            # '月薪两万五'): only the single nearest memory, and only when it stands out from the next one
            sims.sort(key=lambda x: -x[0])
            best, p = sims[0]
            # the runner-up among all the owner's memories: a relative's memory nearer the topic than the user's own
            # ('我妹妹在备孕' for '我备孕的事') leaves no topic the user's memory stands out on (forgetting by elimination
            # archived '我每天骑车上班')
            runner_up = max([s for s, _ in sims[1:2]] + others + [0.0])
            if (best >= self.cfg.forget_topic_similarity and best - runner_up >= self.cfg.forget_topic_margin
                    and self._topic_z(vec, p) >= self.cfg.forget_topic_min_z):
                shared = t_terms & _memory_terms(p.payload)
                out.append(ForgetMatch(p.id, best, tuple(sorted(shared)), len(shared) / len(t_terms), "forget_topic"))
        return out[: self.cfg.forget_limit]

    def _topic_z(self, vec: Any, p: Any) -> float:
        """How many of the target's own background standard deviations the memory's cosine stands above unrelated
        everyday sentences in its script (:mod:`memory_engine.retrieve.calibration`, the floor's gate calibration):
        a topic the memory shares none of the words of must stand out from sentences about nothing in particular,
        not only from the owner's other memories (a store of two: '别再记我备孕的事了' against '我每天骑车上班',
        rescaled 0.36, z 1.6; '我工资' / '月薪两万五' z 5.1, 'my medication' / 'I take sertraline' z 4.2)."""
        content = str(p.payload.get("content") or "")
        return DenseBackground(self.embedder).of(vec).z(float(p.score), bool(_CJK.search(content)))

    def redaction(self, target: str, match: ForgetMatch, payload: dict[str, Any],
                  matter: bool = False) -> Redaction | None:
        """What of the matched memory (its ``payload``) the target does not name, or None when the
        whole memory goes: a fact, a single clause, or every clause named (see the module docstring).
        Clause similarities are rescaled dense scores (target embedded as a query, each clause as a
        document), 0..1. A clause carrying a target term, by its words or by meaning
        (:meth:`_carriers_by_meaning`: 月薪 for 工资), is named; another clause goes with it only when it is
        closer to the target than that clause less ``forget_clause_margin`` (``forget_matter_clause_margin`` when
        the request names a whole ``matter``: 'don't keep my salary stuff' takes the bonus said beside the monthly
        pay, :func:`memory_engine.write.intents.names_matter`). When no clause carries one
        (a topic: 'my pay' for 'I make about 85k'), the clause that names the topic is the one that
        most brings the message to the target: its similarity plus what the message loses without it
        (leave-one-out); every clause within ``forget_topic_clause_margin`` of the best goes."""
        content = str(payload.get("content") or "")
        if match.rule not in ("forget_intent", "forget_topic", "forget_meaning") or not target.strip() or payload.get("fact_key"):
            return None
        spans = clause_spans(content)
        if len(spans) < 2:
            return None
        t_terms = set(content_terms(target))
        clauses = _whole_clauses([content[a:b] for a, b in spans], self.cfg.forget_clause_min_terms)
        if len(clauses) < 2:
            return None
        carries = [bool(t_terms & _clause_terms(c)) for c in clauses]
        if not any(carries):
            carries = self._carriers_by_meaning(target, clauses)
        if all(carries):
            return None
        q = self.embedder.embed_query(target)
        sims = [float(self.embedder.rescale(float(q @ v))) for v in self.embedder.embed_documents(clauses)]
        if any(carries):
            best = max(s for s, c in zip(sims, carries, strict=True) if c)
            margin = self.cfg.forget_matter_clause_margin if matter else self.cfg.forget_clause_margin
            named = [c or s > best - margin for s, c in zip(sims, carries, strict=True)]
        else:
            # a topic no clause words: leave-one-out, what the message loses without each clause
            whole = float(self.embedder.rescale(float(q @ self.embedder.embed_documents([content])[0])))
            rests = ["".join(c for j, c in enumerate(clauses) if j != i) for i in range(len(clauses))]
            loss = [whole - float(self.embedder.rescale(float(q @ v))) for v in self.embedder.embed_documents(rests)]
            score = [s + d for s, d in zip(sims, loss, strict=True)]
            top = max(score)
            named = [x >= top - self.cfg.forget_topic_clause_margin for x in score]
        if all(named):
            return None
        kept = _join([c for c, n in zip(clauses, named, strict=True) if not n])
        if not content_terms(kept):
            return None  # what is left says nothing ('lol'): the memory goes whole
        return Redaction(match.memory_id, kept, sum(named))

    def _carriers_by_meaning(self, target: str, clauses: list[str]) -> list[bool]:
        """Which ``clauses`` carry a word of the target by meaning (:meth:`_meaning_carried`)."""
        return [bool(c) for c in self._meaning_carried(target, clauses)[1]]

    def _meaning_carried(self, target: str, texts: list[str]) -> tuple[frozenset[str], list[frozenset[str]]]:
        """The target's words (surface form, numbers aside) and, per text, those of them it carries by meaning:
        one of its words has rescaled similarity >= ``forget_term_meaning_similarity`` to the target word (the
        target word embedded as a query, the text's word as a document: 工资 -> 月薪 0.62, 手机号 -> 电话 0.58,
        体重 -> 公斤 0.62, therapy -> therapist 0.54; 工资 -> 上班 0.51, 车牌 -> 开车 0.46 stay below)."""
        def words(text: str) -> frozenset[str]:
            return frozenset(w for w in surface_words(text) if content_terms(w) and not any(ch.isdigit() for ch in w))

        t_words = sorted(words(target))
        per_text = [words(t) for t in texts]
        vocab = sorted(set().union(*per_text)) if per_text else []
        if not t_words or not vocab:
            return frozenset(t_words), [frozenset()] * len(texts)
        floor = self.cfg.forget_term_meaning_similarity
        tv = [self.embedder.embed_query(w) for w in t_words]
        near: dict[str, set[str]] = {}
        for w, v in zip(vocab, self.embedder.embed_documents(vocab), strict=True):
            near[w] = {t for t, q in zip(t_words, tv, strict=True) if float(self.embedder.rescale(float(q @ v))) >= floor}
        return frozenset(t_words), [frozenset().union(*(near[w] for w in ws)) if ws else frozenset() for ws in per_text]

    def keep_rest(self, red: Redaction, payload: dict[str, Any], ts: float) -> Redaction:
        """Write the unnamed part as a new version of the memory (same owner, kind, session, statement time,
        importance; new id, content, terms and vector; ``_redacted_from`` in its metadata); returns ``red``
        with ``kept_as``. The caller archives the old version (:meth:`archive` with ``redacted_into``)."""
        old = MemoryRecord.from_payload(red.memory_id, payload)
        rec = replace(old, id=new_id(), content=red.kept, terms=tuple(content_terms(red.kept)),
                      tokens=count_tokens(red.kept), updated_at=ts, supersedes=(red.memory_id,),
                      metadata={**old.metadata, "_redacted_from": red.memory_id},
                      archived_at=None, forgotten_at=None, undo_until=None)
        upsert_records(self.store, [rec], self.embedder.embed_documents([red.kept]), self.keyword)
        return replace(red, kept_as=rec.id)

    def archive(self, ids: list[str], ts: float, statuses: dict[str, str], reason: str = "forget_intent",
                redacted_into: dict[str, str] | None = None) -> None:
        """Archive ``ids`` (their previous status in ``statuses``) with the undo window; ``redacted_into``
        maps an id to the new version that keeps its unnamed part (undo archives that version again)."""
        for mid in ids:
            self.store.set_payload([mid], {
                "status": MemoryStatus.DEPRECATED.value, "archived": 1, "archived_at": ts, "updated_at": ts,
                "forgotten_at": ts, "undo_until": ts + self.cfg.undo_days * _DAY, "forget_reason": reason,
                "status_before": statuses.get(mid, MemoryStatus.CURRENT.value),
                "redacted_into": (redacted_into or {}).get(mid),
            })

    def _newer_fact(self, tenant_id: str, user_id: str, p: Any, restoring: set[str]) -> str | None:
        """The id of the owner's newest current fact of the same key as fact ``p`` written after it (None for a
        memory that is no fact, or no such fact): undo keeps one current value per key
        (:class:`memory_engine.write.facts.FactBook`)."""
        key = p.payload.get("fact_key")
        if p.payload.get("memory_type") != MemoryType.FACT.value or key is None:
            return None
        flt = StoreFilter(tenant_id=tenant_id, user_id=user_id, fact_key=str(key),
                          memory_types=(MemoryType.FACT.value,))
        for q in self.store.scroll(flt, order_by="created_at", descending=True):
            if q.id not in restoring and float(q.payload.get("created_at") or 0) > float(p.payload.get("created_at") or 0):
                return q.id
        return None

    def undo(self, tenant_id: str, user_id: str, ts: float, ids: list[str] | None = None) -> list[str]:
        """Restore memories archived by a forget instruction or a correction whose undo
        window is still open: ``ids`` when given, else the latest batch (same ``forgotten_at``).
        A fact whose key got a newer current value since is restored as superseded by it (one current
        value per key). Returns the restored ids (oldest batch untouched)."""
        flt = StoreFilter(tenant_id=tenant_id, user_id=user_id, statuses=None, include_archived=True,
                          memory_ids=tuple(ids) if ids else None)
        rows = [p for p in self.store.scroll(flt) if p.payload.get("forgotten_at") is not None
                and float(p.payload.get("undo_until") or 0) >= ts
                and p.payload.get("tenant_id") == tenant_id and p.payload.get("user_id") == user_id]
        if not rows:
            return []
        if not ids:
            latest = max(float(p.payload["forgotten_at"]) for p in rows)
            rows = [p for p in rows if float(p.payload["forgotten_at"]) == latest]
        restoring = {p.id for p in rows}
        for p in rows:
            patch: dict[str, Any] = {
                "status": p.payload.get("status_before") or MemoryStatus.CURRENT.value, "archived": 0,
                "archived_at": None, "superseded_by": None, "forgotten_at": None, "undo_until": None,
                "forget_reason": None, "updated_at": ts, "redacted_into": None,
            }
            newer = self._newer_fact(tenant_id, user_id, p, restoring)
            if newer is not None:  # the key has a newer value since: back in the history, not current beside it
                patch.update(deprecate_patch(ts, superseded_by=newer))
            self.store.set_payload([p.id], patch)
            kept_as = p.payload.get("redacted_into")
            if kept_as:  # the whole message is back: its redacted version would be a second copy of part of it
                self.store.set_payload([str(kept_as)], {
                    "status": MemoryStatus.DEPRECATED.value, "archived": 1, "archived_at": ts, "updated_at": ts,
                    "superseded_by": p.id,
                })
        return [p.id for p in rows]
