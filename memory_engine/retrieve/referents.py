"""Who a memory is about, for the entity hop (:mod:`memory_engine.retrieve.hop`): a link between two
memories is only worth following when both speak of the same person. Two checks, both from the
memory's own words (no model, no store):

* **Gender agreement of a pronoun** (``retrieval.hop_gender_agreement``): 'she recommended the vet'
  stands for a woman; the nearest earlier memory naming a person ('我哥周浩下周来北京出差',
  'Mark lent me his pressure washer') is no antecedent when every gender cue it carries is the other
  one. Cues are closed-class words: kinship and address terms (哥 / 姐 / 老公 / wife / Mr / Ms) and
  third-person pronouns. No cue, or cues of both genders, agrees with anything: the check only refuses
  on evidence. This is the agreement filter of pronoun resolution that precedes the recency
  preference (Hobbs 1978; Lappin & Leass 1994, the morphological filter; Mitkov, *Anaphora
  Resolution*, 2002, ch. 2).
* **One referent per surname** (``retrieval.hop_name_conflict``): 'Dr. Chen moved my echo' shares
  'Chen' with 'Kevin Chen from accounting', but when the hits already name 'Helen Chen', the surname
  stands for her, and a memory that names a Chen with another given name is about someone else. A
  name known with one given name does not link to the same surname with a different one (the 'one
  sense per discourse' heuristic of Gale, Church & Yarowsky 1992, applied to person names as in
  cross-document coreference, Bagga & Baldwin 1998).

* **Role referents** (``retrieval.hop_role_referents``): a role word ('my manager', '我领导', '甲方对接人',
  kinship terms) stands for the person a memory introduces next to it ('my manager is Priya now', '我直属
  领导是刘建国'); the newest introduction holds the role. Role words are a closed class (:data:`_ROLES`).
  :func:`same_person` lets a Chinese full name stand for its surname forms (刘建国 -> 刘总, 老刘).

Shapes: :func:`pronoun_gender` -> 'm' | 'f' | None; :func:`gender_cues` -> subset of {'m', 'f'};
:func:`full_names` -> frozenset of (given, surname) pairs, lower-cased (English) or as written (Chinese)."""

from __future__ import annotations

import calendar
import re
from functools import lru_cache

from ..text import (
    _CJK,
    _KIN,
    _jieba,
    _jieba_lock,
    content_terms,
    entities,
    name_settings,
    pos_tags,
    relatives,
    zh_names,
    zh_person_names,
)

__all__ = ["agrees", "full_names", "gender_cues", "name_conflict", "named_terms", "people_of", "person_names",
           "pronoun_gender", "role_referents", "roles", "same_person", "zh_surname"]

#: the bare third-person pronoun a memory opens with (after an optional connective), by gender
_LEAD_PRONOUN = re.compile(r"^\s*(?:(?:and|but|so|then|also)\s+)?(he|she)\b|^\s*([他她])", re.IGNORECASE)

#: English words that say a person is a man or a woman: kinship, address, third-person pronouns
_EN_CUES = {
    "m": "he him his himself brother brothers dad father husband son sons uncle nephew boyfriend grandpa "
         "grandfather mr sir guy man boy",
    "f": "she her hers herself sister sisters mom mum mother wife daughter daughters aunt niece girlfriend grandma "
         "grandmother mrs ms miss lady woman girl",
}
#: Chinese words (as a whole jieba word, or the end of one: '我哥', '表姐', '大舅') that say the same
_ZH_CUES = {
    "m": "他 哥 哥哥 弟 弟弟 爸 爸爸 父亲 老爸 叔 叔叔 舅 舅舅 伯 伯伯 爷爷 外公 姥爷 公公 老公 丈夫 儿子 侄子 外甥 "
         "男朋友 先生 姐夫 妹夫 男",
    "f": "她 姐 姐姐 妹 妹妹 妈 妈妈 母亲 老妈 姨 姨妈 小姨 阿姨 姑 姑姑 姑妈 婶 婶婶 舅妈 奶奶 外婆 姥姥 婆婆 老婆 妻子 "
         "太太 媳妇 女儿 闺女 侄女 外甥女 女朋友 女士 小姐 嫂子 弟媳 女 闺蜜",
}
_EN_GENDER = {w: g for g, words in _EN_CUES.items() for w in words.split()}
_ZH_GENDER = {w: g for g, words in _ZH_CUES.items() for w in words.split()}
#: what may precede a Chinese kinship word inside one jieba word ('我哥', '表姐', '大舅', '亲妹')
_ZH_KIN_PREFIX = frozenset("我你他她表堂亲大二三小老")

#: titles and capitalised words that open a name but are no given name ('Dr. Helen Chen' -> Helen Chen)
_TITLES = frozenset("dr mr mrs ms miss prof professor sir st saint uncle aunt".split())
#: an English full name: two capitalised words (an optional title before them is skipped)
_EN_FULL = re.compile(r"\b([A-Z][a-z]+)\s+([A-Z][a-z]+)\b")
_NOT_GIVEN = frozenset("I My The A An This That It We You He She They Our Your His Her Their And But So Then When "
                       "What Which Who Where Why How Monday Tuesday Wednesday Thursday Friday Saturday Sunday "
                       "January February March April May June July August September October November December".split())
#: Chinese two-character surnames (the common ones; every other surname is one character)
_ZH_COMPOUND_SURNAMES = frozenset("欧阳 司马 上官 诸葛 东方 皇甫 尉迟 公孙 慕容 长孙 宇文 令狐 夏侯 端木 司徒".split())
#: Chinese titles a surname takes instead of a given name ('王老师', '刘总'): such a word names no given name
_ZH_TITLES = ("老师", "总", "经理", "医生", "大夫", "主任", "老板", "律师", "教授", "师傅", "阿姨", "叔叔", "哥", "姐",
              "工", "局", "处", "科长", "部长", "校长", "院长", "书记", "先生", "女士", "小姐")


def pronoun_gender(content: str) -> str | None:
    """'m' / 'f' for a memory whose subject is a bare he / she / 他 / 她 (:func:`hop.pronoun_led`), else None."""
    m = _LEAD_PRONOUN.search(content)
    if m is None:
        return None
    p = (m.group(1) or m.group(2)).lower()
    return "m" if p in ("he", "他") else "f"


@lru_cache(maxsize=65_536)
def gender_cues(content: str) -> frozenset[str]:
    """The genders ``content``'s kinship, address and pronoun words name: {'m'}, {'f'}, both, or none. English
    words whole (case-insensitive); Chinese by jieba word, a word counting when it is a cue or a kinship prefix
    (我 / 表 / 堂 / 大 ...) plus a cue ('我哥' -> m), so '哥伦比亚' is no brother."""
    out = {g for w in re.findall(r"[a-z]+", content.lower()) if (g := _EN_GENDER.get(w))}
    if _CJK.search(content):
        import jieba

        _jieba()
        with _jieba_lock:
            words = jieba.lcut(content)
        for w in words:
            g = _ZH_GENDER.get(w)
            if g is None and len(w) > 1 and w[0] in _ZH_KIN_PREFIX:
                g = _ZH_GENDER.get(w[1:])
            if g is not None:
                out.add(g)
    return frozenset(out)


def agrees(pronoun: str | None, cues: frozenset[str]) -> bool:
    """Whether a memory with gender ``cues`` can be the antecedent of a ``pronoun`` ('m' / 'f' / None): it can
    unless its cues name only the other gender (no cue says nothing; both genders: several people)."""
    return pronoun is None or not cues or pronoun in cues


@lru_cache(maxsize=65_536)
def full_names(content: str) -> frozenset[tuple[str, str]]:
    """(given, surname) of the people ``content`` names in full: two capitalised English words that are no
    title, weekday, month or function word ('Dr. Helen Chen' -> ('helen', 'chen')); Chinese person words (jieba
    nr) of three or four characters, or of two whose first character is not a title's surname (a one- or
    two-character surname + the given name: '李娜' -> ('娜', '李'), '欧阳娜娜' -> ('娜娜', '欧阳')). A surname
    + title ('王老师', '刘总', 'Dr. Chen') names no given name and is left out: it conflicts with no one."""
    out: set[tuple[str, str]] = set()
    for m in _EN_FULL.finditer(content):
        given, surname = m.group(1), m.group(2)
        if given in _NOT_GIVEN or surname in _NOT_GIVEN or given.lower() in _TITLES:
            continue
        out.add((given.lower(), surname.lower()))
    if _CJK.search(content):
        people = [w for w, flag in pos_tags(content) if flag in ("nr", "nrt") and _CJK.fullmatch(w)]
        for p in people:
            if not 2 <= len(p) <= 4 or p.endswith(_ZH_TITLES) or p[0] in _ZH_KIN_PREFIX - {"大"}:
                continue
            sur = p[:2] if p[:2] in _ZH_COMPOUND_SURNAMES else p[0]
            if len(p) > len(sur):
                out.add((p[len(sur):], sur))
    return frozenset(out)


def name_conflict(known: frozenset[tuple[str, str]] | set[tuple[str, str]],
                  names: frozenset[tuple[str, str]]) -> bool:
    """Whether ``names`` hold a person of a surname in ``known`` under another given name (Kevin Chen when Helen
    Chen is known): a memory about someone else than the one the link's surname stands for."""
    given_of: dict[str, set[str]] = {}
    for g, s in known:
        given_of.setdefault(s, set()).add(g)
    return any(s in given_of and g not in given_of[s] for g, s in names)


#: a name introduced by a naming word ('叫朵朵', '名叫 Lucky', 'named Max', 'called Mochi'): jieba tags
#: reduplicated or rare names as anything but names (朵朵: quantifier), and English names may be lower case
_NAMING = re.compile(r"(?:名叫|叫做|叫|named|called)\s*([A-Za-z][\w'-]*|[\u4e00-\u9fff]{1,3})", re.IGNORECASE)

#: capitalised words that name a day or a month, not a person ('coming Thursday'), from the calendar module
_CALENDAR_WORDS = frozenset(w.lower() for w in (*calendar.day_name, *calendar.month_name) if w)

def named_terms(content: str) -> frozenset[str]:
    """Content terms of the names ``content`` introduces through a naming word (叫/名叫/named/called),
    kept only where they are terms of the memory itself (a three-character grab '朵朵今' keeps 朵朵)."""
    own = content_terms(content)
    out: set[str] = set()
    for m in _NAMING.finditer(content):
        name = m.group(1)
        terms: frozenset[str] = content_terms(name) & own
        if not terms and _CJK.fullmatch(name):
            # a CJK grab runs into the next word ('朵朵今'): keep the terms of the memory it starts
            terms = frozenset(t for t in own if name.startswith(t) and len(t) > 1)
        out |= terms
    return frozenset(out)


def person_names(content: str) -> frozenset[str]:
    """The people ``content`` names: jieba person words (nr) in Chinese, capitalised English names that are no
    day or month ('Rosa', not 'Thursday'), and names introduced by a naming word; lower-cased content terms."""
    out = set(named_terms(content))
    if _CJK.search(content):
        import jieba.posseg as pseg

        _jieba()
        with _jieba_lock:
            out |= {w.word for w in pseg.cut(content) if w.flag in ("nr", "nrt") and len(w.word) > 1}
    for m in re.finditer(r"\b[A-Z][a-z]+\b", content):
        w = m.group(0)
        if m.start() > 0 and w.lower() not in _CALENDAR_WORDS and w not in ("I", "He", "She", "My"):
            out |= content_terms(w)
    return frozenset(out)


#: role words (a closed class: workplace, service and household relations a user names people by, zh and en),
#: by role. A query's role word stands for the person the user's memories introduce in that role ('我直属领导是
#: 刘建国', 'my manager is Priya now'); kinship terms are roles too (:func:`memory_engine.text.relatives` ids)
_ROLES: dict[str, tuple[str, str]] = {
    "superior": ("领导 上司 老板 主管 经理 总监 组长", "manager boss supervisor"),
    "colleague": ("同事 搭档", "coworker colleague teammate"),
    "report": ("下属 手下", ""),
    "client": ("客户 甲方", "client customer"),
    "contact": ("对接人 联系人", "contact"),
    "landlord": ("房东", "landlord landlady"),
    "tenant": ("租客 房客", "tenant"),
    "doctor": ("医生 大夫", "doctor physician"),
    "dentist": ("牙医", "dentist"),
    "therapist": ("心理医生 咨询师", "therapist counselor counsellor"),
    "teacher": ("老师 班主任", "teacher tutor"),
    "coach": ("教练", "coach trainer"),
    "advisor": ("顾问", "advisor adviser consultant"),
    "mentor": ("导师", "mentor"),
    "roommate": ("室友 舍友", "roommate flatmate housemate"),
    "neighbor": ("邻居", "neighbor neighbour"),
    "lawyer": ("律师", "lawyer attorney"),
    "accountant": ("会计", "accountant"),
    "agent": ("中介", "agent realtor"),
    "nanny": ("保姆", "nanny babysitter"),
    "vet": ("兽医", "vet veterinarian"),
}
_ROLE_ZH = sorted(((w, r) for r, (zh, _) in _ROLES.items() for w in zh.split()), key=lambda t: -len(t[0]))
_ROLE_EN = {w: r for r, (_, en) in _ROLES.items() for w in en.split()}
_ROLE_WORDS = frozenset(w for w, _ in _ROLE_ZH) | frozenset(_ROLE_EN)


@lru_cache(maxsize=65_536)
def roles(content: str) -> frozenset[str]:
    """The roles ``content`` names: role words (:data:`_ROLES`; English whole words, plural 's' allowed; Chinese
    as written, outside the person names of :func:`memory_engine.text.zh_names`, so 刘经理 names a person, not a
    manager) and kinship terms (relative ids, :func:`memory_engine.text.relatives`)."""

    out = {r for w in re.findall(r"[a-z]+", content.lower()) if (r := _ROLE_EN.get(w[:-1] if w.endswith("s")
                                                                                   and w[:-1] in _ROLE_EN else w))}
    if _CJK.search(content):
        rest = content
        for i, j in reversed(zh_person_names(content)):
            rest = rest[:i] + " " * (j - i) + rest[j:]
        for w, r in _ROLE_ZH:
            if w in rest:
                out.add(r)
                rest = rest.replace(w, " ")
    return frozenset(out) | relatives(content)


def _surname_form(name: str) -> str | None:
    """The surname of a Chinese surname form (:func:`memory_engine.text.zh_names`: 老刘, 小刘, 刘总, 刘经理 ->
    刘), else None."""

    if name not in zh_names(name):
        return None
    return name[1] if name[0] in "老小" and len(name) == 2 else name[0]


def zh_surname(name: str) -> str:
    """The surname of a Chinese person word: of a surname form (老刘, 刘总 -> 刘), else its first one or two
    characters (a compound surname: 欧阳娜娜 -> 欧阳)."""
    sur = _surname_form(name)
    if sur is not None:
        return sur
    return name[:2] if name[:2] in _ZH_COMPOUND_SURNAMES else name[:1]


def same_person(a: str, b: str) -> bool:
    """Whether person words ``a`` and ``b`` (as :func:`people_of` gives them) may name one person: equal, an
    English first name and a full name that starts with it, or a Chinese full name and a surname form of its
    surname ('刘建国' / '刘总'). Two surname forms are one person only when equal: '小刘' and '刘经理' are two
    people as often as one (eval suite names-and-chains)."""
    if a == b:
        return True
    if not (_CJK.match(a) and _CJK.match(b)):
        return a.split()[0] == b.split()[0] if a and b else False
    sa, sb = _surname_form(a), _surname_form(b)
    if (sa is None) == (sb is None):
        return False
    full, sur = (b, sa) if sa is not None else (a, sb)
    return sur is not None and full.startswith(sur) and 2 <= len(full) <= 4


@lru_cache(maxsize=65_536)
def people_of(content: str) -> frozenset[str]:
    """The people ``content`` names, one word each: Chinese surname forms (老周, 张总, 小马: zh_names) and person
    words (:func:`person_names`), role and kinship words left out; a person word inside a surname form or a full
    name ('刘总' of '刘总', '建国' of '刘建国') is not a second person."""

    forms = set(zh_names(content))
    surnames = name_settings().surnames
    # a Chinese person word opens with a surname (jieba's person tag also falls on 过敏, 柯基); an English one
    # may open the sentence ('Priya is vegan'), where person_names leaves capitals alone: a single-word entity
    # there counts
    words = {w for w in person_names(content) if not _CJK.match(w) or w[0] in surnames}
    first = re.match(r"\s*([A-Z][a-z]+)\b", content)
    if first and first.group(1) not in _NOT_GIVEN and first.group(1).lower() in entities(content):
        words.add(first.group(1).lower())
    words = {w for w in words if w not in _ROLE_WORDS and not relatives(w)}
    out = set(forms)
    for w in sorted(words, key=len, reverse=True):
        if not any(w in o or o in w for o in out):
            out.add(w)
    return frozenset(out)


def _role_spans(content: str, asked: frozenset[str]) -> list[tuple[int, int]]:
    """(start, end) of the words in lower-cased ``content`` that name a role of ``asked`` (role words and
    kinship words, :func:`roles`)."""

    low = content.lower()
    words = [w for w, r in _ROLE_ZH if r in asked] + [w for w, r in _ROLE_EN.items() if r in asked] + [
        w for w, ids in _KIN.items() if ids & asked]
    out: list[tuple[int, int]] = []
    for w in words:
        pat = re.escape(w.lower()) if _CJK.match(w) else rf"\b{re.escape(w.lower())}s?\b"
        out.extend(m.span() for m in re.finditer(pat, low))
    return out


def introduces(content: str, person: str, asked: frozenset[str], window: int) -> bool:
    """Whether ``content`` names ``person`` in a role of ``asked``: the person word and a role word are at most
    ``window`` content terms apart ('my manager is Priya', '我直属领导是刘建国', '小陈是我老婆的表妹'), not a name
    further along the sentence ('my wife grew up by the sea in Cascais')."""

    low = content.lower()
    spots = [m.span() for m in re.finditer(re.escape(person.lower()), low)]
    for a0, a1 in _role_spans(content, asked):
        for b0, b1 in spots:
            gap = low[a1:b0] if a1 <= b0 else low[b1:a0] if b1 <= a0 else ""
            if len(content_terms(gap)) <= window:
                return True
    return False


def role_referents(query: str, memories: list[tuple[str, float]],
                   window: int = 1) -> tuple[frozenset[str], frozenset[str]]:
    """(referent, others) for the roles ``query`` names (:func:`roles`), from ``memories`` ((content, created_at)
    pairs): a memory that names exactly one person, at most ``window`` content terms from a role word of the
    query (:func:`introduces`), introduces that person in the role ('我直属领导是刘建国', 'my manager is Priya now'); the newest introduction holds the role (a changed manager),
    the people of the earlier ones in a role it holds too are ``others`` (the other person in the same role; a
    query word of several relatives, 'my siblings', asks about people in different ones). Both empty when the
    query names no role or no memory introduces anyone in it."""
    asked = roles(query)
    if not asked:
        return frozenset(), frozenset()
    intros: list[tuple[float, str, frozenset[str]]] = []
    for content, created in memories:
        people = people_of(content)
        if len(people) == 1 and introduces(content, next(iter(people)), asked, window):
            intros.append((created, next(iter(people)), roles(content) & asked))
    if not intros:
        return frozenset(), frozenset()
    intros.sort(key=lambda x: (x[0], x[1]))
    _, ref, held = intros[-1]
    # an earlier holder of the same role: a word naming several relatives ('siblings', 'kids') asks about each,
    # and the brother introduced last does not displace the sister
    return frozenset({ref}), frozenset(p for _, p, r in intros[:-1] if not same_person(p, ref) and r & held)
