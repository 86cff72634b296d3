"""Stale values (issue 16): among the retrieved memories about the same subject,
a newer statement outranks an older one, so a silent habit change ("lunch at
the noodle bar" -> "lunch at the Thai place"), a status update or an A -> B -> A
flip answers with the latest value first. Nothing is archived here (the write
path owns supersession); the older memory only ranks below the newer one.

Same subject = the two memories' own embeddings are close: rescaled cosine
>= ``retrieval.stale_similarity`` (measured on the golden supersession pairs:
same-subject updates 0.58..0.94, different subjects of one user 0.23..0.56 with
e5; see benchmarks/README.md). The older one's fused score becomes at most
``retrieval.stale_discount`` x the newer one's. e5 puts two Chinese memories 0.06-0.08 higher than two English
ones, same subject or not, so on the model's (English) baseline every two Chinese memories of one user pass these
bars; with ``retrieval.stale_cjk_pairs`` such a pair is rescaled against ``embedding.cjk_pair_baseline``
(:class:`PairRescale`).

A memory's time is when the user last *stated* it: a restatement merged into it
(dedup) moves its ``updated_at``, so in an A -> B -> A flip whose second A merged
into the first, A is newer than B. An older memory that states its value as
provisional ("tentatively on May 12", "暂定12月20号",
:func:`memory_engine.write.intents.provisional`) is the same subject as a newer one
already at ``retrieval.stale_provisional_similarity`` (the final value reads
differently: "confirmed for May 19 at the lake house").

Two statements that fill one slot with different values (:func:`value_change`: each states a
value of a kind the other states too, and the values differ: "82 kg" -> "down to 76 kg",
"月薪18k" -> "月薪22k", "lands at 6pm" -> "lands at 9:30pm", "B2层 C-117 车位" -> "B1层 A-032 车位") are the same subject already at ``retrieval.stale_value_similarity``, the newer
one needs only ``retrieval.stale_value_relevance_share`` of the older one's relevance and not
its query words (the new value rarely repeats the attribute: "down to 76 kg on the scale" for
"how much do I weigh?"), and with ``retrieval.stale_value_within_session`` the pair may be two
turns of one session (the flight moved while the user was talking: no correction word, so the
write path keeps both). Nothing is archived: the older value only ranks below.

What the assistant suggested or a tool returned ranks below what the user said about
the same subject, whatever their times (:func:`defer_to_user`,
``retrieval.stale_user_precedence``).

An explicit correction that names the replaced value of an older memory it did not archive
("My daughter is six" <- "Actually she's seven, not six": no subject term shared) lists
that memory in its ``metadata._corrects`` (memory_engine/write/supersede.py); whenever both
are candidates the older one ranks below the correction, whatever their sessions or
similarity (:func:`demote_corrected`). The same cap orders a suggestion thread (request ->
assistant suggestion -> the user's own decision, :func:`memory_engine.retrieve.addressee.thread_demotions`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from ..config import RetrievalSection
from ..embedding import CachedEmbedder, rescale_similarity
from ..errors import ConfigError
from ..store.base import VectorStore
from ..text import EN_STOP, content_terms
from ..write import rules
from ..write.changes import successor
from ..write.correction import marker_context, names_other_subject, same_speaker
from ..write.correction import speaker_of as correction_speaker
from ..write.intents import CHANGE, adds_value, provisional, reports_change, subject_terms
from ..write.roles import author_role
from ..write.supersede import number_terms
from .addressee import thread_demotions
from .candidates import is_cjk
from .fusion import Candidate, rank_key
from .routes import HOP_CHANNEL

__all__ = ["PairRescale", "StaleValues", "competing", "defer_to_user", "demote_corrected", "demote_stale", "lift_replacements",
           "lift_successors",
           "present_subject", "states_something",
           "value_change", "value_kinds"]

#: a sentence: text up to and including its end mark (or the end of the text)
_SENTENCE = re.compile(r"[^.!?。！？\n]+[.!?。！？]*")
#: a content word of at least this many letters / one CJK ideograph makes a statement
_WORDLIKE = re.compile(r"[A-Za-z]{3,}|\d|[\u3400-\u9fff]")


def states_something(content: str) -> bool:
    """Whether ``content`` has at least one sentence that is not a question (does not end
    with '?' / '？') and holds a word: "Wow, what an experience! How did it make you feel?"
    has one ("Wow, what an experience!"), "What kind of pots do you make?" none."""
    for m in _SENTENCE.finditer(content):
        sent = m.group(0).strip()
        if sent and not sent.endswith(("?", "？")) and _WORDLIKE.search(sent):
            return True
    return False


#: a value: a number (Arabic, or a Chinese numeral other than a lone 一, which mostly forms words: 一起,
#: 一件) with the unit right after it ('82 kg', '18k', '6pm', '9:30pm', 'the 12th', '5岁', '72公斤', 'B2层',
#: 'C-117 车位'); a short code prefix is allowed ('B2', 'C-117'), an identifier is not (see _IDENT_DIGITS)
_VALUE = re.compile(
    r"(?<![A-Za-z0-9])(?:[A-Za-z]{1,2}-?)?(?P<num>\d+(?:[.:]\d+)?|[二两三四五六七八九十][零一二两三四五六七八九十]*)"
    r"\s*(?P<unit>[A-Za-z%]+|[\u4e00-\u9fff])(?![A-Za-z0-9])")
#: an identifier names an entity, not a value of one (order JD7730152488 vs JD7730160021 are two orders)
_IDENT_DIGITS = 5
#: a bare reading: an Arabic number (a decimal, a time, a ratio such as a blood pressure '126/82') not glued to a
#: letter, digit or date separator on either side ('85.5', '高压150', '量了138', '126/82')
_READING = re.compile(r"(?<![A-Za-z0-9.:/-])\d+(?:[.:]\d+)?(?:/\d+(?:\.\d+)?)?(?![A-Za-z0-9]|[.:/-]\d)")
#: a title-case word right before a bare number names a model or an edition ('Elite 8', 'Pixel 8'), not a reading
_MODEL_NAME = re.compile(r"\b[A-Z][A-Za-z]*\s*$")
#: the unit-less kind of :func:`value_kinds` with ``readings``
READING = "#"
#: English prepositions (a closed class; Quirk et al. 1985 §9.7) beside the function words of
#: :data:`memory_engine.text.EN_STOP`: a number before one has no unit ('71 after two weeks', '66 since Monday')
_PREPOSITIONS = frozenset("""after before since until till during through throughout across around between among
    against toward towards within without behind beside besides beyond near past per via upon onto off out up down
    along amid despite except inside outside unlike like""".split())


def value_kinds(text: str, readings: bool = False) -> dict[str, frozenset[str]]:
    """The values ``text`` states, by unit: {'kg': {'82'}}, {'k': {'18'}}, {'pm': {'9:30'}}, {'th': {'12'}},
    {'岁': {'5'}} (Chinese numerals normalised, :func:`memory_engine.write.supersede.number_terms`:
    五 -> 5). A number without a unit right after it is no value (a count, a model name: 'Elite 8'),
    nor one with >= 5 digits or glued to letters (an identifier: 'JD7730152488', 'sunflower2024'); an English
    function word after a number is no unit (:data:`memory_engine.text.EN_STOP`, :data:`_PREPOSITIONS`, closed
    classes: 'scale said 85.5 this morning', '71 after two weeks'). With ``readings`` such a bare Arabic number is a value of the unit-less kind :data:`READING`
    ('高压150', '量了138', '126/82', 'scale said 85.5'), unless a title-case word names it ('Elite 8')."""
    out: dict[str, set[str]] = {}
    taken: list[tuple[int, int]] = []
    for m in _VALUE.finditer(text or ""):
        num, unit = m.group("num"), m.group("unit").lower()
        if sum(ch.isdigit() for ch in num) >= _IDENT_DIGITS or unit in EN_STOP or unit in _PREPOSITIONS:
            continue
        taken.append(m.span("num"))
        if not num[0].isdigit():
            num = next((t for t in number_terms([num]) if t.isdigit()), num)
        out.setdefault(unit, set()).add(num)
    if readings:
        for m in _READING.finditer(text or ""):
            num = m.group(0)
            if any(a <= m.start() < b for a, b in taken) \
                    or max(sum(ch.isdigit() for ch in part) for part in num.split("/")) >= _IDENT_DIGITS \
                    or _MODEL_NAME.search(text[: m.start()]):
                continue
            out.setdefault(READING, set()).add(num)
    return {k: frozenset(v) for k, v in out.items()}


def _magnitude(num: str) -> float | None:
    """The size of a value's number: '85.5' -> 85.5, '126/82' -> 126.0; None for a clock time or a numeral."""
    head = num.split("/", 1)[0]
    try:
        return float(head) if ":" not in head else None
    except ValueError:
        return None


def _as_units(kinds: dict[str, frozenset[str]], other: dict[str, frozenset[str]], ratio: float
              ) -> dict[str, frozenset[str]]:
    """``kinds`` with each bare reading (:data:`READING`) also counted as a value of every unit of ``other`` that
    states a number of its size (the larger over the smaller <= ``ratio``): 'scale said 85.5' continues '88 kg';
    successive readings of one quantity stay close, a count or a date rarely lands near a weight."""
    out = {k: set(v) for k, v in kinds.items()}
    for num in kinds.get(READING, frozenset()):
        x = _magnitude(num)
        if x is None or x <= 0.0:
            continue
        for unit, nums in other.items():
            if unit == READING:
                continue
            if any((y := _magnitude(n)) is not None and y > 0.0 and max(x, y) / min(x, y) <= ratio for n in nums):
                out.setdefault(unit, set()).add(num)
    return {k: frozenset(v) for k, v in out.items()}


def value_change(old_text: str, new_text: str, readings: float | None = None) -> bool:
    """Whether the newer statement states another value of a unit the older one states
    (:func:`value_kinds`): for some unit both state, the newer has a value the older lacks and the
    older one a value the newer lacks ('82 kg' -> '76 kg'). A restatement with the same numbers, two
    statements sharing no unit, or a newer statement that is negated ("B 方案（7 万元）没有采纳"
    states no value, :func:`memory_engine.write.rules.polarity`) is no value change. ``readings`` (a ratio >= 1,
    None = off): bare numbers count as readings of one unit-less kind, and as readings of a unit the other
    statement states at a number within that ratio of theirs (:func:`_as_units`: '88 kg now' -> 'scale said 85.5',
    '高压150' -> '今天量了138')."""
    if rules.polarity(new_text):
        return False
    old, new = value_kinds(old_text, readings is not None), value_kinds(new_text, readings is not None)
    if readings is not None:
        old, new = _as_units(old, new, readings), _as_units(new, old, readings)
    return any((new[k] - old[k]) and (old[k] - new[k]) for k in old.keys() & new.keys())


def competing(old: dict[str, Any], new: dict[str, Any], *, across_sessions: bool = True,
              statements_only: bool = True) -> bool:
    """Whether payload ``new`` can state a newer value of what payload ``old`` states: the
    same author (role and ``metadata.speaker``, :func:`memory_engine.write.correction.same_speaker`),
    with ``across_sessions`` not two turns of one session (both carry the same ``session_id``),
    with ``statements_only`` the newer one not only a question (:func:`states_something`)."""
    if not same_speaker(str(new.get("role") or "user"), dict(new.get("metadata") or {}), old):
        return False
    if across_sessions and old.get("session_id") and old.get("session_id") == new.get("session_id"):
        return False
    return not statements_only or states_something(str(new.get("content") or ""))


def demote_stale(ranked: list[Candidate], vectors: dict[str, np.ndarray], written: dict[str, float],
                 rescale: Any, similarity: float, discount: float, relevance_share: float = 0.9,
                 may_compete: Callable[[str, str], bool] | None = None,
                 provisional_ids: frozenset[str] = frozenset(), provisional_similarity: float = 1.0,
                 value_pair: Callable[[str, str], bool] | None = None, value_similarity: float = 1.0,
                 value_relevance_share: float = 1.0, takes_rank: bool = False, flip_similarity: float = 1.0,
                 changes: frozenset[str] = frozenset(), update_similarity: float = 1.0,
                 update_relevance_share: float = 1.0, update_coverage_share: float = 1.0,
                 shares_subject: Callable[[str, str], bool] | None = None,
                 present: frozenset[str] = frozenset(), present_similarity: float = 1.0,
                 pair_rescale: Callable[[float, str, str], float] | None = None,
                 present_relevance_share: float = 0.0, present_coverage_share: float = 0.0,
                 present_pair: Callable[[str, str], bool] | None = None,
                 ) -> tuple[list[Candidate], dict[str, str]]:
    """For every pair of ``ranked`` candidates whose vectors' rescaled cosine is >= ``similarity``,
    whose write times differ and where the newer one answers the query about as well
    (:func:`_newer_value`: relevance >= ``relevance_share`` x the older one's, so order A124 asked
    about A123 demotes nothing; the same query words covered; no date match lost), cap the
    older one's fused score at ``discount`` x the newer one's. ``vectors``: unit vectors by id (a candidate without one is left alone);
    ``written``: epoch seconds by id; ``rescale``: raw cosine -> [0, 1]; ``may_compete(older id,
    newer id)``: an extra gate (None = every pair may, see :func:`competing`); an older memory in
    ``provisional_ids`` needs only ``provisional_similarity``; a pair for which ``value_pair(older id,
    newer id)`` holds (one slot, two values: :func:`value_change`) needs only ``value_similarity``, and
    the newer one only ``value_relevance_share`` of the older one's relevance, whatever query words it
    covers. A flip back (:func:`_flip_back`: the newer one restates a value the older one had
    changed, A -> B -> A, with B at ``flip_similarity`` of the first A) counts like a value pair,
    whatever B's own similarity to the second A. An update pair (:func:`_update_pair`: the newer one
    reports a change, ``changes``, or the older one was provisional) needs only ``update_similarity``,
    and the newer one only ``update_relevance_share`` of the older one's relevance and
    ``update_coverage_share`` of its query-word coverage (some query word, so "my wife just started as a
    pharmacist" is no newer value of "my brother Sam works as a nurse" for "where does Sam work?");
    with ``shares_subject(older id, newer id)`` (None = always) the two must also name one subject;
    a flip back counts only when the newest one reports the change ("back on green tea"), so one
    speaker's turns on a topic are no flip. With ``takes_rank`` the newer one of a value, provisional,
    update or flip pair first takes the older one's fused score when that is higher (the slot keeps its
    place in the ranking, its current value fills it; the older one then loses one place, not the
    top k). A newer statement in ``present`` (the question asks for the value that holds now, so the question
    supplies the change the statement does not word: "I do the grocery run at Costco" -> "been getting groceries
    delivered through Instacart" for "how do I get my groceries now?") counts as reporting a change when the two
    are at least ``present_similarity`` close, and only when it answers the question on its own as well as the older
    one (the question is then the only evidence of a change: :func:`_present_answers`, relevance >=
    ``present_relevance_share`` x and query-word coverage >= ``present_coverage_share`` x the older one's, and
    ``present_pair(older id, newer id)``, None = always: the two name the question's subject). ``pair_rescale(cos, id, id)`` (None = ``rescale``) rescales a pair's
    cosine by the script of the two memories (:class:`PairRescale`). Returns the re-sorted candidates and {older id:
    the current value it yields to} for each demoted memory."""
    if pair_rescale is None:
        def pair_rescale(cos: float, a: str, b: str) -> float:
            return float(rescale(cos))
    ids = [c.memory_id for c in ranked if c.memory_id in vectors]
    if len(ids) < 2:
        return ranked, {}
    mat = np.stack([np.asarray(vectors[i], dtype=np.float32) for i in ids])
    sims = mat @ mat.T
    fused = {c.memory_id: c.fused for c in ranked}
    by_id = {c.memory_id: c for c in ranked}
    newer_of: dict[str, str] = {}
    raised: set[str] = set()
    # newest first, so a chain A -> B -> C caps A by B after B was capped by C
    order = sorted(range(len(ids)), key=lambda i: -written.get(ids[i], 0.0))
    for pos, i in enumerate(order):
        for j in order[:pos]:
            a, b = ids[i], ids[j]  # a older than (or as old as) b
            if written.get(a, 0.0) >= written.get(b, 0.0):
                continue
            bar = min(similarity, provisional_similarity) if a in provisional_ids else similarity
            sim = pair_rescale(float(sims[i, j]), a, b)
            value = value_pair is not None and sim >= value_similarity and value_pair(a, b)
            marked = changes | {b} if b in present and sim >= present_similarity and _present_answers(
                by_id[a], by_id[b], present_relevance_share, present_coverage_share) \
                and (present_pair is None or present_pair(a, b)) else changes
            update = _update_pair(by_id[a], by_id[b], marked, provisional_ids, sim, update_similarity,
                                  update_relevance_share, update_coverage_share, same_slot=value) \
                and (shares_subject is None or shares_subject(a, b))
            # a flip back needs the newest statement to report the change (see the docstring)
            back = b in marked and _flip_back(i, j, ids, sims, written, pair_rescale, similarity, flip_similarity,
                                               may_compete)
            if sim < bar and not back and not update and (value_pair is None or sim < value_similarity):
                continue
            value = value or (value_pair is not None and value_pair(a, b))
            vp = back or value
            if sim < bar and not vp and not update:
                continue
            if not (update or _newer_value(by_id[a], by_id[b], relevance_share)
                    or (vp and _newer_value(by_id[a], by_id[b], value_relevance_share, coverage=False))):
                continue
            if may_compete is not None and not may_compete(a, b):
                continue
            # b itself older than a value that replaced it (A -> B -> A', written newest first): a yields to
            # the slot's current value, so a demoted b never climbs back above it by taking a's rank
            while b in newer_of:
                b = newer_of[b]
            if takes_rank and fused[a] > fused[b] and (value or update or back or a in provisional_ids):
                # the current value takes the place the slot had in the ranking; only for a stated value
                # change or a provisional one made final: two merely similar turns of a chat are no slot
                # (LoCoMo dev, one process, floor 0: 0.799 with every similar pair, 0.804 without the rule)
                fused[b] = fused[a]
                raised.add(b)
            cap = discount * fused[b]
            if fused[a] > cap:
                fused[a] = cap
                newer_of[a] = b
    out, _ = _recapped(ranked, fused, {**{r: r for r in raised}, **newer_of})
    return out, newer_of


def _flip_back(i: int, j: int, ids: list[str], sims: np.ndarray, written: dict[str, float],
               rescale: Callable[[float, str, str], float],
               similarity: float, flip_similarity: float, may_compete: Callable[[str, str], bool] | None) -> bool:
    """Whether ``ids[j]`` (newer) flips back from ``ids[i]`` (older) to an earlier value: some third
    candidate written before ``ids[i]`` is the same subject as ``ids[j]`` (rescaled cosine >=
    ``similarity``: the value restated) and at least ``flip_similarity`` close to ``ids[i]`` (which
    changed it), of an author who may compete with ``ids[j]``. "green tea in the mornings" -> "black
    coffee every morning" -> "back on green tea in the mornings": the coffee memory shares fewer
    words with the last statement than with the first one. ``flip_similarity`` 1.0 = off."""
    if flip_similarity >= 1.0:
        return False
    a, b = ids[i], ids[j]
    for k, o in enumerate(ids):
        if k in (i, j) or written.get(o, 0.0) >= written.get(a, 0.0):
            continue
        if rescale(float(sims[k, j]), o, b) >= similarity and rescale(float(sims[k, i]), o, a) >= flip_similarity \
                and (may_compete is None or may_compete(o, b)):
            return True
    return False


def defer_to_user(ranked: list[Candidate], vectors: dict[str, np.ndarray], roles: dict[str, str], rescale: Any,
                  similarity: float, discount: float, relevance_share: float = 0.5,
                  pair_rescale: Callable[[float, str, str], float] | None = None,
                  ) -> tuple[list[Candidate], dict[str, str]]:
    """What the assistant suggested or a tool returned never outranks what the user said about the
    same subject (seed 004: user-stated > model-inferred), whatever their times: for every pair of an
    assistant / tool candidate and a user candidate whose vectors' rescaled cosine is >= ``similarity``
    and where the user's one is found on its own (not through an entity hop) with a relevance >=
    ``relevance_share`` x the other's (the assistant's restatement often repeats the question's
    words: "So you drink a flat white every morning" vs the user's "I drink green tea every
    morning"), the other's fused score is capped at ``discount`` x the user's. ``roles``: role by id (missing = 'user');
    ``pair_rescale(cos, id, id)``: as in :func:`demote_stale` (None = ``rescale``).
    Returns the re-sorted candidates and {capped id: user memory id}."""
    users = [c for c in ranked if roles.get(c.memory_id, "user") == "user" and c.memory_id in vectors]
    others = [c for c in ranked if roles.get(c.memory_id, "user") != "user" and c.memory_id in vectors]
    if not users or not others:
        return ranked, {}
    fused = {c.memory_id: c.fused for c in ranked}
    capped: dict[str, str] = {}
    for o in others:
        for u in users:
            sim = float(np.dot(np.asarray(vectors[o.memory_id], dtype=np.float32),
                               np.asarray(vectors[u.memory_id], dtype=np.float32)))
            scaled = rescale(sim) if pair_rescale is None else pair_rescale(sim, o.memory_id, u.memory_id)
            if scaled < similarity or HOP_CHANNEL in u.route_ranks or u.relevance < relevance_share * o.relevance:
                continue
            if fused[o.memory_id] > discount * fused[u.memory_id]:
                fused[o.memory_id] = discount * fused[u.memory_id]
                capped[o.memory_id] = u.memory_id
    return _recapped(ranked, fused, capped)


def lift_replacements(kept: list[Candidate], below: list[Candidate], payloads: dict[str, dict[str, Any]],
                      share: float, keys: tuple[str, ...] = ("_replaces",)) -> tuple[list[Candidate], list[Candidate]]:
    """``(kept, below)`` with every below-floor candidate whose ``metadata._replaces`` names a kept one (a
    reported change linked at write, memory_engine/write/changes.py: 'just finished moving to Shenzhen' ->
    'I live in Chengdu') moved into ``kept`` at ``share`` x the best such kept candidate's fused score
    (``retrieval.stale_replacement_lift``; 0 = off): found through the value it replaces, it never
    repeats the question's words. The older one is then ranked below it (:func:`demote_corrected`). ``keys``: the
    metadata links that count (``_succeeds`` too for a present-tense question: "just started at Tencent")."""
    if share <= 0.0 or not below or not kept:
        return kept, below
    score = {c.memory_id: c.fused for c in kept}
    lifted: list[Candidate] = []
    rest: list[Candidate] = []
    for c in below:
        meta = payloads.get(c.memory_id, {}).get("metadata") or {}
        olds = [score[str(i)] for k in keys for i in meta.get(k) or () if str(i) in score]
        if olds:
            lifted.append(replace(c, fused=share * max(olds)))
        else:
            rest.append(c)
    if not lifted:
        return kept, below
    return sorted(kept + lifted, key=lambda c: (-c.fused, c.memory_id)), rest


def lift_successors(kept: list[Candidate], below: list[Candidate], payloads: dict[str, dict[str, Any]], share: float,
                    head: int, onset: re.Pattern[str] | None = None, across_sessions: bool = True,
                    series: Callable[[str, str], bool] | None = None,
                    ) -> tuple[list[Candidate], list[Candidate], dict[str, tuple[str, ...]]]:
    """For a question asking for the present value: ``(kept, below, {successor id: the older ids it succeeds})``.
    A candidate (kept or below the floor) succeeds one of the best ``head`` kept ones when it is written later, by
    the same author (:func:`competing`, with ``across_sessions`` not in the same session) and states the speaker's
    present value of the same slot (:func:`memory_engine.write.changes.successor`, ``onset`` words); a below-floor
    successor enters ``kept`` (a kept one rises) at ``share`` x the best older one's fused score (``retrieval.stale_successor_lift``,
    0 = off: no link, nothing moved). The caller ranks each older one below its successor
    (:func:`demote_corrected`). ``payloads``: payload by id (``content``, ``created_at``, ``updated_at``).
    ``series(older id, newer id)`` (None = none) is a second test of the same link: the newer one is the next reading
    of a quantity the older one states (:meth:`StaleValues.reading_links`: '高压150' -> '今天量了138' -> '126/82'),
    which repeats neither the question's words nor a change word."""
    if share <= 0.0 or not kept:
        return kept, below, {}

    def when(i: str) -> float:
        pl = payloads.get(i, {})
        return max(float(pl.get("created_at") or 0.0), float(pl.get("updated_at") or 0.0))

    olds = kept[:head]
    links: dict[str, tuple[str, ...]] = {}
    for c in kept + below[:head]:
        new = payloads.get(c.memory_id, {})
        hit = tuple(o.memory_id for o in olds if o.memory_id != c.memory_id and when(o.memory_id) < when(c.memory_id)
                    and competing(payloads.get(o.memory_id, {}), new, across_sessions=across_sessions)
                    and (successor(str(payloads.get(o.memory_id, {}).get("content") or ""),
                                   str(new.get("content") or ""), onset) is not None
                         or (series is not None and series(o.memory_id, c.memory_id))))
        if hit:
            links[c.memory_id] = hit
    lift = {i: share * max(o.fused for o in olds if o.memory_id in hit) for i, hit in links.items()}
    moved = [replace(c, fused=max(c.fused, lift[c.memory_id])) for c in below if c.memory_id in lift]
    # a kept successor ranked past the stale stage's window (another successor lifted above it) rises the same way
    raised = [replace(c, fused=lift[c.memory_id]) if c.memory_id in lift and c.fused < lift[c.memory_id] else c
              for c in kept]
    if not moved and raised == kept:
        return kept, below, links
    return (sorted(raised + moved, key=lambda c: (-c.fused, c.memory_id)),
            [c for c in below if c.memory_id not in lift], links)


def demote_corrected(ranked: list[Candidate], corrects: dict[str, tuple[str, ...]], discount: float,
                     takes_rank: bool = False) -> tuple[list[Candidate], dict[str, str]]:
    """Cap the fused score of every candidate an explicit correction among ``ranked`` links
    (``corrects``: correction id -> the older ids it corrects) at ``discount`` x the correction's,
    so the replaced value never ranks first. With ``takes_rank`` the correction first takes the older one's fused
    score when that is higher (as a value pair does in :func:`demote_stale`: the slot keeps its place in the ranking
    and its current value fills it, where a capped older value alone would hand the place to a third memory).
    Returns the re-sorted candidates and {older id: correction id} (a raised correction maps to itself only in the
    re-sort, not in the returned map)."""
    present = {c.memory_id for c in ranked}
    fused = {c.memory_id: c.fused for c in ranked}
    written = {c.memory_id: c.written_at for c in ranked}
    capped: dict[str, str] = {}
    raised: set[str] = set()
    # the older links first: in a flip A -> B -> A' the last change decides ('搬家了，现在住海淀' takes the first
    # home's rank, then '又搬回朝阳了' takes it from 海淀)
    for new, olds in sorted(corrects.items(), key=lambda kv: written.get(kv[0], 0.0)):
        if new not in present:
            continue
        for old in olds:
            if old not in present or old == new:
                continue
            if takes_rank and fused[old] > fused[new]:
                fused[new] = fused[old]
                raised.add(new)
            if fused[old] > discount * fused[new]:
                fused[old] = discount * fused[new]
                capped[old] = new
    out, _ = _recapped(ranked, fused, {**{r: r for r in raised}, **capped})
    return out, capped


def _linked(head: list[Candidate], payloads: dict[str, dict[str, Any]], keys: Sequence[str]
            ) -> dict[str, tuple[str, ...]]:
    """{candidate id: the ids its metadata links under ``keys``} for the candidates of ``head`` that link any
    (``_corrects``: an explicit correction, ``_replaces``: a reported change, ``_succeeds``: a start; write/changes.py)."""
    out: dict[str, tuple[str, ...]] = {}
    for c in head:
        meta = payloads.get(c.memory_id, {}).get("metadata") or {}
        links = tuple(str(i) for k in keys for i in meta.get(k) or ())
        if links:
            out[c.memory_id] = links
    return out


def _present_answers(old: Candidate, new: Candidate, relevance_share: float, coverage_share: float) -> bool:
    """Whether ``new`` answers a present-tense question on its own at least about as well as ``old``: relevance >=
    ``relevance_share`` x and query-word coverage >= ``coverage_share`` x ``old``'s (both in [0, 1]; 0 = no test). A
    newer statement that words no change stands for the current value only by answering the same question: "been
    getting groceries delivered through Instacart" covers 'groceries' as "the big grocery run at Costco" does, where a
    later turn of a chat that shares only the topic ("Thanks for the tip, Caroline...") answers less (issue 16, LoCoMo
    dev: such turns took the place of the evidence turn of single-hop questions)."""
    return new.relevance >= relevance_share * old.relevance and new.coverage >= coverage_share * old.coverage


def _update_pair(old: Candidate, new: Candidate, changes: frozenset[str], provisional_ids: frozenset[str],
                 sim: float, update_similarity: float, relevance_share: float, coverage_share: float,
                 same_slot: bool = False) -> bool:
    """Whether ``new`` states the current value of what ``old`` states on the evidence of its wording:
    ``new`` reports a change (in ``changes``: 'these days', '涨到', 'back on') or ``old`` was provisional
    (in ``provisional_ids``), the two are at least ``update_similarity`` close (rescaled cosine), and
    ``new`` answers the query on its own (:func:`_newer_value` without the coverage test) with
    ``relevance_share`` of ``old``'s relevance and ``coverage_share`` of its query-word coverage, never
    none when ``old`` covers some: the new value rarely repeats the attribute ('88 kg now' for "what's
    my current weight?"), but it names the subject. With ``same_slot`` (the two state values of one
    unit, :func:`value_change`: '82 kg' -> 'down to 76 kg') the unit names the slot and the coverage
    test is waived."""
    if new.memory_id not in changes and old.memory_id not in provisional_ids:
        return False
    if sim < update_similarity or not _newer_value(old, new, relevance_share, coverage=False):
        return False
    return same_slot or (new.coverage >= coverage_share * old.coverage and (new.coverage > 0.0 or old.coverage == 0.0))


def _newer_value(old: Candidate, new: Candidate, relevance_share: float, coverage: bool = True) -> bool:
    """Whether ``new`` can stand for a newer value of what ``old`` answers: found on its own
    (not only through an entity hop, whose relevance is borrowed), about as relevant, covering
    at least the query words ``old`` covers (a same-subject memory on another attribute,
    'the contact at ACME' vs 'the quote plan for ACME', covers fewer), and not losing a date
    the query names. ``coverage`` False drops the query-word test (a new value of the same slot) but
    not the query's identifier: an older memory matching it exactly ('ABC123456 size') keeps its rank."""
    if HOP_CHANNEL in new.route_ranks or new.temporal_match < old.temporal_match:
        return False
    if not coverage and new.exact_match < old.exact_match:
        return False
    return new.relevance >= relevance_share * old.relevance and (not coverage or new.coverage >= old.coverage)


class StaleValues:
    """``enabled`` when ``retrieval.stale_discount`` < 1. ``apply(kept, payloads, top_k)`` looks at
    the best ``top_k + retrieval.stale_window`` candidates (one vector fetch) and demotes stale
    ones (:func:`demote_stale`). Raises ConfigError for values outside [0, 1]."""

    def __init__(self, store: VectorStore, embedder: CachedEmbedder, rcfg: RetrievalSection,
                 cjk_pair_baseline: float | None = None) -> None:
        if not 0.0 <= rcfg.stale_discount <= 1.0 or not 0.0 <= rcfg.stale_similarity <= 1.0:
            raise ConfigError("retrieval.stale_discount and stale_similarity must be in [0, 1]",
                              key="retrieval.stale_discount")
        if rcfg.stale_window < 0:
            raise ConfigError("retrieval.stale_window must be >= 0", key="retrieval.stale_window")
        self.store, self.embedder = store, embedder
        if cjk_pair_baseline is not None and not 0.0 <= cjk_pair_baseline < 1.0:
            raise ConfigError("embedding.cjk_pair_baseline must be in [0, 1)", key="embedding.cjk_pair_baseline")
        self.cjk_pair_baseline = cjk_pair_baseline
        self.similarity, self.discount, self.window = rcfg.stale_similarity, rcfg.stale_discount, rcfg.stale_window
        self.relevance_share = rcfg.stale_relevance_share
        self.provisional_similarity = rcfg.stale_provisional_similarity
        self.user_precedence = rcfg.stale_user_precedence
        self.user_relevance_share = rcfg.stale_user_relevance_share
        self.across_sessions, self.statements_only = rcfg.stale_across_sessions, rcfg.stale_statements_only
        self.value_similarity, self.value_relevance_share = rcfg.stale_value_similarity, rcfg.stale_value_relevance_share
        self.value_within_session = rcfg.stale_value_within_session
        self.present_value_relevance_share = rcfg.stale_present_value_relevance_share
        self.newer_takes_rank = rcfg.stale_newer_takes_rank
        self.link_takes_rank = rcfg.stale_link_takes_rank
        self.reading_ratio = rcfg.stale_reading_ratio if rcfg.stale_present_readings else None
        self.flip_similarity = rcfg.stale_flip_similarity
        self.thread_order = rcfg.thread_order
        self.update_similarity = rcfg.stale_update_similarity
        self.update_relevance_share = rcfg.stale_update_relevance_share
        self.update_coverage_share = rcfg.stale_update_coverage_share
        self.update_shared_terms = rcfg.stale_update_shared_terms
        self.present_similarity = rcfg.stale_present_similarity
        self.present_relevance_share = rcfg.stale_present_relevance_share
        self.present_coverage_share = rcfg.stale_present_coverage_share
        self.present_query_subject = rcfg.stale_present_query_subject
        self.tense = rcfg.stale_query_tense
        self.present_drop = rcfg.stale_present_drop
        self.present_drop_links = rcfg.stale_present_drop_links
        self.drop_detail_terms = rcfg.stale_drop_detail_terms
        self.enabled = rcfg.stale_discount < 1.0

    def apply(self, kept: list[Candidate], payloads: dict[str, dict[str, Any]], top_k: int,
              precedence: bool = True, tense: str | None = None, same_subject: bool = True,
              query_terms: frozenset[str] | None = None) -> list[Candidate]:
        """The re-ranked candidates of :meth:`yields` (same arguments)."""
        return self.yields(kept, payloads, top_k, precedence, tense, same_subject, query_terms)[0]

    def yields(self, kept: list[Candidate], payloads: dict[str, dict[str, Any]], top_k: int,
               precedence: bool = True, tense: str | None = None, same_subject: bool = True,
               query_terms: frozenset[str] | None = None, successors: dict[str, tuple[str, ...]] | None = None,
               vectors: dict[str, np.ndarray] | None = None) -> tuple[list[Candidate], dict[str, str]]:
        """``(re-ranked candidates, {demoted id: the memory it now ranks below}``: a newer value, the user's own
        statement, a correction or a decision). With ``retrieval.stale_present_drop`` and ``tense`` 'present' a
        demoted memory whose current value (the end of its chain in that map) is in the top k is left out of the
        returned candidates; with ``retrieval.stale_present_drop_links`` so is a memory a top-k correction names
        (``metadata._corrects``) that has at most ``retrieval.stale_drop_detail_terms`` content terms the correction
        lacks. ``successors`` ({newer id: older ids}, :func:`lift_successors`) count as explicit links
        for a present-tense question. ``same_subject=False`` (a statement of the user's present, ``retrieval.stale_for_statements`` off) skips
        the same-subject demotion as a past-tense question does: explicit corrections and the user's precedence
        still hold. ``precedence=False`` (a query about what the assistant said, retrieve/addressee.py) skips the
        user precedence: the assistant's suggestion is then the answer, not a rival of the user's words.
        ``tense`` (:func:`memory_engine.write.intents.query_tense` of the question, with
        ``retrieval.stale_query_tense``): 'present' by a time word (``query_terms`` None) lets a value pair
        (:func:`value_change`) rank the newer value first at ``retrieval.stale_present_value_relevance_share`` of the
        older one's relevance (the newest reading of a series); 'present' makes every newer statement that adds no value beside the
        older ones (:func:`memory_engine.write.intents.adds_value`) a change report at
        ``retrieval.stale_present_similarity`` and uses the start links (``metadata._succeeds``,
        write/changes.py); 'past' ("where did I work before?") keeps the older values where they rank: the
        question asks for them (no same-subject demotion, no reported-change link; explicit corrections and
        the user's precedence over the assistant still hold). ``query_terms`` (content terms of the question) is given
        when the present tense is the question's grammar alone, no time word (retrieval.stale_tenseless_present):
        a newer statement then counts as a change report only when it answers the question as well as the older one
        (``retrieval.stale_present_relevance_share`` / ``stale_present_coverage_share``) and, with
        ``retrieval.stale_present_query_subject``, shares with it a question term that names no speaker of the
        candidates (:func:`present_subject`). None (a time word dates the question, or no present): no such test.
        ``vectors``: the query's vector cache (:meth:`vectors`; None = read from the store)."""
        if not self.tense:
            tense = None
        head, tail = kept[: top_k + self.window], kept[top_k + self.window:]
        if len(head) < 2:
            return kept, {}
        vecs = self.vectors([c.memory_id for c in head], vectors)
        # when the user last stated it: a merged restatement moves updated_at (an A -> B -> A flip)
        written = {c.memory_id: max(float(payloads.get(c.memory_id, {}).get("created_at") or 0.0),
                                    float(payloads.get(c.memory_id, {}).get("updated_at") or 0.0)) for c in head}
        pair_rescale = PairRescale(self.embedder.rescale, self.cjk_pair_baseline,
                                   {c.memory_id: str(payloads.get(c.memory_id, {}).get("content") or "") for c in head})
        tentative = frozenset(c.memory_id for c in head
                              if provisional(str(payloads.get(c.memory_id, {}).get("content") or "")))
        # a statement that adds a value beside the older ones ('家里又多了一只布偶', 'I also started piano') replaces none
        changes = frozenset(c.memory_id for c in head
                            if reports_change(text := str(payloads.get(c.memory_id, {}).get("content") or ""))
                            and not adds_value(text))
        present = frozenset(c.memory_id for c in head if tense == "present"
                            and states_something(text := str(payloads.get(c.memory_id, {}).get("content") or ""))
                            and not adds_value(text))
        # a time word asks for the newest reading of a series: bare numbers count as readings (value_change)
        readings = self.reading_ratio if tense == "present" and query_terms is None else None

        def value_pair(old: str, new: str) -> bool:
            return value_change(str(payloads.get(old, {}).get("content") or ""),
                                str(payloads.get(new, {}).get("content") or ""), readings)

        subjects = {c.memory_id: subject_terms(str(payloads.get(c.memory_id, {}).get("content") or "")) for c in head}

        def shares_subject(old: str, new: str) -> bool:
            # an update names what it updates: "Marcus quit ..." shares 'marcus' with "Marcus is an accountant";
            # and its own subject is the older memory's ('我妈把她家的路由器换成了华为的' is the mother's router)
            old_terms = subjects.get(old, frozenset())
            if len(old_terms & subjects.get(new, frozenset())) < self.update_shared_terms:
                return False
            text = str(payloads.get(new, {}).get("content") or "")
            m = CHANGE.search(text)
            return m is None or not names_other_subject(marker_context(text, m.start())[2], set(old_terms),
                                                        content_terms)

        present_pair = None
        if tense == "present" and self.present_query_subject and query_terms is not None:
            speakers = frozenset(t for c in head for t in content_terms(
                correction_speaker(dict(payloads.get(c.memory_id, {}).get("metadata") or {}),
                                   str(payloads.get(c.memory_id, {}).get("content") or ""))))

            def present_pair(old: str, new: str) -> bool:
                return present_subject(subjects.get(old, frozenset()), subjects.get(new, frozenset()), query_terms,
                                       speakers)

        def may_compete(old: str, new: str) -> bool:
            # a new value of one slot may come in the same session (one author's statements, see competing)
            within = self.value_within_session and value_pair(old, new)
            return competing(payloads.get(old, {}), payloads.get(new, {}),
                             across_sessions=self.across_sessions and not within, statements_only=self.statements_only)

        # a time word asks for the newest reading of a series: the new value needs less of the old one's relevance
        value_share = (min(self.value_relevance_share, self.present_value_relevance_share)
                       if tense == "present" and query_terms is None else self.value_relevance_share)
        below: dict[str, str] = {}
        if tense == "past" or not same_subject:  # the older value is asked for: no same-subject demotion
            demoted = list(head)
        else:
            demoted, below = demote_stale(head, vecs, written, self.embedder.rescale, self.similarity, self.discount,
                                      self.relevance_share, may_compete, tentative, self.provisional_similarity,
                                      value_pair, self.value_similarity, value_share,
                                      self.newer_takes_rank, self.flip_similarity, changes, self.update_similarity,
                                      self.update_relevance_share, self.update_coverage_share, shares_subject,
                                      present, self.present_similarity, pair_rescale,
                                      *((self.present_relevance_share, self.present_coverage_share, present_pair)
                                        if query_terms is not None else (0.0, 0.0, None)))
        if self.user_precedence and precedence:
            # a suggestion the user confirmed speaks for the user (write/roles.py)
            roles = {c.memory_id: author_role(payloads.get(c.memory_id, {})) for c in head}
            demoted, deferred = defer_to_user(demoted, vecs, roles, self.embedder.rescale, self.similarity,
                                              self.discount, self.user_relevance_share, pair_rescale)
            below.update(deferred)
        # an explicit correction's links and a reported change's (write/changes.py) rank the older value below
        # (a past-tense question keeps the replaced value; a start's link counts only for a present-tense one)
        keys = ("_corrects",) + (() if tense == "past" else ("_replaces",)) + (("_succeeds",) if tense == "present" else ())
        corrects = _linked(head, payloads, keys)
        # the corrections the write path linked (an explicit correction naming the replaced value)
        corrections = _linked(head, payloads, ("_corrects",))
        if tense == "present":  # a present value's successor read at query time (lift_successors)
            for new_id, olds in (successors or {}).items():
                corrects[new_id] = tuple(dict.fromkeys(corrects.get(new_id, ()) + olds))
        if corrects:
            demoted, corrected = demote_corrected(demoted, corrects, self.discount, self.link_takes_rank)
            below.update(corrected)
        if self.thread_order:  # request -> suggestion -> the user's decision (retrieve/addressee.py threads)
            threads = thread_demotions([c.memory_id for c in demoted], payloads, to_assistant=not precedence)
            if threads:
                demoted, settled = demote_corrected(demoted, threads, self.discount)
                below.update(settled)
        out = demoted + tail
        if self.present_drop and tense == "present" and below:
            # the slot's present value is in the top k: the value it replaced leaves it (still stored, still found
            # by a past-tense question)
            top = {c.memory_id for c in out[:top_k]}
            gone = {old for old, new in below.items() if old in top and self._current(new, below) in top}
            out = [c for c in out if c.memory_id not in gone]
        if self.present_drop_links and tense == "present" and corrections:
            # a correction names the replaced value: with the correction in the top k the older memory leaves it
            # when it states little beside that value (a memory that keeps details the correction does not restate
            # stays: 'next Tuesday at 3pm at the clinic on Elm Street' <- 'Actually the dentist is at 4pm, not 3pm');
            # still stored, still found by a past-tense question
            top = {c.memory_id for c in out[:top_k]}
            contents = {i: str(payloads.get(i, {}).get("content") or "") for i in top}
            gone = {old for new, olds in corrections.items() if new in top for old in olds
                    if old in top and old != new
                    and len(set(content_terms(contents[old])) - set(content_terms(contents[new])))
                    <= self.drop_detail_terms}
            out = [c for c in out if c.memory_id not in gone]
        return out, below

    def reading_links(self, ids: list[str], payloads: dict[str, dict[str, Any]],
                      vectors: dict[str, np.ndarray] | None = None) -> Callable[[str, str], bool] | None:
        """For a question a time word puts in the present ('我最近血压多少？', "what's my current weight?"):
        ``(older id, newer id)`` -> whether the newer memory is the next reading of a quantity the older one states:
        the newer one states a bare reading (:data:`READING`: the attribute and the unit left out, '早上量的126/82';
        a value with its unit, '持续时间是三个周', may be another entity's and meets the relevance tests of
        :func:`demote_stale` instead), another value of one kind with bare numbers as readings (:func:`value_change`,
        ``retrieval.stale_reading_ratio``) and the two at least ``retrieval.stale_value_similarity`` close (rescaled
        cosine, :class:`PairRescale`).
        ``ids``: the candidates to judge (one vector fetch, shared through ``vectors``: :meth:`vectors`). None with
        ``retrieval.stale_present_readings`` off."""
        if self.reading_ratio is None or len(ids) < 2:
            return None
        ratio = self.reading_ratio
        vecs = self.vectors(ids, vectors)
        texts = {i: str(payloads.get(i, {}).get("content") or "") for i in ids}
        pair_rescale = PairRescale(self.embedder.rescale, self.cjk_pair_baseline, texts)

        def pair(old: str, new: str) -> bool:
            if old not in vecs or new not in vecs:
                return False
            if READING not in value_kinds(texts[new], True):  # a value with its unit is no reading of a series
                return False
            sim = pair_rescale(float(vecs[old] @ vecs[new]), old, new)
            return sim >= self.value_similarity and value_change(texts[old], texts[new], ratio)
        return pair

    def vectors(self, ids: Iterable[str], cache: dict[str, np.ndarray] | None = None) -> dict[str, np.ndarray]:
        """Dense vectors by id of ``ids`` (float32, the embedder's dimension; ids without a vector left out), read
        from the store in one fetch of the ids ``cache`` lacks; ``cache`` (one retrieval's, or None) is filled with
        them, so that the reading links and the stale stage of one query read each vector once."""
        have = {} if cache is None else cache
        missing = [i for i in dict.fromkeys(ids) if i not in have]
        if missing:
            have.update({p.id: np.asarray(p.dense, dtype=np.float32)
                         for p in self.store.retrieve(missing, with_vectors=True) if p.dense is not None})
        return {i: have[i] for i in dict.fromkeys(ids) if i in have}

    @staticmethod
    def _current(new: str, below: dict[str, str]) -> str:
        """The end of the chain old -> newer -> ... in ``below`` that starts at ``new``."""
        seen = {new}
        while new in below and below[new] not in seen:
            new = below[new]
            seen.add(new)
        return new


def present_subject(old_terms: frozenset[str], new_terms: frozenset[str], query_terms: frozenset[str],
                    speakers: frozenset[str] = frozenset()) -> bool:
    """Whether two statements name the subject a present-tense question asks about: they share a content term of the
    question that is no speaker's name (``speakers``: the content terms of the candidates' speakers). In a dialogue a
    speaker's turns all open with their name and address the other by name ("Melanie: Thanks, Caroline"); those
    names are who talks, not what the question's value is. "I do the big grocery run at Costco" / "been getting
    groceries delivered" share 'groceri' with "how do I get my groceries?"."""
    return bool((old_terms & new_terms & query_terms) - speakers)


class PairRescale:
    """``(cos, id_a, id_b)`` -> the rescaled cosine of two memories, against ``cjk_baseline`` when both texts are
    mostly Chinese/Japanese characters (:func:`memory_engine.retrieve.candidates.is_cjk`), else ``rescale(cos)``
    (the model's baseline, measured on English). e5 packs Chinese pairs higher, same subject or not
    (embedding.cjk_pair_baseline): on the English baseline nearly every two Chinese memories of one user pass the
    same-subject bars. ``cjk_baseline`` None = one baseline for every pair. ``texts``: content by id (a missing
    id counts as not Chinese). Result in [0, 1]."""

    def __init__(self, rescale: Callable[[float], float], cjk_baseline: float | None, texts: dict[str, str]) -> None:
        self.rescale, self.cjk_baseline = rescale, cjk_baseline
        self.cjk = frozenset(i for i, t in texts.items() if cjk_baseline is not None and is_cjk(t))

    def __call__(self, cos: float, a: str, b: str) -> float:
        if self.cjk_baseline is not None and a in self.cjk and b in self.cjk:
            return rescale_similarity(cos, self.cjk_baseline)
        return float(self.rescale(cos))


def _recapped(ranked: list[Candidate], fused: dict[str, float], capped: dict[str, str]
              ) -> tuple[list[Candidate], dict[str, str]]:
    """``ranked`` with the capped candidates' new fused scores, re-sorted (score desc, fusion.rank_key), and
    ``capped`` ({capped id: the memory it yields to}); ``ranked`` unchanged when nothing was capped."""
    if not capped:
        return ranked, {}
    out = [replace(c, fused=fused[c.memory_id]) if c.memory_id in capped else c for c in ranked]
    out.sort(key=rank_key)
    return out, capped
