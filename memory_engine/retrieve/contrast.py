"""Another entity of the same kind (issue 16, class 3: never-stored near misses). A question about the dentist
appointment is not answered by the vet appointment, '我家狗狗一天喂几次' not by '我家猫咪一天喂两次', Tom's job not
by Priya's: the memory shares the question's frame and most of its words, and names another filler of the slot
the question asks about. Dense similarity and keyword coverage both see a near match; the relevance floor cannot
tell it from an answer. :func:`contrasts` finds such a pair from the two texts' own words (no model, no store):

* **One frame, two fillers** (the paradigmatic relation: words that fill the same slot of the same frame are of
  one class, Harris 1954 'Distributional structure'; Saussure's associative axis). The question has a noun ``q``
  next to a content word ``a`` (directly before or directly after it: 'dentist appointment', 'friend Tom',
  '我家 狗狗 一天'), the memory has another noun ``m`` in the same position next to the same ``a`` ('vet
  appointment', 'friend Priya', '我家 猫咪 一天'), ``q`` occurs nowhere in the memory and ``m`` nowhere in the
  question.
* **One head, two modifiers** (Chinese compounds are right-headed: the last morpheme names the kind, the rest
  which one; Packard, *The Morphology of Chinese*, 2000, ch. 7): a question noun and a memory noun of two or
  more characters that end in the same character and share none before it ('游泳课' / '钢琴课', '眼科' / '口腔科',
  '牙医' / '兽医'). A noun followed by a one-character noun is read as one compound ('游泳' '课' -> '游泳课').
* **Another person**: the question names a person (a jieba person word, '老王'; '小' / '老' + a surname, '小刘')
  whom the memory does not name (nor has as its speaker), and the memory names another one.

Nouns only: a verb swapped in the same frame is a paraphrase ('buy the tickets' / 'booked the tickets'), not
another entity. English nouns are words lemminflect knows as nouns or CC-CEDICT glosses bare ('vet' for 兽医),
minus the words CC-CEDICT also glosses as verbs ('to love') that lemminflect knows as verbs. Chinese nouns by jieba's
tag (n*). Kinship words are left to the relative mismatch (text.relatives: it knows that 孩子 covers 儿子), numbers
and question words are no nouns. Two words one CC-CEDICT entry glosses alike ('car' / 'automobile'; 轿车 / 汽车 both
'car') are synonyms, not two entities (the pivot through a translation, Bannard & Callison-Burch 2005).

Shapes: :func:`slots` -> :class:`Slots` of one text (cached: memory texts recur); :func:`contrasts` -> the pair
(question word, memory word) that makes the memory about another entity, or None."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from ..text import _CJK, _stem, content_terms, pos_tags, relatives
from .crosslang import _PAREN, _dictionary, glosses

__all__ = ["Slots", "contrasts", "slots"]

#: an English word (letters, inner apostrophe or hyphen); a possessive 's is cut off
_EN_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*")
#: question words: the noun right after one names what is asked ('什么颜色', 'which model'), and the memory's
#: filler of that slot is the answer ('白色'), not another entity
_WH = frozenset("什么 啥 哪 哪个 哪些 哪种 哪家 哪位 几 几个 多少 什么样 what which whose".split())
#: a Chinese person word's short forms: 小 / 老 / 阿 + a surname (jieba tags the surname alone: 小 / 刘)
_ZH_PERSON_PREFIX = frozenset("小老阿")


@lru_cache(maxsize=1)
def _en_glossed() -> tuple[frozenset[str], frozenset[str]]:
    """(bare, verbal): the English words CC-CEDICT uses as a whole gloss, bare or with an article ('vet',
    'a tablet'), and as an infinitive ('to love'). Built once from the dictionary crosslang already reads."""
    bare: set[str] = set()
    verbal: set[str] = set()
    one = re.compile(r"(to |a |an |the )?([a-z]+)")
    for raw in _dictionary().values():
        for g in raw.split("/"):
            m = one.fullmatch(_PAREN.sub(" ", g).strip().lower())
            if m:
                (verbal if m.group(1) == "to " else bare).add(m.group(2))
    return frozenset(bare), frozenset(verbal)


@lru_cache(maxsize=65_536)
def _en_noun(w: str) -> bool:
    """Whether lower-case English word ``w`` can be a noun (module docstring). A word neither lemminflect nor the
    dictionary knows is a name or a brand: a noun."""
    from lemminflect import getAllLemmas

    lemmas = getAllLemmas(w)
    bare, verbal = _en_glossed()
    if "VERB" in lemmas and (w in verbal or any(lemma in verbal for lemma in lemmas["VERB"])):
        return False
    return "NOUN" in lemmas or "PROPN" in lemmas or w in bare or not lemmas


@lru_cache(maxsize=65_536)
def _en_synonyms(a: str, b: str) -> bool:
    """Whether one CC-CEDICT entry glosses both English words (by stem) as whole glosses."""
    return bool(_en_entries().get(_stem(a), frozenset()) & _en_entries().get(_stem(b), frozenset()))


@lru_cache(maxsize=1)
def _en_entries() -> dict[str, frozenset[str]]:
    """Stem of an English whole-gloss word -> the headwords that gloss it so."""
    out: dict[str, set[str]] = {}
    one = re.compile(r"(?:to |a |an |the )?([a-z]+)")
    for head, raw in _dictionary().items():
        for g in raw.split("/"):
            m = one.fullmatch(_PAREN.sub(" ", g).strip().lower())
            if m:
                out.setdefault(_stem(m.group(1)), set()).add(head)
    return {k: frozenset(v) for k, v in out.items()}


def _zh_synonyms(a: str, b: str) -> bool:
    """Whether two Chinese words share a CC-CEDICT gloss (as a set of content terms)."""
    return bool(set(glosses(a)) & set(glosses(b)))


@dataclass(frozen=True)
class Slots:
    """What :func:`contrasts` reads of one text: ``frames`` (side, anchor key, filler key, filler as written):
    side 'before' = the filler stands directly before the anchor ('dentist' before 'appointment'), 'after' =
    directly after it ('Tom' after 'friend'), and the filler's kind (:func:`_tokens`); ``heads``: Chinese nouns of two or more characters; ``people``:
    Chinese person words; ``keys``: every content key of the text (English stems, Chinese words)."""

    frames: frozenset[tuple[str, str, str, str, str]]
    heads: frozenset[str]
    people: frozenset[str]
    keys: frozenset[str]


def _tokens(text: str) -> list[tuple[str, str, str]]:
    """(key, surface, kind) per token in order: kind 'n' a noun ('N' / '?' for English names, :func:`_en_token`;
    'ns' / 'nt' Chinese places / organisations), 'p' a Chinese person word, '' anything else;
    key '' for what is no content (a function word, punctuation), which also breaks adjacency."""
    out: list[tuple[str, str, str]] = []
    if not _CJK.search(text):
        for part in re.split(r"([A-Za-z][A-Za-z'-]*)", text):
            if _EN_WORD.fullmatch(part):
                out.append(_en_token(part, not out))
            elif part.strip():
                out.append(("", part, ""))
        return _governed(out)
    tagged = pos_tags(text)
    i = 0
    while i < len(tagged):
        w, flag = tagged[i]
        nxt = tagged[i + 1] if i + 1 < len(tagged) else ("", "")
        i += 1
        if not _CJK.fullmatch(w):
            words = _EN_WORD.findall(w)
            out.extend(_en_token(x, not out) for x in words)
            if not words and not w.isspace():
                out.append(("", w, ""))
            continue
        if w in _ZH_PERSON_PREFIX and nxt[1] in ("nr", "nrt") and len(nxt[0]) == 1:
            out.append((w + nxt[0], w + nxt[0], "p"))  # 小刘: one person word (jieba tags 小 / 刘)
            i += 1
        elif flag.startswith(("n", "vn")) and len(nxt[0]) == 1 and nxt[1] == "n" and _CJK.fullmatch(nxt[0]):
            out.append((w + nxt[0], w + nxt[0], "n"))  # 游泳 + 课: one compound, headed by 课
            i += 1
        elif flag in ("nr", "nrt") and len(w) >= 2:
            out.append((w, w, "p"))
        else:
            # jieba's noun classes: places (ns) and organisations (nt) apart from other nouns
            kind = flag if flag in ("ns", "nt") else "n" if flag.startswith("n") else ""
            out.append((w if content_terms(w) or w in _WH else "", w, kind))
    return _governed(out)


def _governed(toks: list[tuple[str, str, str]]) -> list[tuple[str, str, str]]:
    """The noun right after a question word is what is asked ('什么 颜色'): no filler (kind '')."""
    return [(k, s, "" if i and toks[i - 1][1].lower() in _WH else kind) for i, (k, s, kind) in enumerate(toks)]


def _en_token(word: str, first: bool) -> tuple[str, str, str]:
    """An English word's (key, surface, kind): kind 'N' a capitalised noun inside the text (a name: 'Tom'),
    'n' a lower-case noun, '?' a capitalised noun opening the text (either), '' no noun."""
    w = re.sub(r"'s?$", "", word).lower()
    if w in _WH:
        return (w, word, "")
    if not w or not content_terms(w) or w.isdigit():
        return ("", word, "")
    if not _en_noun(w):
        return (_stem(w), word, "")
    return (_stem(w), word, "n" if word[0].islower() else "?" if first else "N")


def _same_kind(a: str, b: str) -> bool:
    """Whether two fillers' kinds (:func:`_tokens`) may name entities of one class: a name and a common noun may
    not ('sister Lena' / "sister's job"); a word opening the text may be either."""
    return a == b or (a in "nN?" and b in "nN?" and "?" in (a, b))


@lru_cache(maxsize=65_536)
def slots(text: str) -> Slots:
    """The :class:`Slots` of ``text`` (cached)."""
    toks = [(k, s, "" if kind and relatives(s) else kind) for k, s, kind in _tokens(text)]  # kin: text.relatives
    frames: set[tuple[str, str, str, str, str]] = set()
    for (k1, s1, n1), (k2, s2, n2) in zip(toks, toks[1:], strict=False):
        if not k1 or not k2:
            continue
        if n1:
            frames.add(("before", k2, k1, s1, n1))
        if n2:
            frames.add(("after", k1, k2, s2, n2))
    heads: set[str] = set()
    for k, _, kind in toks:
        if kind == "n" and len(k) >= 2 and _CJK.fullmatch(k):
            heads.add(k)
            # the nouns inside a longer noun: 眼科医生 -> 眼科, 医生
            heads |= {t for t in content_terms(k) if len(t) >= 2 and _CJK.fullmatch(t) and not relatives(t)}
    people = frozenset(k for k, _, kind in toks if kind == "p")
    return Slots(frozenset(frames), frozenset(heads), people, frozenset(k for k, _, _ in toks if k) | content_terms(text))


def _absent(key: str, surface: str, other: Slots, other_text: str) -> bool:
    """``key`` (a word of one text) is nowhere in the other: not among its keys, and for a Chinese word not
    inside its text either (jieba cuts 猫 out of 猫咪 or not)."""
    if key in other.keys:
        return False
    return not (_CJK.fullmatch(key) and key in other_text) and surface.lower() not in other_text.lower()


def contrasts(query: str, content: str, speaker: str = "") -> tuple[str, str] | None:
    """(question word, memory word) when ``content`` names another entity of the kind ``query`` asks about (module
    docstring), else None. ``speaker``: the memory's declared speaker, a person it names."""
    q, m = slots(query), slots(content)
    said = f"{content} {speaker}"
    for side, anchor, qk, qs, qkind in q.frames:
        if not _absent(qk, qs, m, said):
            continue
        zh = _CJK.fullmatch(qk) is not None
        for side2, anchor2, mk, ms, mkind in m.frames:
            if side2 != side or anchor2 != anchor or mk == qk or (_CJK.fullmatch(mk) is not None) != zh \
                    or not _same_kind(qkind, mkind) or not _absent(mk, ms, q, query):
                continue
            if not (_zh_synonyms(qk, mk) if zh else _en_synonyms(qk, mk)):
                return qs, ms
    for qh in q.heads:
        if not _absent(qh, qh, m, said):
            continue
        for mh in m.heads:
            if mh[-1] == qh[-1] and not set(mh[:-1]) & set(qh[:-1]) and _absent(mh, mh, q, query) \
                    and not _zh_synonyms(qh, mh):
                return qh, mh
    missing = [p for p in q.people if _absent(p, p, m, said)]
    if missing:
        other = [p for p in m.people if _absent(p, p, q, query)]
        if other:
            return missing[0], other[0]
    return None
