"""Another entity of the same kind (issue 16, class 3: never-stored near misses). A question about the dentist
appointment is not answered by the vet appointment, '我家狗狗一天喂几次' not by '我家猫咪一天喂两次', Tom's job not
by Priya's: the memory shares the question's frame and most of its words, and names another filler of the slot
the question asks about. Dense similarity and keyword coverage both see a near match; the relevance floor cannot
tell it from an answer. :func:`contrasts` finds such a pair from the two texts' own words (no model, no store):

* **One frame, two fillers** (the paradigmatic relation: words that fill the same slot of the same frame are of
  one class, Harris 1954 'Distributional structure'; Saussure's associative axis). The question has a noun ``q``
  directly before an anchor (a noun modified: 'dentist appointment', '狗狗 一天') or, as a name, directly after one
  (apposition: 'friend Tom'; in Chinese any noun: '我家 狗狗', '同事 小刘'), or, as an English name, after a
  preposition after one ('flight to Seoul' / 'flight to Tokyo'), or, as a Chinese place or organisation, after a
  coverb ('在重庆' / '在成都', :data:`_ZH_COVERBS`); the memory has another noun ``m`` of
  the same class in the same place by the same anchor ('vet appointment', 'friend Priya', '我家 猫咪'); ``q``
  occurs nowhere in the memory and ``m`` nowhere in the question. Anchors are nouns (in Chinese also pronouns,
  numerals, time words), never verbs: '去 医院' / '去 协和' is the hospital by its name. An English common noun
  after a noun heads a compound ('hotel room' / 'hotel preferences': two attributes of one thing), no slot.
* **One head, two modifiers** (Chinese compounds are right-headed: the last morpheme names the kind, the rest
  which one; Packard, *The Morphology of Chinese*, 2000, ch. 7): a question noun and a memory noun of two or
  more characters, both in jieba's dictionary, that end in the same character and share none before it
  ('游泳课' / '钢琴课', '眼科' / '口腔科', '牙医' / '兽医'), the last character no nominal suffix (子 / 儿 / 头:
  嗓子 / 疹子). A two-character noun followed by a one-character noun is one compound ('游泳' '课' -> '游泳课').
* **Another person**: the question names a person in the familiar form ('老王', '小刘': 小 / 老 / 阿 + a surname;
  jieba's person tag alone also falls on drug names, 布洛芬) or by surname and title ('张总', '王老师';
  :func:`memory_engine.text.zh_names`, ``keyword.person_names``) whom the memory does not name (nor has as its
  speaker), and the memory names another one.

Nouns only, and entities only: a verb swapped in the same frame is a paraphrase ('buy the tickets' / 'booked the
tickets', 'do I like jazz' / 'I love jazz'), and a question word's noun is what is asked ('什么颜色' / '白色' is the
answer). English nouns: lemminflect's nouns that are no gradable adjectives (good / better), words it knows only as
verbs that CC-CEDICT glosses only bare ('vet' for 兽医), and unknown words (names); a noun-or-verb word after a
subject pronoun, auxiliary or 'to' is a verb there. Quantifiers and ordinals ('many times' / 'third time') and
Chinese words with a numeral are no entities; kinship words are left to the relative mismatch (text.relatives: it
knows that 孩子 covers 儿子). Two words CC-CEDICT glosses alike or one inside the other ('car' / 'automobile';
产品 'product' / 新品 'new product') are one thing or its kind, not two entities (the pivot through a translation,
Bannard & Callison-Burch 2005). The engine asks this only of short lookups (``retrieval.entity_max_terms``).

Shapes: :func:`slots` -> :class:`Slots` of one text (cached: memory texts recur); :func:`contrasts` -> the pair
(question word, memory word) that makes the memory about another entity, or None."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from ..text import (
    _CJK,
    RECONFIGURE_HOOKS,
    _stem,
    content_terms,
    pos_tags,
    relatives,
    zh_names,
    zh_person_names,
)
from .crosslang import _PAREN, _dictionary, glosses, zh_verbal

__all__ = ["Slots", "contrasts", "slots"]

#: an English word (letters, inner apostrophe or hyphen); a possessive 's is cut off
_EN_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*")
#: question words: the noun right after one names what is asked ('什么颜色', 'which model'), and the memory's
#: filler of that slot is the answer ('白色'), not another entity
_WH = frozenset("什么 啥 哪 哪个 哪些 哪种 哪家 哪位 哪儿 哪里 几 几个 多少 什么样 what which whose".split())
#: the familiar form of a Chinese name: 小 / 老 / 阿 + one character, the surname ('老王', '小刘', '阿强'). jieba's
#: person tag alone also falls on drug names and transliterations (布洛芬 nr), so only this form counts as a person
_ZH_PERSON_PREFIX = frozenset("小老阿")
#: Chinese nominal suffixes (Chao, *A Grammar of Spoken Chinese*, 1968, 4.4): a word's last character but no head
#: naming its kind ('嗓子' / '疹子', '石头' / '舌头')
_ZH_SUFFIXES = frozenset("子儿头们")
#: Chinese numeral characters: a word with one counts ('六百', '两次'), it names no entity
_ZH_NUMERALS = frozenset("零一二三四五六七八九十百千万亿两几半")
#: what opens an English verb phrase (a closed class: subject pronouns, auxiliaries and modals, the infinitive
#: marker): a noun-or-verb word right after one is a verb ('do I like jazz' / 'I love jazz', 'I buy tickets'),
#: and a verb swapped in a frame is a paraphrase
_EN_VERB_CUES = frozenset("i you we they he she it to do does did don't didn't doesn't will would can could shall "
                          "should must may might i'll we'll i'd i've we've never always usually often".split())


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
    """Whether lower-case English word ``w`` can be a noun (module docstring): lemminflect knows it as a noun and
    not as a gradable adjective (one with a comparative: good / better, red / redder); or lemminflect knows it
    only as a verb and CC-CEDICT as a bare gloss, never with 'to' (a noun its verb table also lists: 'vet' for
    兽医); or neither knows it (a name, a brand). Whether a noun-or-verb word is a verb where it stands is
    :data:`_EN_VERB_CUES`'s."""
    from lemminflect import getAllInflections, getAllLemmas

    if "-" in w.strip("-"):
        # a hyphenated compound is of its last part's kind (English compounds are right-headed: Williams 1981,
        # 'On the notions "lexically related" and "head of a word"'): 'not-so-great' is an adjective
        return _en_noun(w.strip("-").rsplit("-", 1)[1])
    lemmas = getAllLemmas(w)
    bare, verbal = _en_glossed()
    if not lemmas:
        return w not in verbal
    if "NOUN" in lemmas:
        # an adjective-or-noun word in an adjective's derivational suffix is an adjective before a noun
        # ('dental office', 'negative experience'): a modifier, no entity
        return "JJR" not in getAllInflections(w) and not ("ADJ" in lemmas and w.endswith(_EN_ADJ_SUFFIXES))
    # a verb's inflected form ('named' of 'name') is a verb, whatever gloss CC-CEDICT writes with it: only a base
    # form the verb table lists may be a noun that way ('vet')
    return set(lemmas) == {"VERB"} and w in lemmas["VERB"] and w in bare and w not in verbal


#: the suffixes that derive English adjectives (a closed class: Quirk et al. 1985, *A Comprehensive Grammar of the
#: English Language*, App. I.33-39: -al, -ial, -ical, -ic, -ive, -ous, -ful, -less, -able, -ible, -ary)
_EN_ADJ_SUFFIXES = ("al", "ic", "ive", "ous", "ful", "less", "able", "ible", "ary")


@lru_cache(maxsize=65_536)
def _en_can_be_verb(w: str) -> bool:
    from lemminflect import getAllLemmas

    return "VERB" in getAllLemmas(w)


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
    """Whether two Chinese words name one thing or one the other's kind by CC-CEDICT: a gloss of one (as a set
    of content terms) is a gloss of the other or inside one ('产品' 'product' in '新品' 'new product')."""
    ga, gb = glosses(a), glosses(b)
    return any(x <= y or y <= x for x in ga for y in gb)


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


#: what a filler's slot may be framed by in Chinese: a noun, pronoun (我家), numeral (一天) or time word, by jieba's
#: tag; a verb frames any object ('去 医院' / '去 协和': the hospital by its name) and frames nothing here
_ZH_ANCHOR = ("n", "r", "m", "t")
#: English quantifiers, ordinals and number words (a closed class, CGEL ch. 5): a modifier that counts or orders
#: ('many times' / 'third time') is no entity
_EN_QUANT = frozenset("many much few several some any all every each both most more less other another first second "
                      "third fourth fifth sixth seventh eighth ninth tenth last next one two three four five six seven "
                      "eight nine ten half".split())

Token = tuple[str, str, str, bool]
#: the simple English prepositions of place, direction, company and affiliation (a closed class; the governors of
#: write/changes.py's roles): a name after one of them fills the slot of the noun before it ('flight to Tokyo')
_EN_PREPOSITIONS = frozenset({"to", "from", "in", "at", "with", "for", "on", "near", "into"})


#: the Chinese coverbs of place and direction (a closed class, the governors of write/changes.py's roles): a place
#: or an organisation after one fills one slot ('在重庆' / '在成都')
_ZH_COVERBS = frozenset({"在", "去", "到", "从", "回"})


def _tokens(text: str) -> list[Token]:
    """(key, surface, kind, anchor) per token in order. ``kind``: 'n' a noun ('N' / '?' for English names,
    :func:`_en_token`; 'ns' / 'nt' / 'nz' jieba's Chinese places / organisations / other proper nouns), 'p' a
    Chinese person word, '' anything else; ``anchor``: the token may frame a slot (an English noun; a Chinese
    word of :data:`_ZH_ANCHOR`); key '' for what is no content (a function word, punctuation), which also breaks
    adjacency."""
    out: list[Token] = []
    if not _CJK.search(text):
        for part in re.split(r"([A-Za-z][A-Za-z'-]*)", text):
            if _EN_WORD.fullmatch(part):
                tok = _en_token(part, not out)
                if tok[2] and out and out[-1][1].lower() in _EN_VERB_CUES and _en_can_be_verb(part.lower()):
                    tok = (tok[0], tok[1], "", False)  # a verb where it stands
                out.append(tok)
            elif part.strip():
                out.append(("", part, "", False))
        return _governed(out)
    tagged = pos_tags(text)
    # 老周 (a time word for jieba), 张总, 小周 of 小 / 周家: one person word each (text.zh_person_names), in place of
    # the words it starts; a word it ends inside (周家) goes with it
    names = {i: j for i, j in zh_person_names(text)}
    starts, off = [], 0
    for w, _ in tagged:
        starts.append(off)
        off += len(w)
    i = 0
    while i < len(tagged):
        w, flag = tagged[i]
        nxt = tagged[i + 1] if i + 1 < len(tagged) else ("", "")
        if starts[i] in names:
            end = names[starts[i]]
            out.append((text[starts[i]:end], text[starts[i]:end], "p", True))
            while i < len(tagged) and starts[i] < end:
                i += 1
            continue
        i += 1
        if not _CJK.fullmatch(w):
            words = _EN_WORD.findall(w)
            out.extend(_en_token(x, not out) for x in words)
            if not words and not w.isspace():
                out.append(("", w, "", False))
            continue
        if w in _ZH_PERSON_PREFIX and nxt[1] in ("nr", "nrt") and len(nxt[0]) == 1:
            out.append((w + nxt[0], w + nxt[0], "p", True))  # 小刘: one person word (jieba tags 小 / 刘)
            i += 1
        elif flag.startswith(("n", "vn")) and len(w) >= 2 and len(nxt[0]) == 1 and nxt[1] == "n" \
                and _CJK.fullmatch(nxt[0]):
            out.append((w + nxt[0], w + nxt[0], "nc", True))  # 游泳 + 课: one compound, headed by 课
            i += 1
        elif len(w) == 2 and w[0] in _ZH_PERSON_PREFIX and flag in ("nr", "nrt"):
            out.append((w, w, "p", True))  # 老王 as one word
        else:
            key = w if content_terms(w) or w in _WH else ""
            # a one-character noun is too often a cut of a longer word (学 in 打算学) to be an entity; a word the
            # dictionary glosses only as a verb is none either (jieba tags verb-object compounds as nouns: 上学 n)
            kind = ((flag if flag in ("ns", "nt", "nz") else "n") if flag.startswith("n") and len(w) >= 2
                    and not _ZH_NUMERALS & set(w) and not zh_verbal(w) else "")
            out.append((key, w, kind, flag.startswith(_ZH_ANCHOR)))
    return _governed(out)


def _governed(toks: list[Token]) -> list[Token]:
    """The noun right after a question word is what is asked ('什么 颜色'): no filler (kind '')."""
    return [(k, s, "" if i and toks[i - 1][1].lower() in _WH else kind, a) for i, (k, s, kind, a) in enumerate(toks)]


def _en_token(word: str, first: bool) -> Token:
    """An English word's (key, surface, kind, anchor): kind 'N' a capitalised noun inside the text (a name:
    'Tom'), 'n' a lower-case noun, '?' a capitalised noun opening the text (either), '' no noun."""
    w = re.sub(r"'s?$", "", word).lower()
    if w in _WH:
        return (w, word, "", False)
    if not w or not content_terms(w) or w.isdigit():
        return ("", word, "", False)
    if w in _EN_QUANT or not _en_noun(w):
        return (_stem(w), word, "", False)
    return (_stem(w), word, "n" if word[0].islower() else "?" if first else "N", True)


def _same_kind(a: str, b: str) -> bool:
    """Whether two fillers' kinds (:func:`_tokens`) may name entities of one class: a name and a common noun may
    not ('sister Lena' / "sister's job"); a word opening the text may be either; a joined compound is a noun."""
    a, b = ("n" if a == "nc" else a), ("n" if b == "nc" else b)
    return a == b or (a in "nN?" and b in "nN?" and "?" in (a, b))


@lru_cache(maxsize=65_536)
def slots(text: str) -> Slots:
    """The :class:`Slots` of ``text`` (cached). Frames: a noun directly before an anchor modifies it ('dentist
    appointment', '狗狗 一天'); a noun directly after one is its apposition when it is a name ('friend Tom') or,
    in Chinese, what the anchor qualifies ('我家 狗狗', '同事 小刘'). An English common noun after a noun is
    the head of a compound ('hotel room' / 'hotel preferences': two attributes of one thing, not two things)."""
    toks = [(k, s, "" if kind and relatives(s) else kind, a) for k, s, kind, a in _tokens(text)]  # kin: text.relatives
    frames: set[tuple[str, str, str, str, str]] = set()
    for (k1, s1, n1, a1), (k2, s2, n2, a2) in zip(toks, toks[1:], strict=False):
        if not k1 or not k2:
            continue
        if n1 and a2:
            frames.add(("before", k2, k1, s1, n1))
        if n2 and a1 and (n2 not in ("n", "?") or _CJK.fullmatch(k2)):
            frames.add(("after", k1, k2, s2, n2))
    # a name governed by a preposition after an English noun fills that noun's slot too ('flight to Tokyo' /
    # 'flight to Seoul', 'dinner with Priya' / 'dinner with Tom'): the side is 'via ' + the preposition
    for (k1, _, _, a1), (k2, s2, _, _), (k3, s3, n3, _) in zip(toks, toks[1:], toks[2:], strict=False):
        if k1 and a1 and not k2 and s2.strip().lower() in _EN_PREPOSITIONS and k3 and n3 == "N" and not _CJK.search(k1):
            frames.add(("via " + s2.strip().lower(), k1, k3, s3, n3))
    # a Chinese place or organisation governed by a coverb fills the coverb's slot ('在重庆吃的火锅' / '在成都出差
    # 吃的火锅', '在腾讯的工号' / '在阿里的工号'): the coverb is the anchor, as an English preposition after a noun
    for (_, s1, _, _), (k2, s2, n2, _) in zip(toks, toks[1:], strict=False):
        if s1 in _ZH_COVERBS and n2 in ("ns", "nt") and k2 and _CJK.fullmatch(k2):
            frames.add(("coverb", s1, k2, s2, n2))
    heads: set[str] = set()
    for k, _, kind, _ in toks:
        if kind in ("n", "nc", "nz", "ns", "nt") and len(k) >= 2 and _CJK.fullmatch(k) and not _ZH_NUMERALS & set(k):
            # a dictionary word or a compound of two (jieba's guesses for unknown runs, '张卡', are no nouns)
            if kind == "nc" or _known(k):
                heads.add(k)
            # the nouns inside a longer noun: 眼科医生 -> 眼科, 医生
            heads |= {t for t in content_terms(k) if len(t) >= 2 and t != k and _CJK.fullmatch(t) and not relatives(t)
                      and _known(t) and not _ZH_NUMERALS & set(t)}
    people = frozenset(k for k, _, kind, _ in toks if kind == "p")
    return Slots(frozenset(frames), frozenset(heads), people,
                 frozenset(k for k, _, _, _ in toks if k) | content_terms(text))


RECONFIGURE_HOOKS.append(slots)


def _known(word: str) -> bool:
    """Whether ``word`` is in jieba's dictionary."""
    import jieba

    return bool(jieba.dt.FREQ.get(word))


def _absent(key: str, surface: str, other: Slots, other_text: str) -> bool:
    """``key`` (a word of one text) is nowhere in the other: not among its keys, and for a Chinese word not
    inside its text either (jieba cuts 猫 out of 猫咪 or not)."""
    if key in other.keys:
        return False
    if _EN_WORD.fullmatch(surface) and _en_compound_of(surface.lower(), other.keys):
        return False
    return not (_CJK.fullmatch(key) and key in other_text) and surface.lower() not in other_text.lower()


def _en_compound_of(word: str, keys: frozenset[str]) -> bool:
    """Whether English ``word`` is a closed compound of two words one of which ``keys`` hold (stems): 'hometown'
    = 'home' + 'town' is there in a text that says 'home' (a compound names a kind of its head or a thing of its
    modifier, Bauer 1983 *English Word-Formation* 7.2). Both parts at least :data:`_EN_COMPOUND_MIN` letters and
    known to lemminflect, so 'carpet' is no 'car' + 'pet'."""
    from lemminflect import getAllLemmas

    n = _EN_COMPOUND_MIN
    for i in range(n, len(word) - n + 1):
        a, b = word[:i], word[i:]
        if (_stem(a) in keys or _stem(b) in keys) and getAllLemmas(a) and getAllLemmas(b):
            return True
    return False


#: the shortest part of an English closed compound :func:`_en_compound_of` splits off
_EN_COMPOUND_MIN = 4


def contrasts(query: str, content: str, speaker: str = "") -> tuple[str, str] | None:
    """(question word, memory word) when ``content`` names another entity of the kind ``query`` asks about (module
    docstring), else None. ``speaker``: the memory's declared speaker, a person it names."""
    q = slots(query)
    if not (q.frames or q.heads or q.people):
        return None
    # a memory that holds none of the question's anchors, head characters or name prefixes has no pair: skip its
    # tagging (jieba's tagger costs ~1-10 ms a new text, a retrieve asks this of every pooled candidate)
    low = content.lower()
    if not (any(f[1] in low for f in q.frames) or any(h[-1] in content for h in q.heads)
            or (q.people and (any(c in content for c in _ZH_PERSON_PREFIX) or zh_names(content)))):
        return None
    m = slots(content)
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
            if mh[-1] == qh[-1] and qh[-1] not in _ZH_SUFFIXES and not set(mh[:-1]) & set(qh[:-1]) \
                    and _absent(mh, mh, q, query) \
                    and not _zh_synonyms(qh, mh):
                return qh, mh
    missing = [p for p in q.people if _absent(p, p, m, said)]
    if missing:
        other = [p for p in m.people if _absent(p, p, q, query)]
        if other:
            return missing[0], other[0]
    return None
