"""Composite kinship terms: one word for a path of two relations (issue 16, class 5, multi-hop).

'我姐夫是做什么的' asks about the sister's husband; the memories say '我姐姐嫁给了张伟' and '张伟在银行
上班'. Nothing in 姐夫 is a word of either memory, so neither keyword coverage nor the relative checks of
:func:`memory_engine.text.relatives` see the link. Chinese and English name in-laws and the spouses of
siblings and children with such compounds; they are a closed class, listed here with the path each one
abbreviates (the standard reading of Mandarin kinship terminology, as in 《现代汉语词典》 and the table of
冯汉骥, *The Chinese Kinship System*, 1937; English in-law terms as defined by the Oxford English
Dictionary), written as the base kinship words of :data:`memory_engine.text._KIN`:

* 姐夫 = 姐姐的丈夫, 嫂子 = 哥哥的妻子, 岳母 / 丈母娘 = 妻子的母亲, 公公 = 丈夫的父亲, 小舅子 = 妻子的弟弟 ...
* brother-in-law = wife's / husband's brother or sister's husband (an English term with several paths
  keeps them all: nothing in the word says which).

:func:`chain_text` rewrites every composite term of a text into its chain form ('我姐夫' -> '我姐姐的丈夫',
"my mother-in-law" -> "my wife's mother or husband's mother"), so the chain readers of
:mod:`memory_engine.text` (``relatives``, ``relative_chains``) see the relatives a composite names and
which one qualifies which. Only two-step paths are listed (连襟 = 妻子的姐妹的丈夫 and 妯娌 are left out:
the chain readers pair adjacent relatives). Dialect readings are not covered (公公 / 婆婆 for the
grandparents in the south; 弟妹 is left out because it also means 'younger brother and sister').

Shapes: :data:`COMPOSITES_ZH` / :data:`COMPOSITES_EN` map a composite term to a tuple of paths, each a
(qualifier, relative) pair of base kinship words; :func:`composites` -> ((term as written, paths), ...)."""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = ["COMPOSITES_EN", "COMPOSITES_ZH", "chain_text", "composites"]

_WIFE_SIDE = "妻子"
_HUSBAND_SIDE = "丈夫"

#: Chinese composite kinship terms -> the paths they abbreviate (qualifier, relative), base words of text._KIN
COMPOSITES_ZH: dict[str, tuple[tuple[str, str], ...]] = {
    # spouses of siblings
    "姐夫": (("姐姐", "丈夫"),), "妹夫": (("妹妹", "丈夫"),),
    "嫂子": (("哥哥", "妻子"),), "嫂嫂": (("哥哥", "妻子"),), "大嫂": (("哥哥", "妻子"),),
    "弟媳妇": (("弟弟", "妻子"),), "弟媳": (("弟弟", "妻子"),),
    # the wife's family
    "岳父": ((_WIFE_SIDE, "父亲"),), "老丈人": ((_WIFE_SIDE, "父亲"),), "丈人": ((_WIFE_SIDE, "父亲"),),
    "岳母": ((_WIFE_SIDE, "母亲"),), "丈母娘": ((_WIFE_SIDE, "母亲"),),
    "岳父母": ((_WIFE_SIDE, "父母"),),
    "大舅子": ((_WIFE_SIDE, "哥哥"),), "小舅子": ((_WIFE_SIDE, "弟弟"),),
    "大姨子": ((_WIFE_SIDE, "姐姐"),), "小姨子": ((_WIFE_SIDE, "妹妹"),),
    # the husband's family
    "公公": ((_HUSBAND_SIDE, "父亲"),), "婆婆": ((_HUSBAND_SIDE, "母亲"),), "公婆": ((_HUSBAND_SIDE, "父母"),),
    "大伯子": ((_HUSBAND_SIDE, "哥哥"),), "小叔子": ((_HUSBAND_SIDE, "弟弟"),),
    "大姑子": ((_HUSBAND_SIDE, "姐姐"),), "小姑子": ((_HUSBAND_SIDE, "妹妹"),),
    # spouses of children
    "女婿": (("女儿", "丈夫"),), "儿媳妇": (("儿子", "妻子"),), "儿媳": (("儿子", "妻子"),),
    # spouses of aunts (舅妈 / 婶婶 already name the uncle's side in text._KIN)
    "姑父": (("姑姑", "丈夫"),), "姑丈": (("姑姑", "丈夫"),), "姨父": (("姨妈", "丈夫"),), "姨夫": (("姨妈", "丈夫"),),
}
#: English in-law terms (the relative before '-in-law') -> the paths they abbreviate
COMPOSITES_EN: dict[str, tuple[tuple[str, str], ...]] = {
    "mother": (("wife", "mother"), ("husband", "mother")),
    "father": (("wife", "father"), ("husband", "father")),
    "parent": (("wife", "parents"), ("husband", "parents")),
    "brother": (("wife", "brother"), ("husband", "brother"), ("sister", "husband")),
    "sister": (("wife", "sister"), ("husband", "sister"), ("brother", "wife")),
    "son": (("daughter", "husband"),),
    "daughter": (("son", "wife"),),
}
#: 'mother-in-law', 'brothers in law', 'sisters-in-law'; 'the in-laws' alone are the spouse's parents (no letter
#: before it, so '我的brother-in-law' is read too)
_EN_IN_LAW = re.compile(r"(?<![A-Za-z])(mother|father|parent|brother|sister|son|daughter)s?[- ]in[- ]laws?\b"
                        r"|(?<![A-Za-z])in[- ]laws\b", re.IGNORECASE)
#: Chinese composites longest first, so '小姨子' is read before the aunt '小姨' and '弟媳妇' before '弟媳'
_ZH_ALT = re.compile("|".join(sorted(COMPOSITES_ZH, key=len, reverse=True)))


def _en_paths(m: re.Match[str]) -> tuple[tuple[str, str], ...]:
    return COMPOSITES_EN[m.group(1).lower()] if m.group(1) else COMPOSITES_EN["parent"]


@lru_cache(maxsize=65_536)
def composites(text: str) -> tuple[tuple[str, tuple[tuple[str, str], ...]], ...]:
    """The composite kinship terms of ``text`` as written, each with its paths: '我姐夫' -> (('姐夫',
    (('姐姐', '丈夫'),)),); "my mother-in-law" -> (('mother-in-law', (('wife', 'mother'), ('husband',
    'mother'))),)."""
    out = [(m.group(0), COMPOSITES_ZH[m.group(0)]) for m in _ZH_ALT.finditer(text)]
    out += [(m.group(0), _en_paths(m)) for m in _EN_IN_LAW.finditer(text)]
    return tuple(out)


def _zh_chain(m: re.Match[str]) -> str:
    return "或".join(f"{a}的{b}" for a, b in COMPOSITES_ZH[m.group(0)])


def _en_chain(m: re.Match[str]) -> str:
    return " or ".join(f"{a}'s {b}" for a, b in _en_paths(m))


@lru_cache(maxsize=65_536)
def chain_text(text: str) -> str:
    """``text`` with every composite kinship term written as its chain ('我姐夫在银行' -> '我姐姐的丈夫在银行';
    "my brother-in-law" -> "my wife's brother or husband's brother or sister's husband"); unchanged when it
    holds none (the common case, checked first)."""
    if not text:
        return text
    out = _ZH_ALT.sub(_zh_chain, text)
    return _EN_IN_LAW.sub(_en_chain, out)
