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
"order A123" vs "order A124" (identifiers) never merge, however similar.

A merge keeps only the older memory, so a statement that adds a content term the
older one lacks is never a duplicate (:func:`adds_content`): "我妈妈是护士长"
(head nurse) does not merge into "我妈妈是做护士的", "the launch is at 7 pm next
Monday" not into "the launch lasts six weeks"; both are kept and each stays
findable by its own words. A repeat, a shorter restatement or the same words in
another order or form still merge.
"""

from __future__ import annotations

from collections.abc import Set


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
                 reworded_similarity: float, term_overlap: float, distinct_terms: bool = False) -> bool:
    """The similarity half of the duplicate test (module docstring); ``similarity`` is rescaled, in [0, 1].
    With ``distinct_terms`` two texts that are :func:`different_values` are never the same meaning."""
    if distinct_terms and different_values(new_terms, old_terms):
        return False
    if similarity >= repeat_similarity:
        return True
    return similarity >= reworded_similarity and jaccard(new_terms, old_terms) >= term_overlap
