"""Relation paths (issue 16, class 5): a question about 'my sister's husband', '我姐夫' or 'my
mother-in-law' asks about a person reached through two relations. Which memory answers it, from the
memory's own words (no model, no store):

* it **states** a path of the question (:data:`STATES`) when it names the path's qualifier and its
  relative ('我老婆她妈有高血压', "my brother Sam's wife Hana"), or, when the relative is a spouse, the
  qualifier and a marriage word ('我姐前年嫁给了赵磊', 'our daughter got engaged to Marcus'). The marriage
  words are a closed class: the Chinese morphemes 嫁 / 娶 / 婚 and 领证 (the marriage licence), the English
  forms of marry, wed and engage, fiancé(e) and spouse. Such a memory is the first link of the chain; the
  entity hop (:mod:`memory_engine.retrieve.hop`) takes the name it introduces to the memories about him.
* it is about **another** relative (:data:`OTHER`) when it names relatives but states no path of the
  question: the relative alone as the user's own ('我妈的电话' for 婆婆, the husband's mother), another
  path ('我老公他爸' for 婆婆), or the qualifier alone ('我姐自己在小学教语文' for 姐夫). A qualifier named
  together with a person ('我姐和周涛下个月办酒') may introduce the relative by name and is left alone
  (None), as is a memory that names no relative ('张伟在银行上班') or only another person's ("Lin's little brother",
  '陈涛他妈妈': the chain's second link when that person is the qualifier).

The question's paths are :func:`memory_engine.text.kin_pairs` (chains and composite kinship terms,
:mod:`memory_engine.kinship`); the relatives of a memory :func:`memory_engine.text.relatives`."""

from __future__ import annotations

import re
from functools import lru_cache

from ..text import kin_pairs, others_relatives, relatives
from .referents import person_names

__all__ = ["OTHER", "STATES", "marriage_word", "path_fit"]

STATES = "states"
OTHER = "other"

#: the spouse relatives (text._KIN ids): the step a marriage word states
_SPOUSES = frozenset({"husband", "wife"})
_MARRIAGE_ZH = re.compile(r"[嫁娶婚]|领证")
_MARRIAGE_EN = re.compile(r"\b(?:marr(?:y|ies|ied|ying|iage)|wed(?:s|ded|ding)?|engaged|engagement|"
                          r"fianc[eé]e?s?|spouses?)\b", re.IGNORECASE)


def marriage_word(content: str) -> bool:
    """Whether ``content`` speaks of a marriage or an engagement (module docstring)."""
    return bool(_MARRIAGE_ZH.search(content) or _MARRIAGE_EN.search(content))


def _states(qualifier: frozenset[str], relative: frozenset[str], kin: frozenset[str], content: str) -> bool:
    if not kin & qualifier:
        return False
    return bool(kin & relative) or bool(relative & _SPOUSES and marriage_word(content))


@lru_cache(maxsize=65_536)
def path_fit(query: str, content: str) -> str | None:
    """How ``content`` relates to the relation paths ``query`` names: :data:`STATES`, :data:`OTHER` or None
    (the query names no path, the memory no relative, or it names a qualifier with a person: a possible
    link). Cached: the same question meets the same memories across a run."""
    paths = kin_pairs(query)
    if not paths:
        return None
    kin = relatives(content)
    if not kin:
        return None
    if any(_states(a, b, kin, content) for a, b in paths):
        return STATES
    qualifiers = frozenset().union(*(a for a, _ in paths))
    if kin <= qualifiers and person_names(content):
        return None  # '我姐和周涛下个月办酒': the qualifier with a person, who may be the relative asked about
    if kin <= others_relatives(content):
        # "Hao, Lin's little brother, just started at Tencent", '陈涛他妈妈一个人住在苏州': every relative it names is
        # another person's, who may be the qualifier the question reaches them through (Lin the wife): the chain's
        # second link, not another relative of the user's (session 20 red-team: damped out, the hop never ran)
        return None
    return OTHER
