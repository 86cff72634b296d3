"""Reported changes linked to the value they replace (issue 16, failure class 6).

"just finished moving to Shenzhen, boxes everywhere" replaces "I live in Chengdu"; "刚搬到深圳了"
replaces "我住在成都". Told as a completed event, the newer statement shares no word with the older
one and rarely with the question ("where do I live now?"), so it falls under the relevance floor
while the older value answers. Nothing is archived here (a move is no correction: the older
statement was true when said); the newer memory records the link and retrieval uses it
(:func:`memory_engine.retrieve.stale.lift_replacements`: the newer one is lifted to the older
one's score when the older one is found, and the older one ranks below it).

A user statement links an older memory of the same speaker when all hold (numbers are ``write.*``
configuration):

* it reports a change (:func:`memory_engine.write.intents.reports_change`: 'moved', 'settled',
  '搬到', 'switched', '现在' ...) and names no person before it (:func:`memory_engine.text.people`:
  "my brother just moved to Beijing" is the brother's move) and no condition or counterfactual before it in its
  sentence (:data:`~memory_engine.write.correction.CONDITION`: 'If I moved to Beijing ...', 'I wish I had moved',
  '要是搬到了杭州'; a move imagined is no change);
* it names an entity (:func:`memory_engine.text.entities`: a place, an organisation, a name; in Chinese, failing
  that, the bare object of a move, :func:`_bare_object`: '搬到闵行了', which jieba splits, replacing only a
  memory of where the speaker lives, '住在') in the
  clause right after its change marker (the change's object: 'moving to Shenzhen', '入职腾讯') that the
  older memory does not, and the older memory names one the newer does not (a value replaced by
  another: Chengdu -> Shenzhen);
* the older memory speaks in the first person about the speaker (no relative before its first
  entity) and is the nearest such memory by rescaled dense similarity, at least
  ``write.change_link_similarity`` (e5 on the corrections_in_speech suite: a move to another city
  0.40-0.57; a trip or an unrelated slot of the same user mostly lower).

* no memory of the speaker is nearer than it by more than ``write.change_link_margin``: '最近改成早上喝燕麦奶了'
  (jieba tags 燕麦 as a name) is about '我每天早上喝豆浆' (e5 0.76), which names nothing, not about '我住在成都' (0.48).

A substitution that names no value in place of a named one ('switched to evening runs', '改成早上喝燕麦奶',
:data:`memory_engine.write.intents.SUBSTITUTION`) links the speaker's nearest older memory when it names nothing the
change does not, shares a word other than a time word with the change's object and is at least
``write.change_shared_similarity`` near ('I run every morning before work': run; '我每天早上喝豆浆': 喝); only the
nearest is tried (:meth:`ChangeLinker._substituted`).

At most ``write.change_link_limit`` older memories are linked (``metadata._replaces``), each with its
evidence in the write result (``rule`` ``reported_change``, ``archived`` False).

A statement that adds a value beside the earlier ones ("I also started piano", "家里又多了一只布偶",
:func:`memory_engine.write.intents.adds_value`) links nothing: it replaces no value.

A new state told only by its beginning ("just started at Tencent last week",
:func:`memory_engine.write.intents.starts_state`: no change word, so nothing says an earlier value ended)
links an older memory under the same tests, except that the similarity bar is
``write.change_start_similarity`` (e5: 'I work at Alibaba' / 'just started at Tencent last week' 0.28; e5 puts
the same sentence as close to 'I live in Chengdu', 0.29, so similarity alone cannot tell the slot) and the
replaced entity and the new one must fill the same role: the same preposition or coverb right before each
(:data:`_GOVERNORS`, a closed class: 'at Alibaba' / 'at Tencent', '在阿里' / '在腾讯'; 'in Chengdu' is another
role). Such a link is weaker evidence and is stored apart (``metadata._succeeds``, ``rule`` ``started_state``):
retrieval uses it only when the question asks for the present value ("where do I work now?",
:func:`memory_engine.write.intents.query_tense`).

A final value told after a provisional one ("the plumber can come Wednesday, he'd let me know" -> "Dave texted back,
Friday 10am works"; "体检暂定下周三，还要等HR确认" -> "HR回复了，改到周五早上八点") names no change and often no
entity: the older statement itself said its value was not final (:func:`memory_engine.write.intents.provisional`).
A user statement that is not provisional itself, adds no value beside others and states a time (:func:`states_time`:
a date the write path resolved, a weekday or a clock time) links the nearest older memory of the same author
(rescaled dense similarity at least ``write.change_final_similarity``; 1 = off) that is provisional and states a time
too and, when both name something, names one thing the other names (Phoenix's deadline is no final value of the
Atlas plan); two Chinese memories are compared on the Chinese pair scale (``embedding.cjk_pair_baseline``, e5 packs
them 0.06-0.08 higher: 'Atlas 项目下周启动，负责人还没定' / '我喜欢周五中午和团队一起吃饭' 0.43 on the model's baseline,
0.04 on it) (``metadata._replaces``, ``rule`` ``provisional_final``): a time asked for later is answered by the final
one.
Neither statement need be in the first person (an appointment is about the plumber, not the user). Nothing is
archived.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from ..config import WriteSection
from ..embedding import CachedEmbedder, rescale_similarity
from ..models import MemoryType
from ..retrieve.crosslang import zh_verbal
from ..scope import Scope
from ..store.base import VectorStore
from ..text import WEEKDAYS_EN, WEEKDAYS_ZH, content_terms, entities, named, people, pos_tags, stem_offset
from .correction import CONDITION, same_speaker
from .intents import (
    CHANGE,
    INCHOATIVE,
    SUBSTITUTION,
    about_speaker,
    adds_value,
    ends_state,
    provisional,
    reports_change,
    starts_state,
)

__all__ = ["ChangeLinker", "ended_object", "same_role", "states_time", "successor", "term_offset"]

#: a weekday or a clock time (typed values the date resolver leaves open: 'Friday 10am' has no single date without
#: knowing whether this or next Friday is meant): 'Friday', '10am', '3:30', '周五', '礼拜三', '八点', '9点半'
_TIME_VALUE = re.compile(
    r"\b(?:" + "|".join(WEEKDAYS_EN) + r")\b|\b\d{1,2}(?::\d{2})?\s*(?:am|pm)\b|\b\d{1,2}:\d{2}\b|"
    r"(?:周|星期|礼拜)[" + "".join(WEEKDAYS_ZH) + r"]|[零〇一二两三四五六七八九十\d]{1,3}\s*点(?:半|钟|[零〇一二三四五六七八九十\d]+分)?",
    re.IGNORECASE)


#: what a Chinese change's bare object may not hold: a particle, pronoun or adverb says the words after the marker are
#: a phrase, not a name ('搬到离公司近的地方', '换了我喜欢的')
_NOT_OBJECT = re.compile(r"[的地得和与跟很也都就还想要会把被我你他她它们这那个些一]")
#: what comes between a change marker and its object, and after it: aspect and sentence particles
_OBJECT_LEAD = re.compile(r"^(?:住|[了到去在成为])+")
_OBJECT_TAIL = re.compile(r"[了啦呀啊吧呢哦咯喽嘛]+$")


#: a move, whose bare object is a place (:func:`_bare_object`), and the residence it replaces
_MOVE = re.compile(r"搬到|搬去|搬回|搬家到|搬家去|搬家了|搬了家")
_RESIDENCE = re.compile(r"住在|住|家在|安家")


def _dropped_subject(text: str) -> bool:
    """Whether a Chinese statement leaves its subject out with no third-person pronoun ('搬家了，现在住海淀': Chinese
    drops a first-person subject the context gives; a person named as the subject, '小王搬到杭州了', is the caller's
    test of the words before the first entity)."""
    return _mostly_cjk(text) and not any(w in _OTHER_PERSON_ZH for w, _ in pos_tags(text))


#: discourse fillers and adverbs that may open a clause before its verb ('ok went back to ...', 'finally moved ...')
_EN_OPENERS = frozenset({"ok", "okay", "so", "well", "just", "finally", "also", "anyway", "yeah", "yep", "oh", "and",
                         "but", "then", "recently", "lately", "already", "actually", "honestly", "totally", "lol"})
_EN_WORDS = re.compile(r"[A-Za-z']+")


def _dropped_subject_en(text: str) -> bool:
    """Whether an English statement opens, after fillers (:data:`_EN_OPENERS`), with a verb in the past tense and no
    subject ('switched to a Pixel, android is honestly fine', 'ok went back to the iPhone'): chat drops a first-person
    subject as Chinese does (:func:`_dropped_subject`); an imperative ('Call mom') is in the base form, a note
    ('Dentist on Monday') opens with a noun."""
    if _CJK.search(text):
        return False
    from lemminflect import getAllInflections, getAllLemmas

    for w in (x.lower() for x in _EN_WORDS.findall(_CLAUSE_END.split(text, maxsplit=1)[0])):
        if w in _EN_OPENERS:
            continue
        lemmas = getAllLemmas(w).get("VERB", ())
        return any(w != lemma and w in getAllInflections(lemma, upos="VERB").get("VBD", ()) for lemma in lemmas)
    return False


def _bare_object(after: str) -> frozenset[str]:
    """The object of a Chinese change marker that jieba tags as no entity ('搬到闵行了': 闵/nr 行/v, so
    :func:`memory_engine.text.entities` finds nothing): the clause ``after`` the last change marker, aspect and
    sentence particles stripped, when it is 2-6 Chinese characters with no particle, pronoun or adverb
    (:data:`_NOT_OBJECT`): {'闵行'}; empty otherwise (English has no such gap: its names are capitalised)."""
    start = max((m.end() for m in CHANGE.finditer(after)), default=0)
    s = _OBJECT_TAIL.sub("", _OBJECT_LEAD.sub("", after[start:]).strip()).strip()
    if 2 <= len(s) <= 6 and re.fullmatch(r"[\u4e00-\u9fff]+", s) and not _NOT_OBJECT.search(s):
        return frozenset({s})
    return frozenset()


def _sentence_before(text: str, at: int) -> str:
    """The words of ``text`` before offset ``at`` in the sentence that holds it (sentence ends as
    :func:`memory_engine.write.rules.sentences` splits them): 'We talked. If I moved to X' -> 'If I '."""
    starts = [m.end() for m in _SENTENCE_END.finditer(text, 0, at)]
    return text[(starts[-1] if starts else 0): at]


def _mostly_cjk(text: str) -> bool:
    """At least 30% of the non-space characters are CJK ideographs (the rule of retrieve/candidates.is_cjk)."""
    chars = len("".join(text.split()))
    return chars > 0 and len(_CJK.findall(text)) >= 0.3 * chars


def states_time(text: str, event_start: float | None = None) -> bool:
    """Whether a statement states a time: the write path resolved a date in it (``event_start``, epoch seconds,
    write/records.py) or it names a weekday or a clock time (:data:`_TIME_VALUE`). A question states none."""
    t = (text or "").strip()
    if not t or t.endswith(("?", "？")):
        return False
    return event_start is not None or _TIME_VALUE.search(t) is not None

#: a subject other than the speaker before a start ('my roommate started at Google', 'she began at ...'): a
#: third-person pronoun or a possessed noun (people() knows only names and relatives); in Chinese a noun right
#: after 我 (我室友, 我同事) is checked by part of speech (:func:`_other_subject`)
_OTHER_SUBJECT_EN = re.compile(r"\b(?:he|she|they|his|her|their|(?:my|our)\s+\w+)\b|[他她]", re.I)
_CJK = re.compile(r"[\u4e00-\u9fff]")
_SENTENCE_END = re.compile(r"[。！？；!?;\n]+|\.(?=\s|$)")


_THIRD_PERSON_EN = re.compile(r"\b(?:he|she|they|his|her|their)\b", re.I)
_FIRST_PERSON_ZH = frozenset({"我", "我们", "咱", "咱们", "俺"})
#: the third-person pronouns (a closed class; a demonstrative such as 这个 before 月 is no subject)
_OTHER_PERSON_ZH = frozenset({"他", "她", "他们", "她们", "别人", "人家", "对方"})
#: parts of speech that may stand between a Chinese subject and its verb (jieba tags: adverbs, time and place
#: words, numerals and measure words, conjunctions, particles, punctuation)
_ZH_BETWEEN = ("d", "t", "f", "m", "q", "c", "u", "x", "zg")


def _other_subject(prefix: str, possessed: bool = True) -> bool:
    """Whether the words before a change or a start name a subject other than the speaker: a third-person pronoun,
    with ``possessed`` a possessed noun ('my roommate started at Google', :data:`_OTHER_SUBJECT_EN`; off for a
    reported change, whose 'my commute is now ...' is the speaker's own), in Chinese a noun right after 我 (我室友,
    我同事), or, with no first-person pronoun before it, a noun or pronoun in the subject place right before the
    change (only adverbs, time words and particles between: '同组的小王跳槽去阿里了', '她最近搬到杭州了'; people()
    knows only names jieba tags and relatives)."""
    if (_OTHER_SUBJECT_EN if possessed else _THIRD_PERSON_EN).search(prefix):
        return True
    tags = pos_tags(prefix) if prefix.strip() else []
    if any(w in ("我", "我们") and i + 1 < len(tags) and tags[i + 1][1].startswith("n")
           for i, (w, _) in enumerate(tags)):
        return True
    clause = _CLAUSE_END.split(prefix)[-1]  # the subject of the change is in its own clause ('续约了，涨到4300')
    if not _CJK.search(clause) or any(w in _FIRST_PERSON_ZH for w, _ in tags):
        return False
    core = [(w, t) for w, t in pos_tags(clause) if w.strip() and not t.startswith(_ZH_BETWEEN)]
    if not core:
        return False
    word, tag = core[-1]
    # an activity named as the topic is no subject ('跑步改到晚上了': CC-CEDICT glosses 跑步 only as a verb)
    return word in _OTHER_PERSON_ZH or (tag.startswith("n") and tag not in ("ns", "nt") and not zh_verbal(word))


#: a clause end: the change's object lies before it
_CLAUSE_END = re.compile(r"[,，.。;；!！?？\n]")
_TYPES = tuple(t.value for t in (MemoryType.SEMANTIC, MemoryType.EPISODIC, MemoryType.FACT))
#: the prepositions and coverbs that mark an entity's role in a statement (closed classes: the simple English
#: prepositions of place, time and affiliation; the Chinese coverbs of place and direction): two entities after the
#: same one fill the same slot ('work at Alibaba' / 'started at Tencent', '在阿里' / '在腾讯')
_GOVERNORS = frozenset({"at", "in", "on", "for", "with", "to", "from", "by", "into", "near", "inside",
                        "在", "去", "到", "于", "从", "跟", "给", "为", "进"})
_LATIN_WORD_BEFORE = re.compile(r"([A-Za-z]+)\W*$")


#: a Latin word (its Snowball stem is what :func:`memory_engine.text.entities` returns: 'Shopify' -> 'shopifi')
_LATIN_WORD = re.compile(r"[A-Za-z][A-Za-z0-9'-]*")


def term_offset(text: str, term: str) -> int:
    """The offset in ``text`` of the first occurrence of content term ``term`` (lower case): the term itself, else
    the first Latin word whose content terms hold it (a stem is no prefix of its word: 'shopifi' of 'Shopify',
    'rubi' of 'Ruby'); -1 when neither is there."""
    pos = text.lower().find(term)
    if pos >= 0:
        return pos
    return next((m.start() for m in _LATIN_WORD.finditer(text) if term in content_terms(m.group(0))), -1)


def _governor(text: str, entity: str) -> str | None:
    """The preposition or coverb right before the first occurrence of ``entity`` (a content term, lower case,
    :func:`term_offset`) in ``text`` when it is one of :data:`_GOVERNORS`, else None."""
    pos = term_offset(text, entity)
    if pos <= 0:
        return None
    before = text[:pos].rstrip()
    if not before:
        return None
    m = _LATIN_WORD_BEFORE.search(before)
    if m is not None and m.end() == len(before):
        word = m.group(1).lower()
    else:
        tags = pos_tags(before[-6:])
        word = tags[-1][0] if tags else before[-1]
    return word if word in _GOVERNORS else None


def same_role(old: str, new: str, replaced: frozenset[str], by: frozenset[str]) -> bool:
    """Whether some entity of ``replaced`` (in ``old``) and some of ``by`` (in ``new``) follow the same
    preposition or coverb (:func:`_governor`): 'I work at Alibaba' / 'just started at Tencent'."""
    olds = {g for e in replaced if (g := _governor(old, e))}
    return bool(olds) and any(_governor(new, e) in olds for e in by)


#: a clause that opens with a possessed noun is about that thing, not the speaker ('my office is in Shenzhen')
_POSSESSED_OPENING = re.compile(r"^\W*(?:my|our)\s+\w+", re.IGNORECASE)


def _clause_at(text: str, at: int) -> str:
    """The clause of ``text`` that holds offset ``at`` (clause ends: :data:`_CLAUSE_END`)."""
    starts = [m.end() for m in _CLAUSE_END.finditer(text, 0, at)]
    end = _CLAUSE_END.search(text, at)
    return text[(starts[-1] if starts else 0): end.start() if end else len(text)]


def successor(old: str, new: str, onset: re.Pattern[str] | None = None) -> dict[str, Any] | None:
    """Whether statement ``new`` states the speaker's present value of the slot ``old`` fills, by the tests of a
    start link (:class:`ChangeLinker`, without its similarity bar: a question asking for the present value says
    which slot is meant, and the older statement answering it names the slot's role): ``new`` reports a change or a
    start (:func:`memory_engine.write.intents.reports_change` / ``starts_state``) or holds an onset word
    (``onset``: 'new', 'first week', retrieval.successor_onset_words; None = none), adds no value beside the older
    ones and is not provisional; an entity of ``new`` replaces one of ``old`` in the same role (:func:`same_role`:
    'work at Deloitte' / 'first week at ByteDance', 'live in Munich' / 'settled in Berlin'); both speak of the
    speaker: no person (:func:`memory_engine.text.people`), no third-person pronoun and no possessed noun opening the
    clause before the entity ('my sister works at Datadog now', 'my office is in Shenzhen'), no condition ('if I
    moved to Berlin'). Returns the evidence ({'rule': 'present_successor', 'replaced': [...], 'by': [...]}) or
    None. Pure text: the caller checks the authors, sessions and write times."""
    if adds_value(new) or provisional(new):
        return None
    if not (reports_change(new) or starts_state(new) or (onset is not None and onset.search(new))):
        return None
    old_ents, new_ents = entities(old), entities(new)
    replaced, by = old_ents - new_ents, new_ents - old_ents
    if not replaced or not by or not same_role(old, new, replaced, by):
        return None
    for text, ents in ((old, replaced), (new, by)):
        at = min((i for e in ents if (i := term_offset(text, e)) >= 0), default=-1)
        if at < 0:
            return None
        before = text[:at]
        if people(before) or _other_subject(before, possessed=False) or _POSSESSED_OPENING.search(_clause_at(text, at)) \
                or CONDITION.search(_sentence_before(text, at)):
            return None
    return {"rule": "present_successor", "replaced": sorted(replaced), "by": sorted(by)}


#: words of an ended state's object that name a time or a degree, not the state ('last Friday', '上个月', 'already')
_TIME_TERMS = frozenset({"last", "next", "this", "ago", "week", "month", "year", "day", "today", "yesterday", "tonight",
                         "morning", "afternoon", "even", "night", "weekend", "recent", "final", "actual", "just", "already",
                         "上个", "上个月", "上周", "昨天", "今天", "前天", "去年", "今年", "已经", "刚刚", "刚", "最近", "月", "周"})


def ended_object(text: str, m: re.Match[str]) -> tuple[frozenset[str], frozenset[str]]:
    """``(terms, entities)`` of the state an ending verb ``m`` (:func:`memory_engine.write.intents.ends_state`) ends:
    the content terms of the clause after it in English ('quit my job at Amazon last Friday' -> job, amazon), of its
    whole clause in Chinese, whose object comes before the verb ('从阿里辞职了' -> 阿里, '把健身卡退掉了' -> 健身卡),
    without the verb's own terms, time words (:data:`_TIME_TERMS`), weekday names and numbers."""
    if _CJK.search(m.group(0)):
        clause = _clause_at(text, m.start())
        span = clause.replace(m.group(0), " ")
    else:
        end = _CLAUSE_END.search(text, m.end())
        span = text[m.end(): end.start() if end else len(text)]
    verb = content_terms(m.group(0))
    terms = frozenset(t for t in content_terms(span) - verb - _TIME_TERMS
                      if not any(d.startswith(t) for d in WEEKDAYS_EN) and not any(ch.isdigit() for ch in t))
    return terms, frozenset(e for e in named(span) if e in terms)


class ChangeLinker:
    """``find(clean, vec, scope, metadata, role)`` -> evidence dicts of the older memories a reported change
    replaces (empty when it reports none). Disabled with ``write.change_link_limit`` = 0."""

    def __init__(self, store: VectorStore, embedder: CachedEmbedder, cfg: WriteSection, limit: int,
                 cjk_pair_baseline: float | None = None) -> None:
        self.store, self.embedder, self.cfg, self.search_limit = store, embedder, cfg, limit
        self.cjk_pair_baseline = cjk_pair_baseline  # None = one scale for every pair

    def _speakers(self, old: str, cos: float, bar: float) -> bool:
        """Whether the older memory speaks of the speaker or the household (first person, singular or plural:
        "We're thinking of naming the baby Olivia"); one whose Chinese subject is dropped (:func:`_dropped_subject`)
        must also be near on the Chinese pair scale (``embedding.cjk_pair_baseline``: e5 packs Chinese pairs, and
        '最近下班在学吉他' sits at 0.49 of '快递千万别送到家门口…丰巢柜' on the model's scale, 0.14 on the pair scale; a move
        '搬家了，现在住海淀' / '又搬回朝阳了' 0.64) at ``bar``."""
        if about_speaker(old, plural=True) or _dropped_subject_en(old):
            return True
        return _dropped_subject(old) and (
            self.cjk_pair_baseline is None or rescale_similarity(cos, self.cjk_pair_baseline) >= bar)

    def find(self, clean: str, vec: np.ndarray, scope: Scope, metadata: dict[str, Any], role: str,
             event_start: float | None = None) -> list[dict[str, Any]]:
        """``event_start``: the date the write path resolved in ``clean`` (epoch seconds, None = none)."""
        if role != "user" or self.cfg.change_link_limit <= 0 or adds_value(clean):
            return []
        found = self._ended(clean, vec, scope, metadata, role) or self._changes(clean, vec, scope, metadata, role)
        return found or self._final_value(clean, vec, scope, metadata, role, event_start)

    def _ended(self, clean: str, vec: np.ndarray, scope: Scope, metadata: dict[str, Any], role: str
               ) -> list[dict[str, Any]]:
        """The older memories of a state the speaker reports as ended (see the module docstring), as evidence dicts."""
        m = ends_state(clean)
        if m is None or CONDITION.search(_sentence_before(clean, m.start())):
            return []
        obj_terms, obj_ents = ended_object(clean, m)
        if not obj_terms:
            return []  # 'I quit' names nothing it ended
        # a Chinese object comes before the verb ('从阿里辞职'): a name in it is what was left, not who left
        subject = clean[: m.start()]
        if people(subject) - obj_terms or _other_subject(subject, possessed=True):
            return []  # someone else's ending ('my wife quit Amazon', '我同事离职了')
        out: list[dict[str, Any]] = []
        for p in self.store.search_dense(vec.tolist(), scope.filter(memory_types=_TYPES), self.search_limit):
            if not scope.owns(p) or not same_speaker(role, metadata, p.payload, clean):
                continue
            sim = float(self.embedder.rescale(p.score))
            if sim < self.cfg.change_end_similarity:
                break  # nearest first: the rest are further
            old = str(p.payload.get("content") or "")
            shared = obj_terms & content_terms(old)
            if not shared or (obj_ents and not obj_ents & shared) or ends_state(old) is not None:
                continue  # another state, or the same state ended before
            first = min((i for t in shared if (i := stem_offset(old.lower(), t)) >= 0), default=len(old))
            if not self._speakers(old, p.score, self.cfg.change_end_similarity) or people(old[:first]) \
                    or _other_subject(old[:first], possessed=True):
                continue  # the older memory is about someone else ('my sister works at Amazon')
            out.append({"id": p.id, "rule": "ended_state", "similarity": round(sim, 4), "archived": False,
                        "replaced": sorted(shared), "by": []})
            if len(out) >= self.cfg.change_link_limit:
                break
        return out

    def _final_value(self, clean: str, vec: np.ndarray, scope: Scope, metadata: dict[str, Any], role: str,
                     event_start: float | None) -> list[dict[str, Any]]:
        """The provisional older memory a final value replaces (see the module docstring), as evidence dicts."""
        if self.cfg.change_final_similarity >= 1.0 or provisional(clean) or not states_time(clean, event_start):
            return []
        cjk = self.cjk_pair_baseline is not None and _mostly_cjk(clean)
        for p in self.store.search_dense(vec.tolist(), scope.filter(memory_types=_TYPES), self.search_limit):
            if not scope.owns(p) or not same_speaker(role, metadata, p.payload, clean):
                continue
            sim = float(self.embedder.rescale(p.score))
            if sim < self.cfg.change_final_similarity:
                break  # nearest first: the rest are further (the Chinese pair scale is never above the model's)
            old = str(p.payload.get("content") or "")
            if cjk and self.cjk_pair_baseline is not None and _mostly_cjk(old):
                sim = rescale_similarity(p.score, self.cjk_pair_baseline)
                if sim < self.cfg.change_final_similarity:
                    continue
            named_old, named_new = named(old), named(clean)
            if named_old and named_new and not named_old & named_new:
                continue  # two named things ('Atlas 项目下周启动，负责人还没定' is no plan of 'Phoenix 项目')
            if provisional(old) and states_time(old, p.payload.get("event_start")):
                return [{"id": p.id, "rule": "provisional_final", "similarity": round(sim, 4), "archived": False}]
        return []

    def _changes(self, clean: str, vec: np.ndarray, scope: Scope, metadata: dict[str, Any], role: str
                 ) -> list[dict[str, Any]]:
        started = not reports_change(clean) and starts_state(clean)
        if not started and not reports_change(clean):
            return []
        marks = list((INCHOATIVE if started else CHANGE).finditer(clean))
        if not marks:
            return []
        ents = entities(clean)

        def object_of(mark: re.Match[str]) -> tuple[str, frozenset[str]]:
            # the value it changes to is the change's object: in the clause right after the marker ('moving to
            # Shenzhen', '搬到深圳', '入职腾讯'); '电动车电池该换了，续航只剩二十公里' changes to nothing named
            end = _CLAUSE_END.search(clean, mark.end())
            after = clean[mark.end(): end.start() if end else len(clean)].lower()
            return after, frozenset(e for e in ents if e in after)

        # the first marker whose clause names a value ("I'm not at Google anymore, moved to Stripe": 'moved')
        m = next((x for x in marks if object_of(x)[1]), marks[0])
        if people(clean[: m.start()]) or _other_subject(clean[: m.start()], possessed=started):
            return []  # someone else's move ('my brother just moved to Beijing', '我朋友小美刚搬到杭州')
        if CONDITION.search(_sentence_before(clean, m.start())):
            return []  # a move imagined, not made ('I wish I had moved to Beijing', '要是搬到了杭州')
        after, new_ents = object_of(m)
        bare = not new_ents and _MOVE.search(clean) is not None
        if bare:
            new_ents = _bare_object(after)
        found = self._named_changes(clean, vec, scope, metadata, role, started, new_ents, bare) if new_ents else []
        return found or ([] if started else self._substituted(clean, vec, scope, metadata, role))

    def _named_changes(self, clean: str, vec: np.ndarray, scope: Scope, metadata: dict[str, Any], role: str,
                       started: bool, new_ents: frozenset[str], bare: bool) -> list[dict[str, Any]]:
        """The older memories whose named value the change's named object ``new_ents`` replaces (the module
        docstring; ``bare``: the object is a bare Chinese place, :func:`_bare_object`)."""
        out: list[dict[str, Any]] = []
        nearest: float | None = None
        ents = entities(clean)
        # a change that names the old value too ("I'm not at Google anymore, moved to Stripe") links a memory of it in
        # the same role at the start link's bar: the role is the evidence, as for a start
        bar = self.cfg.change_start_similarity if started or ents - new_ents else self.cfg.change_link_similarity
        for p in self.store.search_dense(vec.tolist(), scope.filter(memory_types=_TYPES), self.search_limit):
            if not scope.owns(p) or not same_speaker(role, metadata, p.payload, clean):
                continue
            sim = float(self.embedder.rescale(p.score))
            if sim < bar:
                break  # nearest first: the rest are further
            old = str(p.payload.get("content") or "")
            old_ents = entities(old)
            if nearest is None and not new_ents & old_ents:
                nearest = sim  # the nearest memory of another value (one of the same value competes for no slot)
            if not started and nearest is not None and sim < nearest - self.cfg.change_link_margin:
                break  # a nearer memory of the speaker is what the change is about ('改成早上喝燕麦奶' / '早上喝豆浆')
            if not old_ents or not (new_ents - old_ents) or not (old_ents - new_ents):
                continue  # no value replaced by another
            if started and not same_role(old, clean, old_ents - new_ents, new_ents - old_ents):
                continue  # a start fills the slot it names only ('at Tencent' is no 'in Chengdu')
            # the old value the change itself names in a role ('not at Google anymore'): a memory of it in that role
            left = frozenset(e for e in (ents - new_ents) & old_ents if _governor(clean, e))
            if left and not same_role(old, clean, left, left):
                continue  # ... 'I work at Google', not 'I use Google Keep'; 'Charlotte is too popular' names no role
            if not started and not left and sim < self.cfg.change_link_similarity:
                continue  # the lower bar holds for a memory of the value the change names only
            if bare and not _RESIDENCE.search(old):
                continue  # a bare object moved to replaces a home only ('我在星巴克上班' is no home)
            first = min((i for e in old_ents if (i := old.lower().find(e)) >= 0), default=len(old))
            if not self._speakers(old, p.score, self.cfg.change_start_similarity if started
                                  else self.cfg.change_link_similarity) or people(old[:first]):
                continue  # the older memory is about someone else ('my sister lives in Chengdu')
            out.append({"id": p.id, "rule": "started_state" if started else "reported_change", "similarity": round(sim, 4), "archived": False,
                        "replaced": sorted(old_ents - new_ents), "by": sorted(new_ents - old_ents)})
            if len(out) >= self.cfg.change_link_limit:
                break
        return out

    def _substituted(self, clean: str, vec: np.ndarray, scope: Scope, metadata: dict[str, Any], role: str
                     ) -> list[dict[str, Any]]:
        """The older memory a substitution replaces when neither names a value (see the module docstring): the
        speaker's nearest older memory, at least ``write.change_shared_similarity``, that names nothing the change does
        not (:func:`memory_engine.text.named`: a named value, 'I work at Amazon', is replaced only by a named one), is
        no ended state and
        shares a word other than a time word with the change's object clause while each side holds a word the other
        does not ('switched to evening runs' / 'I run every morning before work': run; '改成早上喝燕麦奶' /
        '我每天早上喝豆浆': 喝). Only the nearest is tried: a further one that shares a word is another activity."""
        m = SUBSTITUTION.search(clean)
        if m is None or self.cfg.change_shared_similarity >= 1.0:
            return []
        # the clause of the marker, both sides: a Chinese topic comes before it ('跑步改到晚上下班后了')
        obj = content_terms(_clause_at(clean, m.start()).replace(m.group(0), " "))
        if not obj - _TIME_TERMS:
            return []
        for p in self.store.search_dense(vec.tolist(), scope.filter(memory_types=_TYPES), self.search_limit):
            if not scope.owns(p) or not same_speaker(role, metadata, p.payload, clean):
                continue
            sim = float(self.embedder.rescale(p.score))
            old = str(p.payload.get("content") or "")
            old_terms = content_terms(old)
            shared = (obj & old_terms) - _TIME_TERMS
            if sim >= self.cfg.change_shared_similarity and named(old) - named(clean):
                continue  # a named value is replaced by a named one only: not what this change is about
            if sim < self.cfg.change_shared_similarity or not shared or ends_state(old) is not None \
                    or not old_terms - content_terms(clean) or not obj - old_terms:
                return []
            first = min((i for t in shared if (i := stem_offset(old.lower(), t)) >= 0), default=len(old))
            if not self._speakers(old, p.score, self.cfg.change_shared_similarity) or people(old[:first]) \
                    or _other_subject(old[:first], possessed=True):
                return []
            return [{"id": p.id, "rule": "reported_change", "similarity": round(sim, 4), "archived": False,
                     "replaced": sorted(old_terms - content_terms(clean)), "by": sorted(obj - old_terms)}]
        return []
