"""Reworded duplicates merge, near-identical opposites never do (issue 16).

Two statements are the same memory when they agree on identifiers, numbers and
polarity (checked by the caller) and either

* their rescaled similarity is >= ``write.dedup_similarity`` (a repeat), or
* their rescaled similarity is >= ``write.dedup_reworded_similarity`` AND they
  share at least ``write.dedup_term_overlap`` of their content terms (Jaccard):
  the same words in another order or form ("I prefer aisle seats on long
  flights" / "On long flights I prefer an aisle seat").

Two statements that each carry content terms the other lacks ("坐高铁我喜欢靠窗的座位" /
"坐高铁我现在喜欢靠过道的座位": 靠窗 vs 靠/过道) state different values of one subject, not
one memory said twice, whatever their similarity (``write.dedup_distinct_terms``): merging
them would drop the newer value, and an A -> B -> A flip would lose B's time.

"I like X" vs "I don't like X" (polarity), "82 kg" vs "78 kg" (numbers) and
"order A123" vs "order A124" (identifiers) never merge, however similar; neither do two
statements about different people ("my wife is allergic to cats" / "I'm allergic to cats too":
:func:`memory_engine.text.relatives`) or a state that is over and one that holds now ("我以前在上海住过三年"
/ "我现在住在上海": :func:`memory_engine.write.rules.past_aspect`), checked by the caller as well.

Restatements come with conversational wrapping that names nothing ("penicillin allergy here, just
so you know", "花生过敏哈，记一下", "every Tuesday night I go swimming"): with
``write.dedup_ignore_fillers`` the closed-class discourse words of :data:`FILLERS` are left out of the
term comparison (:func:`informative`); with ``write.dedup_stem_prefix`` two English stems of one
word family that the Snowball stemmer leaves apart ("allergic" -> "allerg", "allergy" -> "allergi")
count as one term (:func:`align_stems`); and two statements left with exactly the same content
terms need only ``write.dedup_same_terms_similarity``, since the wrapping moves the embedding.
None of these adds a merge the identity checks refuse.

A merge keeps only the older memory, so a statement that adds a content term the
older one lacks is never a duplicate (:func:`adds_content`): "我妈妈是护士长"
(head nurse) does not merge into "我妈妈是做护士的", "the launch is at 7 pm next
Monday" not into "the launch lasts six weeks"; both are kept and each stays
findable by its own words. A repeat, a shorter restatement or the same words in
another order or form still merge.
"""

from __future__ import annotations

import re
from collections.abc import Set

from ..text import content_terms

#: discourse words of a restatement that name nothing the memory is about: hedged repeats, reminders,
#: sentence particles and fillers, zh and en (closed class, like stop words; read through
#: :func:`memory_engine.text.content_terms` so they compare as stored terms do). Aspect, time, negation
#: and person words are not here: they change what a statement says.
FILLERS: frozenset[str] = frozenset().union(*(content_terms(w) for w in """
    just actually btw fyi reminder remind remember again too also still here really anyway anyways already
    kinda sorta go going get gonna wanna said say tell told mention mentioned repeat repeating ok okay yeah
    yep so um uh hey lol haha
    哈 哈哈 啦 呀 哦 嘛 呢 喔 噢 嗯 咯 哟 呐 啊 呗 其实 记 记一下 记住 记得 提醒 一下 再说 说 说过 讲 讲过 还是 也 真的
    反正 总之 就是 顺便 哈哈哈 一遍 再 又 强调 补充 顺带""".split()))

_LATIN = re.compile(r"[a-z]+")


def informative(terms: Set[str], ignore_fillers: bool = True) -> frozenset[str]:
    """``terms`` without the :data:`FILLERS` (all of them when ``ignore_fillers`` is False)."""
    return frozenset(terms) - FILLERS if ignore_fillers else frozenset(terms)


def align_stems(new_terms: Set[str], old_terms: Set[str], min_prefix: int) -> frozenset[str]:
    """``new_terms`` with each English term that ``old_terms`` lacks replaced by an old term of its word family:
    one is a prefix of the other and the shorter has at least ``min_prefix`` letters ('allergi' -> 'allerg').
    ``min_prefix`` 0 turns it off; Chinese terms are left alone (jieba words have no suffixes)."""
    if min_prefix <= 0:
        return frozenset(new_terms)
    out: set[str] = set()
    for t in new_terms:
        if t not in old_terms and _LATIN.fullmatch(t) and len(t) >= min_prefix:
            kin = [o for o in old_terms if len(o) >= min_prefix and _LATIN.fullmatch(o)
                   and (o.startswith(t) or t.startswith(o))]
            if kin:
                t = min(kin)
        out.add(t)
    return frozenset(out)


def jaccard(a: Set[str], b: Set[str]) -> float:
    """|a n b| / |a u b| in [0, 1]; 0 when both are empty."""
    union = a | b
    return len(a & b) / len(union) if union else 0.0


def different_values(new_terms: Set[str], old_terms: Set[str]) -> bool:
    """Each side carries a content term the other lacks (module docstring)."""
    return bool(new_terms - old_terms) and bool(old_terms - new_terms)


def adds_content(new_terms: Set[str], old_terms: Set[str]) -> bool:
    """True when the new statement names a content term the older memory does not carry
    (terms as :func:`memory_engine.text.content_terms` gives them: stemmed English, jieba
    words in Chinese): merging would lose those words."""
    return not set(new_terms) <= set(old_terms)


def same_meaning(similarity: float, new_terms: Set[str], old_terms: Set[str], *, repeat_similarity: float,
                 reworded_similarity: float, term_overlap: float, distinct_terms: bool = False,
                 same_terms_similarity: float = 1.0) -> bool:
    """The similarity half of the duplicate test (module docstring); ``similarity`` is rescaled, in [0, 1].
    With ``distinct_terms`` two texts that are :func:`different_values` are never the same meaning. Two
    texts with exactly the same (non-empty) content terms need only ``same_terms_similarity``: a
    restatement wrapped in fillers ("penicillin allergy here, just so you know", rescaled 0.56 against
    "I'm allergic to penicillin") embeds further away than a bare rewording."""
    if distinct_terms and different_values(new_terms, old_terms):
        return False
    if similarity >= repeat_similarity:
        return True
    if new_terms and set(new_terms) == set(old_terms) and similarity >= same_terms_similarity:
        return True  # the same content words and nothing else: the wrapping, not the content, lowered the cosine
    return similarity >= reworded_similarity and jaccard(new_terms, old_terms) >= term_overlap
