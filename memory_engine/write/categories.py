"""Fact categories by intent (issue 16, facts by meaning).

A request that needs a fact rarely repeats its words: "帮我寄个快递给我妈" needs
"寄快递默认用顺丰", "book me a flight" needs "I like the window seat". Raw
query-to-fact cosine does not separate them (e5-small: 0.28-0.59 against
0.26-0.38 for unrelated facts), but requests of one kind are close to each other,
and so are statements of one kind. So both sides are classified by their nearest
examples (nearest-exemplar / prototype classification with a reject class):

* a **request** is routed to category c when the (centred) cosine of its query embedding
  to the nearest example request of c is >= ``intent.query_min_score`` and exceeds the
  best score of the ``none`` reject class by >= ``intent.query_margin``;
* a **user statement** is tagged at write with category c by the same rule on its
  document embedding against the example facts (``intent.fact_min_score`` /
  ``intent.fact_margin``); a structured fact whose key names a category's key word
  (``shipping.courier``) takes that category directly.

Neighbouring categories are close to each other in e5's space: a parcel request sits
near the payment examples too ('给闺蜜挑了条围巾，帮我安排一下送到她手上': shipping
+0.049 over ``none``, payment +0.035), '以后发件统一走顺丰' near purchase. Requiring one
winner by the margin routed neither. So the decision is a *set*: every category within
the margin of the best one (up to ``intent.max_categories``; 1 = one winner or nothing),
provided the reject class ``none`` is not within the margin of the best; a request routed
to two categories finds the memories of both, a statement is tagged with both.

Requests are scored by *mean-centred* cosines (``intent.center_queries``): the mean of the example
requests is removed from both sides first, which spreads e5's packed raw scores (0.80-0.95 for
everything) so that the needed category leads by 0.05-0.4. The lead over the reject class decides
whether a request is routed (``intent.query_margin``); every further category within the wider
``intent.query_also_margin`` of the best is needed too (a gift to be sent: gift and shipping), none
that the reject class beats. A close call of more categories than ``intent.max_categories`` keeps the
best ones (``intent.truncate``). Statements keep raw cosines (``intent.center_facts``): centred, a
time word pulled them to the scheduling examples.

At query time the routed category also decides membership itself (:meth:`Categories.membership`): a
statement's mean-centred cosine to the category's ``intent.member_k`` nearest example facts minus the
same to the reject class's. The write-time tag has to pick one of nine classes within 0.01-0.02 of each
other and stays wrong once wrong ('我乳糖不耐受' health only, so a takeout request missed it); the routed
request asks a binary question of the few statements nearest the category's prototype instead, and the
intent route (retrieve/routes.py) admits them with graded evidence (retrieve/candidates.py ``member_evidence``).

The examples are data (``categories.toml``, bilingual, a handful per category;
``intent.exemplars`` names another file), embedded once per embedding version.

Questions are not requests: "where do I work?" needs no fact to do a task, it asks for one slot's value, and
routing questions by their words flooded event questions ('what did I do on June 10?' got every category member).
:class:`AnswerTypes` routes a one-line first-person question by the answer type it asks for instead (its own
bilingual examples, ``slots.toml``: example questions per slot against a reject class of episode, date, number and
name questions), and its members are decided at query time the same way (:func:`_membership`).
"""

from __future__ import annotations

import re
import threading
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..config import IntentSection
from ..embedding import CachedEmbedder
from ..errors import ConfigError, os_reason
from ..text import (
    RELATION_NOUNS_ZH,
    asks_advice,
    content_terms,
    dictionary_words,
    is_lookup,
    people,
    relatives,
)

__all__ = ["NONE", "AnswerTypes", "Categories", "CategoryLabel", "ExampleSet", "categories_of", "category_of",
           "load_examples"]

#: the reject class: requests and statements nearer to its examples get no category
NONE = "none"
BUNDLED = Path(__file__).with_name("categories.toml")
#: the bundled answer types of questions about the user (:class:`AnswerTypes`)
BUNDLED_ANSWERS = Path(__file__).with_name("slots.toml")


@dataclass(frozen=True)
class ExampleSet:
    """Per category: example ``requests`` (queries), example ``facts`` (statements), fact-key
    words ``keys`` and need words ``needs`` (what a request that needs the kind names: 'lunch', '外卖';
    stored as :func:`memory_engine.text.dictionary_words` terms, so English ones are stems); ``none`` may
    have requests and facts but no keys or needs."""

    requests: dict[str, tuple[str, ...]]
    facts: dict[str, tuple[str, ...]]
    keys: dict[str, tuple[str, ...]]
    needs: dict[str, frozenset[str]] = field(default_factory=dict)
    #: example questions per answer type (the answer-types file, :class:`AnswerTypes`), embedded as queries
    questions: dict[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(sorted(set(self.requests) | set(self.facts)))


def load_examples(path: str | Path | None = None, asks: str = "requests") -> ExampleSet:
    """Read a categories file (None = the bundled one), or with ``asks`` = 'questions' an answer-types file
    (None = the bundled ``slots.toml``: tables of ``questions`` and ``facts``, :class:`AnswerTypes`). ConfigError
    when it cannot be read, a category is not a table, a list holds a non-string, or no category other than
    ``none`` has both ``asks`` examples and facts."""
    key = "intent.exemplars" if asks == "requests" else "intent.answer_exemplars"
    p = Path(path) if path is not None else (BUNDLED if asks == "requests" else BUNDLED_ANSWERS)
    try:
        data = tomllib.loads(p.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise ConfigError(f"{key}: cannot read {p}: {os_reason(e)}", key=key) from e
    req: dict[str, tuple[str, ...]] = {}
    facts: dict[str, tuple[str, ...]] = {}
    keys: dict[str, tuple[str, ...]] = {}
    needs: dict[str, tuple[str, ...]] = {}
    parts = ("requests", "facts", "keys", "needs") if asks == "requests" else ("questions", "facts")
    for name, table in data.items():
        if not isinstance(table, dict) or set(table) - set(parts):
            raise ConfigError(f"{key}: category {name!r} must be a table of {'/'.join(parts)}", key=key)
        for part, out in (("requests", req), ("questions", req), ("facts", facts), ("keys", keys), ("needs", needs)):
            if part not in parts:
                continue
            items = table.get(part, [])
            if not isinstance(items, list) or not all(isinstance(t, str) and t.strip() for t in items):
                raise ConfigError(f"{key}: {name}.{part} must be a list of non-empty strings", key=key)
            if items:
                out[str(name)] = tuple(t.strip() for t in items)
    if not any(n != NONE and n in req and n in facts for n in set(req) | set(facts)):
        raise ConfigError(f"{key}: no category with both {asks} and facts", key=key)
    if asks != "requests":
        return ExampleSet({}, facts, {}, {}, req)
    for name, words in needs.items():
        bad = [w for w in words if len(dictionary_words(w)) != 1]
        if name == NONE or bad:  # a need word matches one dictionary word of the request (Categories.need_labels)
            raise ConfigError(f"intent.exemplars: {name}.needs must be single words of a category other than "
                              f"'none' ({bad or name!r})", key="intent.exemplars")
    return ExampleSet(req, facts, {k: tuple(w.lower() for w in v) for k, v in keys.items() if k != NONE},
                      {k: frozenset(t for w in v for t in dictionary_words(w)) for k, v in needs.items() if k != NONE})


@dataclass(frozen=True)
class CategoryLabel:
    """A category decision: ``name``, ``score`` (cosine to its nearest example) and ``margin``
    over the best other category (``none`` included)."""

    name: str
    score: float
    margin: float


def _unit(x: np.ndarray) -> np.ndarray:
    """Rows of ``x`` scaled to unit L2 norm (a zero row stays zero)."""
    n = np.linalg.norm(x, axis=-1, keepdims=True)
    return np.divide(x, n, out=np.zeros_like(x), where=n > 0)


class _Bank:
    """Stacked example vectors of one kind (unit rows, shape (n, dim), float32) with the category of each
    row. With ``center`` the bank's mean vector is subtracted from the examples and from every scored
    vector before the cosine: a mean-centred cosine (Mu & Viswanath 2018, "All-but-the-top", the
    common-mean step) removes the direction all texts of a kind share. e5-small puts every short
    text within raw cosine 0.80-0.95 of every example, so the nearest categories differ by 0.01-0.02
    (noise); centred, the category a request needs leads by 0.05-0.4 on the dev suites. The mean is the bank's own
    (no extra data, no constant); centred scores lie in [-1, 1] and are what ``intent.*_min_score`` and
    ``*_margin`` are compared with."""

    def __init__(self, vecs: np.ndarray, cats: list[str], center: bool = False) -> None:
        vecs = np.asarray(vecs, dtype=np.float32)
        self.mean = vecs.mean(axis=0) if center else np.zeros(vecs.shape[1], dtype=np.float32)
        self.vecs, self.cats = (_unit(vecs - self.mean) if center else vecs), np.asarray(cats)
        # the examples as columns, contiguous: `mat @ vecs.T` on the transposed view took ~20-30 ms for 20 x 77
        # rows on a loaded 2-core machine (a threaded BLAS path), the contiguous copy ~0.01 ms
        self.cols = np.ascontiguousarray(self.vecs.T)
        self.center = center
        self.names = sorted(set(cats))
        self.masks = [self.cats == n for n in self.names]

    def knn(self, mat: np.ndarray, k: int) -> dict[str, np.ndarray]:
        """Per category, the mean (centred when the bank is) cosine of every row of ``mat`` (n, dim) to its
        ``k`` nearest examples of that category (fewer when the category has fewer): shape (n,) each. The
        mean of the k nearest rather than the nearest one alone, because a category's single closest example
        is noisy, and the reject class with several times more examples than a category wins the maximum
        by its size alone (dev needs suites: AUC 0.931 -> 0.944 for k = 1 -> 2, query-time membership)."""
        m = np.asarray(mat, dtype=np.float32).reshape(-1, self.vecs.shape[1])
        if self.center:
            m = _unit(m - self.mean)
        sims = m @ self.cols  # (n, examples)
        out: dict[str, np.ndarray] = {}
        for n, mask in zip(self.names, self.masks, strict=True):
            part = np.sort(sims[:, mask], axis=1)[:, ::-1][:, : max(1, k)]
            out[n] = part.mean(axis=1)
        return out

    def prototype(self, name: str) -> np.ndarray:
        """A search direction for category ``name`` in the raw space: the unit mean of its (centred) example
        rows. Against unit vectors its cosine orders memories as their centred similarity to the category's
        examples does, up to the norm of each centred vector (a candidate filter, not the decision)."""
        return np.asarray(_unit(self.vecs[self.cats == name].mean(axis=0)), dtype=np.float32)

    def nearest(self, vec: np.ndarray) -> list[tuple[float, str]]:
        """(score, category) of every category, best first: the cosine to its nearest example (centred
        when the bank is)."""
        v = np.asarray(vec, dtype=np.float32)
        if self.center:
            v = _unit(v - self.mean)
        sims = self.vecs @ v
        return sorted(((float(sims[m].max()), n) for n, m in zip(self.names, self.masks, strict=True)), reverse=True)


_KEY_SPLIT = re.compile(r"[._\-\s/:]+")


def _membership(bank: _Bank, vecs: np.ndarray, name: str, k: int, w: float, request: np.ndarray | None) -> np.ndarray:
    """The lead of each document vector (shape (n, dim)) for class ``name`` of a centred fact ``bank`` over its
    reject class: the mean-centred cosine to the ``k`` nearest example facts of ``name``, blended with weight ``w``
    with the centred cosine to ``request`` (a query vector, shape (dim,), or None), minus the same ``k``-nearest
    score of ``none``; shape (n,), in [-2, 2]. Zeros when the bank lacks ``name`` or ``none``."""
    if name not in bank.names or NONE not in bank.names:
        return np.zeros(len(vecs), dtype=np.float32)
    s = bank.knn(vecs, k)
    side = s[name]
    if request is not None and w > 0:
        m = _unit(np.asarray(vecs, dtype=np.float32).reshape(-1, bank.vecs.shape[1]) - bank.mean)
        r = _unit(np.asarray(request, dtype=np.float32).reshape(-1) - bank.mean)
        side = (1.0 - w) * side + w * (m @ r)
    return np.asarray(side - s[NONE], dtype=np.float32)



def _embed_bank(embedder: CachedEmbedder, examples: Mapping[str, Sequence[str]], *, queries: bool,
                center: bool) -> _Bank:
    """One example bank: every example text of every name, embedded as queries (``queries``) or as documents."""
    rows = [(n, t) for n, ts in examples.items() for t in ts]
    if queries:
        vecs = np.stack([embedder.embed_query(t) for _, t in rows])
    else:
        vecs = embedder.embed_documents([t for _, t in rows])
    return _Bank(vecs, [n for n, _ in rows], center=center)

class Categories:
    """The classifier over one embedder: :meth:`of_query` routes a query vector, :meth:`of_fact`
    tags a statement's document vector (and optional fact key). Example vectors are embedded on
    first use and kept per embedding version (thread-safe). Raises ConfigError at construction for
    an unreadable examples file, EmbeddingError from the embedder on first use."""

    def __init__(self, embedder: CachedEmbedder, cfg: IntentSection) -> None:
        self.embedder, self.cfg = embedder, cfg
        self.examples = load_examples(cfg.exemplars)
        self._banks: dict[str, _Bank] = {}
        self._lock = threading.Lock()

    @property
    def enabled(self) -> bool:
        return self.cfg.enabled

    def _bank(self, kind: str) -> _Bank:
        """The example vectors of ``kind`` ('q' requests as queries, 'd' facts as documents), embedded on
        first use per embedding version (each kind only when needed: a process that only retrieves never
        embeds the example facts; about 40-55 short texts each, ~1 s with e5 on one core)."""
        center = self.cfg.center_queries if kind == "q" else self.cfg.center_facts
        key = f"{kind}:{self.embedder.version}:{int(center)}"
        with self._lock:
            bank = self._banks.get(key)
        if bank is None:
            bank = _embed_bank(self.embedder, self.examples.requests if kind == "q" else self.examples.facts,
                               queries=kind == "q", center=center)
            with self._lock:
                self._banks[key] = bank
        return bank

    @staticmethod
    def _decide(ranked: list[tuple[float, str]], min_score: float, margin: float,
                max_n: int = 1, also_margin: float | None = None, truncate: bool = False) -> tuple[CategoryLabel, ...]:
        """The categories of one decision, best first, or ().

        () when the best is ``none`` or below ``min_score``, or ``none`` is within ``margin`` of the best (the
        lead over the reject class decides *whether*). The decision is the leading run of categories within
        ``also_margin`` (None = ``margin``) of the best, stopping at ``none`` (a class the reject class beats is
        not needed); a run longer than ``max_n`` is cut to the ``max_n`` best when ``truncate``, else routes
        nowhere (too vague a call). Each label's ``margin`` is its lead over the first class outside the run.
        With ``max_n`` = 1 and no truncation this is the one-winner rule."""
        if not ranked:
            return ()
        score, name = ranked[0]
        if name == NONE or score < min_score or any(n == NONE and score - s < margin for s, n in ranked):
            return ()
        band = margin if also_margin is None else max(margin, also_margin)
        run: list[tuple[float, str]] = []
        for s, n in ranked:
            if n == NONE or score - s >= band:
                break
            run.append((s, n))
        if len(run) > max_n and not truncate:
            return ()
        run = run[:max_n]  # a prefix of `ranked`: the next class is the first one not kept
        nxt = ranked[len(run)][0] if len(ranked) > len(run) else -1.0
        return tuple(CategoryLabel(n, round(s, 6), round(s - nxt, 6)) for s, n in run)

    def _member_bank(self) -> _Bank:
        """The example facts as documents, always mean-centred: the bank query-time membership reads
        (independent of ``intent.center_facts``, which only concerns the write-time tag)."""
        key = f"m:{self.embedder.version}"
        with self._lock:
            bank = self._banks.get(key)
        if bank is None:
            rows = [(n, t) for n, ts in self.examples.facts.items() for t in ts]
            bank = _Bank(self.embedder.embed_documents([t for _, t in rows]), [n for n, _ in rows], center=True)
            with self._lock:
                self._banks[key] = bank
        return bank

    def membership(self, vecs: np.ndarray, name: str, request: np.ndarray | None = None) -> np.ndarray:
        """How strongly each stored memory (document vectors, shape (n, dim)) is a statement of category
        ``name``, decided at query time for the category a request was routed to: the mean-centred cosine to
        its ``intent.member_k`` nearest example facts of ``name`` minus the same to the reject class's
        (a lead in [-2, 2]; > 0 = nearer the category than the things that need nothing).

        Why at query time and one category at a time: the write-time tag (:meth:`fact_labels`) must pick the
        best of nine classes on raw cosines packed within 0.01-0.02, and what it got wrong stays wrong (dev:
        '我乳糖不耐受' tagged health only, so a takeout request never saw it; a nephew's dinosaurs tagged food).
        A routed request asks a binary question instead - is this memory of the kind I need, rather than
        of no kind? - which separates better (dev needs suites, routed requests: AUC 0.944 against 0.90
        for the raw tag rule's lead).

        ``request``: the request's query embedding (shape (dim,)); with ``intent.member_request_weight`` w > 0 the
        category side is (1 - w) x the k-nearest-example score + w x the memory's centred cosine to the request
        (centred by the same bank mean): the request is one more example of what it needs, weighted as a share
        of the category's evidence (None or w = 0: examples only)."""
        return _membership(self._member_bank(), vecs, name, self.cfg.member_k, self.cfg.member_request_weight, request)

    def prototype(self, name: str) -> np.ndarray | None:
        """The search direction of category ``name`` (:meth:`_Bank.prototype`), or None when it has no
        example facts."""
        bank = self._member_bank()
        return bank.prototype(name) if name in bank.names else None

    def need_labels(self, text: str, vec: np.ndarray) -> tuple[CategoryLabel, ...]:
        """The categories a request names by a need word (``needs`` of the examples file matched against
        :func:`memory_engine.text.dictionary_words` of ``text``), in the order of their nearest-example score
        (best first), each kept only when that score minus the reject class's (the (centred) scores of
        :meth:`query_labels`, ``vec`` the query embedding) is >= ``intent.need_none_margin``. Label ``score`` =
        the category's score, ``margin`` = that lead over ``none``. () when ``intent.needs`` is off, when no word
        matches, and, unless ``intent.needs_in_questions``, for a question (:func:`memory_engine.text.is_lookup`
        with no short-phrase allowance: 'what day do I fly to Lisbon?' asks for the flight, not for every travel
        fact; 'what did I have for dinner last night?' for the episode, not the diet) or a conversation of several
        lines (its words name things in passing); () for a query of fewer than ``intent.needs_min_terms`` content
        terms (one word names a topic: 'coffee')."""
        if not (self.cfg.enabled and self.cfg.needs and self.examples.needs):
            return ()
        if len(content_terms(text)) < self.cfg.needs_min_terms:
            return ()
        # a question asking for advice is a request ('给孩子做个早餐，有什么推荐': the child's allergy matters)
        if not self.cfg.needs_in_questions and ("\n" in text.strip() or (is_lookup(text, 0) and not asks_advice(text))):
            return ()
        words = dictionary_words(text)
        named = [n for n, ws in self.examples.needs.items() if ws & words]
        if not named:
            return ()
        scores = {n: s for s, n in self._bank("q").nearest(vec)}
        none = scores.get(NONE, -1.0)
        out = [CategoryLabel(n, round(scores.get(n, -1.0), 6), round(scores.get(n, -1.0) - none, 6)) for n in named]
        return tuple(sorted((lb for lb in out if lb.margin >= self.cfg.need_none_margin),
                            key=lambda lb: (-lb.score, lb.name)))

    def query_labels(self, vec: np.ndarray) -> tuple[CategoryLabel, ...]:
        """The categories a request (its query embedding) needs, best first (at most ``intent.max_categories``),
        or () (off, reject class, too far, too many close calls)."""
        if not self.cfg.enabled:
            return ()
        return self._decide(self._bank("q").nearest(vec), self.cfg.query_min_score, self.cfg.query_margin,
                            self.cfg.max_categories, self.cfg.query_also_margin, self.cfg.truncate)

    def fact_labels(self, vec: np.ndarray, fact_key: str | None = None) -> tuple[CategoryLabel, ...]:
        """The categories of a statement (its document embedding), best first, or (); a structured fact key
        naming a category's key word wins alone (score 1)."""
        if not self.cfg.enabled:
            return ()
        if fact_key:
            parts = set(_KEY_SPLIT.split(str(fact_key).lower()))
            for name, words in self.examples.keys.items():
                if parts & set(words):
                    return (CategoryLabel(name, 1.0, 1.0),)
        return self._decide(self._bank("d").nearest(vec), self.cfg.fact_min_score, self.cfg.fact_margin,
                            self.cfg.max_categories, truncate=self.cfg.truncate)

    def of_query(self, vec: np.ndarray) -> CategoryLabel | None:
        """The best category a request needs (:meth:`query_labels`), or None."""
        labels = self.query_labels(vec)
        return labels[0] if labels else None

    def of_fact(self, vec: np.ndarray, fact_key: str | None = None) -> CategoryLabel | None:
        """The best category of a statement (:meth:`fact_labels`), or None."""
        labels = self.fact_labels(vec, fact_key)
        return labels[0] if labels else None


#: first-person pronouns (a closed class): a question in the first person asks about the user
_FIRST_PERSON = re.compile(r"\b(?:i|i'm|im|i've|i'd|me|my|mine|myself)\b|我|俺", re.IGNORECASE)
#: the opening of a statement whose subject is another person: a third-person pronoun, or a relative or relation
#: noun possessed by the speaker ('my sister lives in Portland', '我老公在银行上班', '我室友上个月去小米上班了')
_OTHER_OPENING_EN = re.compile(r"^\W*(?:(?:he|she|they)\b|(?:my|our)\s+(?P<noun>[a-z]+(?:[- ]in[- ]law)?)\b)", re.IGNORECASE)
_OTHER_OPENING_ZH = re.compile(r"^\W*(?:[他她]|(?:我|我们|咱|咱们)(?:的|家)?(?P<noun>[\u4e00-\u9fff]{1,4}))")


def about_other_person(text: str) -> bool:
    """Whether a statement opens with another person as its subject (:data:`_OTHER_OPENING_EN` /
    ``_ZH``): a third-person pronoun, or the speaker's relative or relation noun (:func:`memory_engine.text.relatives`,
    :data:`memory_engine.text.RELATION_NOUNS_ZH`) right after 'my' / 我 (我的 / 我家). 'my sister lives in Denver' and '我老公在银行上班'
    are about another person; 'we moved to Munich for my wife's job', 'my flat is in Leeds', '我住在杭州' are not."""
    t = (text or "").strip()
    m = _OTHER_OPENING_EN.match(t)
    if m:
        noun = m.group("noun")
        return noun is None or bool(relatives(noun))
    m = _OTHER_OPENING_ZH.match(t)
    if m:
        noun = m.group("noun")
        if noun is None:
            return True
        return any(noun.startswith(w) for w in RELATION_NOUNS_ZH) or bool(relatives("我" + noun[:1]))
    return False


class AnswerTypes:
    """Answer types of questions about the user (facts by meaning for questions): the slot a question asks for.

    "where do I work?" shares no word with "I love my job as a nurse at St. Mary's", and their cosine lies under the
    relevance floor; "what did I do on June 10?" names no slot at all. A one-line question in the first person that
    names no other person (:meth:`asks`) is routed to answer type t (an employer, a home city, hobbies, a diet rule, a
    pet, a commute, exercise, a health condition: the bundled ``slots.toml``, ``intent.answer_exemplars``) when the
    mean-centred cosine of its query embedding to t's ``intent.answer_k`` nearest example questions is at least
    ``intent.answer_min_score`` and leads the reject class's (questions whose answer is an episode, a date, a number,
    a name: ``none``) by at least ``intent.answer_margin``: the classifier reads the question's interrogative frame and
    its head together ('what did I eat on June 10?' is an episode, 'what can't I eat?' a diet rule). One winner or none.

    A stored user statement is a member of t by :func:`_membership` over t's own example facts against the reject
    class's (mean-centred documents), blended with the question itself (``intent.answer_question_weight``); a
    statement about another person (:func:`about_other_person`) is no member. Names are distinct from the request
    categories' (:class:`Categories`), so no write-time tag stands for an answer type: membership decides at query
    time. Example vectors are embedded on first use per embedding version (thread-safe)."""

    def __init__(self, embedder: CachedEmbedder, cfg: IntentSection) -> None:
        self.embedder, self.cfg = embedder, cfg
        self.examples = load_examples(cfg.answer_exemplars, asks="questions")
        self.names = frozenset(n for n in self.examples.questions if n != NONE and n in self.examples.facts)
        self._banks: dict[str, _Bank] = {}
        self._lock = threading.Lock()

    @property
    def enabled(self) -> bool:
        return self.cfg.enabled and self.cfg.answer_types

    def _bank(self, kind: str) -> _Bank:
        """'q': the example questions as queries, 'd': the example facts as documents; both mean-centred."""
        key = f"{kind}:{self.embedder.version}"
        with self._lock:
            bank = self._banks.get(key)
        if bank is None:
            bank = _embed_bank(self.embedder, self.examples.questions if kind == "q" else self.examples.facts,
                               queries=kind == "q", center=True)
            with self._lock:
                self._banks[key] = bank
        return bank

    @staticmethod
    def asks(text: str) -> bool:
        """Whether ``text`` is a question of one line about the user alone: it asks (:func:`memory_engine.text.is_lookup`
        with no short-phrase allowance), speaks in the first person and names no other person
        (:func:`memory_engine.text.people`: relatives, names): 'where does my sister work?' asks for her slot, which
        the user's own job does not fill."""
        t = (text or "").strip()
        return (bool(t) and "\n" not in t and is_lookup(t, 0) and _FIRST_PERSON.search(t) is not None
                and not people(t))

    def labels(self, text: str, vec: np.ndarray) -> tuple[CategoryLabel, ...]:
        """The answer type ``text`` (its query embedding ``vec``) asks for, as one label (``margin`` = its lead over
        the reject class), or () (off, not a question about the user, too far, or the reject class too close)."""
        if not self.enabled or not self.names or not self.asks(text):
            return ()
        s = self._bank("q").knn(np.asarray(vec, dtype=np.float32)[None, :], self.cfg.answer_k)
        none = float(s[NONE][0]) if NONE in s else -1.0
        ranked = sorted(((float(v[0]), n) for n, v in s.items() if n in self.names), reverse=True)
        if not ranked:
            return ()
        score, name = ranked[0]
        if score < self.cfg.answer_min_score or score - none < self.cfg.answer_margin:
            return ()
        return (CategoryLabel(name, round(score, 6), round(score - none, 6)),)

    def membership(self, vecs: np.ndarray, name: str, question: np.ndarray | None = None) -> np.ndarray:
        """How strongly each stored memory (document vectors, shape (n, dim)) states a value of answer type ``name``
        (:func:`_membership` with ``intent.answer_k`` and ``intent.answer_question_weight``)."""
        return _membership(self._bank("d"), vecs, name, self.cfg.answer_k, self.cfg.answer_question_weight, question)

    def prototype(self, name: str) -> np.ndarray | None:
        """The search direction of answer type ``name`` (:meth:`_Bank.prototype` of the facts), or None."""
        bank = self._bank("d")
        return bank.prototype(name) if name in bank.names else None


def category_of(payload: dict[str, Any]) -> str | None:
    """The (best) category a stored memory was tagged with at write (``metadata._category``), or None."""
    meta = payload.get("metadata") or {}
    cat = meta.get("_category")
    return str(cat) if cat else None


def categories_of(payload: dict[str, Any]) -> frozenset[str]:
    """Every category a stored memory was tagged with (``metadata._categories``, else ``_category``)."""
    meta = payload.get("metadata") or {}
    many = meta.get("_categories")
    out = {str(c) for c in many} if isinstance(many, list) else set()
    one = category_of(payload)
    return frozenset(out | ({one} if one else set()))
