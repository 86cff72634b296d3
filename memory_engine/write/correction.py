"""Which older memory a correction retires, with the evidence (issue 16).

A correction retires only what it names. :func:`judge` decides for one older
memory and returns the :class:`Evidence` (or None); the caller archives only
memories with evidence and lists them in the write result and its span.

Rules (every number is ``write.*`` configuration):

* only the same speaker corrects their own statement: the same role, and the
  same ``metadata.speaker`` when both carry one (else the speaker label a transcript
  line opens with, "Melanie: ...", so a dialogue written without metadata is judged alike) (in a dialog between Caroline
  and Melanie, Melanie's "actually" never retires Caroline's memory); an
  assistant / tool text never retires anything (the engine never calls this for them);
* the corrected part of the new text (:func:`memory_engine.write.rules.correction_scope`,
  marker words removed) must share at least ``supersede_min_shared`` content
  terms with the old memory, and they must make up at least
  ``supersede_keyword_overlap`` of the scope's terms (measured on the new text,
  so a one-word scope such as "rain" cannot pull in every memory that says
  "rain" through a min-denominator);
* rescaled dense similarity at least ``supersede_similarity``;
* an *explicit* correction (:func:`memory_engine.write.intents.correction_strength`)
  needs nothing more; a *weak* marker ("cancel", "actually", "don't", "不要")
  needs a contradiction of a stated preference or decision: the corrected part
  is negated, the older memory states a preference / decision / fact without
  negation (``old_stance``). Similarity alone never retires anything: in a
  chat, two cheerful lines of the same speaker are near-identical to an
  embedder and still say different things;
* the speakers' own names are no evidence (``Gina: ...`` prefixes every line of Gina);
* two negations (two constraints) normally coexist: only with similarity at
  least ``supersede_strong_similarity``;
* differing identifiers (card 尾号0988 vs 尾号8890) never.
"""

from __future__ import annotations

import re
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Evidence:
    """Why an older memory is retired: its id, rescaled similarity, the shared
    content terms, the correction strength and the rule that fired."""

    memory_id: str
    similarity: float
    shared_terms: tuple[str, ...]
    strength: str
    rule: str

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.memory_id, "similarity": round(self.similarity, 4), "shared_terms": list(self.shared_terms),
                "strength": self.strength, "rule": self.rule}


@dataclass(frozen=True)
class SupersedeParams:
    """The ``write.supersede_*`` numbers (see :class:`memory_engine.config.WriteSection`)."""

    similarity: float
    keyword_overlap: float
    strong_similarity: float
    min_shared: int


#: a transcript line's speaker label: one or two capitalised words ("Melanie: ...", "Mary Ann: ...")
#: or two to four Chinese characters ("小王：...") before a colon (not a URL's "://")
_SPEAKER_LABEL = re.compile(r"^\s*([A-Z][a-z]+(?: [A-Z][a-z]+)?|[\u4e00-\u9fff]{2,4})\s*[:：](?!//)\s*\S")
#: labels that head a note rather than name a speaker ("Update: ...", "更正：...")
_HEADER_WORDS = frozenset(
    """update note notes reminder correction todo fyi summary re subject title question answer edit addendum
    important warning info status news tip idea plan goal agenda result results recap remember update
    更正 更新 备注 提醒 补充 注意 总结 问题 回答 重要 计划 目标 结论 待办 说明 通知 修改 纠正""".split()
)


def speaker_of(meta: dict[str, Any] | None, content: str = "") -> str:
    """Who said it: ``metadata.speaker`` (lower-cased), else the speaker label the text opens with
    (a conversation imported without metadata: "Melanie: ..."), else ''. A note header
    ("Update: ...", "更正：...") is no speaker."""
    s = str((meta or {}).get("speaker") or "").strip().lower()
    if s:
        return s
    m = _SPEAKER_LABEL.match(content or "")
    label = m.group(1).lower() if m else ""
    return "" if label in _HEADER_WORDS else label


def same_speaker(new_role: str, new_meta: dict[str, Any], old_payload: dict[str, Any], new_content: str = "") -> bool:
    """Same role, and the same speaker (:func:`speaker_of`: ``metadata.speaker``, else the text's
    speaker label) when both name one (case-insensitive)."""
    if (old_payload.get("role") or "user") != new_role:
        return False
    a = speaker_of(new_meta, new_content)
    b = speaker_of(old_payload.get("metadata"), str(old_payload.get("content") or ""))
    return not (a and b and a != b)


def judge(
    memory_id: str,
    *,
    strength: str,
    scope_terms: set[str],
    old_terms: set[str],
    similarity: float,
    new_negated: bool,
    old_negated: bool,
    params: SupersedeParams,
    old_stance: bool = True,
) -> Evidence | None:
    """Evidence that the correction (``scope_terms``: content terms of its corrected
    part, marker words removed) names the older memory (``old_terms``), or None.
    ``similarity`` is the embedder-rescaled dense similarity in [0, 1]; ``old_stance``
    whether the older memory states a preference, decision or fact."""
    if not scope_terms or similarity < params.similarity:
        return None
    shared = scope_terms & old_terms
    if len(shared) < params.min_shared or len(shared) / len(scope_terms) < params.keyword_overlap:
        return None
    if new_negated and old_negated and similarity < params.strong_similarity:
        return None
    if strength == "explicit":
        rule = "explicit_correction"
    elif new_negated and not old_negated and old_stance:
        rule = "polarity_flip"
    else:
        return None
    return Evidence(memory_id, float(similarity), tuple(sorted(shared)), strength, rule)


# ---- what a correction must show before it archives (issue 16 failure class 9) -------------------
# A correction archives an older memory only on strong evidence that it names it: a replaced value the
# older memory states (supersede.py), a negation of what the older memory affirms, or a restatement of
# the older memory with a new value. Each check below rules out one way a correction word is ordinary
# language: a condition or hypothetical, someone else's words, another subject, too little restated.

#: a condition, hypothetical or restriction on the sentence: 'If I moved to London I would no longer...',
#: 'Once the bridge opens I will no longer need...', "I don't love cooking when I'm exhausted",
#: '如果我搬到滨江，就不再...', '累的时候不想做饭', 'I wish I had moved to Beijing' (a counterfactual): it says what
#: would, might have or sometimes is, not what changed
CONDITION = re.compile(
    r"\b(?:if|unless|once|in case|suppos(?:e|ing)|imagine|what if|would|could|whenever|when|wish(?:ed)?)\b|"
    r"如果|要是|假如|假设|假使|万一|一旦|的话|的时候|等到|但愿",
    re.IGNORECASE,
)
#: someone else's words before the marker: 'My doctor told me I shouldn't...', 'My mom said I should stop',
#: '我同事说 Notion 已经不好用了', '医生让我以后不要...' (not the speaker's own '我说过')
REPORTED = re.compile(
    r"\b(?:said|says|told me|tells me|asked me|asks me|wants me|want me|advised|suggested|recommended|"
    r"according to)\b|(?<![我俺])说|让我|叫我|建议|劝我|要我|听说",
    re.IGNORECASE,
)
#: words before the marker that name no subject: the speaker, time adverbs, fillers
_NO_SUBJECT = re.compile(
    r"\b(?:i|i'm|i've|i'll|i'd|we|we're|we've|we'll|me|us|my|our|actually|really|so|and|but|well|oh|also|just|"
    r"from now on|now|these days|nowadays|lately|recently|still|already|please|sorry|ok|okay|yeah)\b|"
    r"我们|咱们|我|俺|咱|以后|今后|从现在起|从今以后|现在|最近|目前|已经|其实|还是|还|也|就|都|再|请|麻烦|哦|嗯|啊",
    re.IGNORECASE,
)
#: the part of a marker that is itself a negation but negates no statement: '不对，...', '搞错了', '不是X而是Y'
#: (X is what is replaced, not denied), 'that's wrong'
META_MARKER = re.compile(
    r"不对|搞错|说错|记错|弄错|更正|纠正|不是[^。；！？.;!?\n]{1,12}?而是|"
    r"\b(?:correction|that'?s wrong|i was wrong|scratch that)\b",
    re.IGNORECASE,
)
_CLAUSE_START = re.compile(r"[,，;；:：、]")
#: sentence ends as the write rules split sentences (rules.sentences): a full stop only before a space
_SENTENCE_STOP = re.compile(r"[。！？；!?;\n]+|\.(?=\s|$)")
_CJK_ONE = re.compile(r"^[\u4e00-\u9fff]$")


def marker_context(text: str, start: int) -> tuple[str, str, str]:
    """(the sentence holding the marker that starts at ``start``, its words before the marker, the words
    of the marker's clause before it): 'Great. So, my brother switched to Android' -> ('So, my brother
    switched to Android', 'So, my brother ', ' my brother ')."""
    s0 = max((m.end() for m in _SENTENCE_STOP.finditer(text, 0, start)), default=0)
    end = _SENTENCE_STOP.search(text, start)
    sentence = text[s0: end.start() if end else len(text)]
    c0 = max((m.end() for m in _CLAUSE_START.finditer(text, s0, start)), default=s0)
    return sentence, text[s0:start], text[c0:start]


#: a possessor before its head noun: the head is the subject ('我儿子的同学' -> '同学', "my neighbour's son" -> 'son')
_POSSESSOR = re.compile(r"^.*的|\b\w+'s\s+", re.IGNORECASE)


def subject_terms(before: str, content_terms: Any) -> set[str]:
    """Content terms of the words before a marker that name its subject: the head of a possessive
    phrase, the speaker, time adverbs and fillers left out: 'My brother ' -> {'brother'}, '隔壁组' ->
    {'隔壁', '组'}, '我儿子的同学' -> {'同学'}, 'I ' / '以后' -> set()."""
    return set(content_terms(_NO_SUBJECT.sub(" ", _POSSESSOR.sub(" ", before.replace("’", "'")))))


def names_other_subject(before: str, old_terms: set[str], content_terms: Any) -> bool:
    """Whether the words before a change or correction marker name a subject, or the holder of one,
    that the older memory (``old_terms``, its content terms) does not: 'my wife Dana just ' (started
    ...) for "my brother Sam works as a nurse", '隔壁组' (改用飞书) for '我们团队用 Jira', and the
    possessor of a shared head, '我妈把她家的' 路由器 (换成了华为) for '我家用的路由器是小米的'. The speaker,
    time adverbs and fillers name none ('最近', 'ok I'm ')."""
    text = before.replace("’", "'")
    whole = set(content_terms(_NO_SUBJECT.sub(" ", text)))
    if whole and not whole & old_terms:
        return True
    m = _POSSESSOR.search(text)
    owner = set(content_terms(_NO_SUBJECT.sub(" ", m.group(0)))) if m else set()
    return bool(owner) and not owner & old_terms


def _maximal(terms: set[str]) -> set[str]:
    """Terms not contained in a longer one ('每周 周六 每周六' -> '每周六'): the Chinese tokenizer's
    overlapping words count once."""
    return {t for t in terms if not any(t != u and t in u for u in terms)}


def countable_terms(old_terms: set[str]) -> set[str]:
    """The terms :func:`restated_share` counts: maximal terms, single Chinese characters left out."""
    return {t for t in _maximal(old_terms) if not _CJK_ONE.match(t)}


def term_hits(want: AbstractSet[str], have: AbstractSet[str]) -> set[str]:
    """The terms of ``want`` found in ``have``: the same term, or for Chinese (both terms longer than one
    character) a word inside the other ('收货地址' / '地址', '看牙' / '上午看牙'). Shared by the correction
    finder's subject test and the fact correction finder."""
    return {t for t in want if t in have or any(
        len(t) > 1 and len(u) > 1 and not t.isascii() and not u.isascii() and (t in u or u in t) for u in have)}


def restated_share(new_terms: set[str], old_terms: set[str]) -> float:
    """Share, 0..1, of the older memory's content terms that the correction restates: maximal terms
    (:func:`_maximal`), single Chinese characters ('去', '用', '上': too common to name a subject) left
    out; a term counts as restated when the correction carries it, a longer word holding it or a word it
    holds ('钢琴课' / '钢琴'). 1.0 for an older memory with no such term."""
    old = countable_terms(old_terms)
    if not old:
        return 1.0
    new = {t for t in new_terms if not _CJK_ONE.match(t)}
    hit = {t for t in old if t in new or any(len(u) > 1 and (t in u or u in t) for u in new if not u.isascii())}
    return len(hit) / len(old)
