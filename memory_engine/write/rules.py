"""Rule-based write decisions: chit-chat / one-off command rejection, marker
detection, importance scoring and memory-type classification.

Seed 000 says these need no model: keywords and regular expressions, in
Chinese and English. All functions are pure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..config import WriteSection
from ..models import MemoryType
from ..text import content_terms
from .noise import noise_reason

_PUNCT = re.compile(r"[\s\W_]+", re.UNICODE)

CHIT_CHAT = frozenset(
    """ok okay k kk yes no yep nope sure thanks thank you thx ty cool nice great good fine alright hi hello hey bye
    goodbye lol haha hmm yeah right got it noted sounds good good morning good night np welcome""".split()
) | frozenset(
    {"thank you", "got it", "sounds good", "good morning", "good night", "see you", "no problem", "you're welcome",
     "好", "好的", "好吧", "嗯", "嗯嗯", "哦", "哦哦", "谢谢", "谢谢你", "多谢", "感谢", "哈哈", "哈哈哈", "呵呵", "可以",
     "行", "行吧", "收到", "明白", "明白了", "知道了", "好嘞", "没问题", "你好", "您好", "早上好", "晚安", "再见", "拜拜",
     "对", "是的", "不错", "厉害", "牛", "ok的", "好滴", "了解"}
)

_CHIT_CHAT_NORMALISED = frozenset(_PUNCT.sub("", c.lower()) for c in CHIT_CHAT)

_ONE_OFF = [
    re.compile(p, re.IGNORECASE)
    for p in (
        r"^(please\s+)?(check|tell me|what'?s|what is|show me)\s+(the\s+)?(today'?s\s+)?(weather|time|date)\b",
        r"^(please\s+)?(set|start)\s+(a\s+|an\s+)?(timer|alarm|reminder)\b",
        r"^(please\s+)?(what time is it|what day is it)",
        r"^(please\s+)?(turn|switch)\s+(on|off)\s+the\b",
        r"^(please\s+)?(translate|calculate|convert)\b(?=.{0,40}$)",  # the object follows (one_off_command)
        r"^(帮我|请|麻烦)?(查|看|搜)(一下|下)?(今天|明天|现在)?的?(天气|时间|日期|几点)",
        r"^(帮我|请)?(定|设|设置)(一个|个)?(闹钟|计时器|定时器|提醒)",
        r"^(现在|今天)(几点|星期几|周几|几号)",
        r"^(帮我|请|麻烦你?)?(把|将)?.{0,20}?(翻译|计算|算一下|换算)(成|为|一下)",  # 帮我把这句话翻译成英文
        r"^(帮我|请|麻烦你?)(翻译|计算|算一下|换算)|^(翻译|计算|换算)(一下|下)",  # not 翻译行业峰会在上海
        r"^(帮我|请)?(打开|关闭|关掉)(一下)?(灯|空调|音乐)",
    )
]

PREFERENCE = re.compile(
    r"偏好|喜欢|不喜欢|讨厌|爱吃|爱喝|不要|别给我|别再|不想|习惯|一般用|总是|从不|默认|过敏|忌口|"
    r"\b(prefer\w*|like|likes|liked|love|loves|loved|hate|hates|dislike\w*|don'?t|do not|never|always|"
    r"favou?rite\w*|allergic|usually|default|avoid\w*|can'?t stand|enjoy\w*|want|wants)\b",
    re.IGNORECASE,
)
DECISION = re.compile(
    # commitments and plans; no verb of one data set's sentences ('准备去参加', '要参加' were MemDaily's
    # '我将要参加X' shape: the same plan said '要去参加' scored lower, issue 16)
    r"结论|决定|确认|定了|敲定|选定|同意|将要|打算|计划|报名了|约好|"
    r"\b(decided|decision|confirmed|confirm|agreed|settled|chose|chosen|will attend|i'?m going to|plan(ning)? to|"
    r"signed up|booked|scheduled)\b",
    re.IGNORECASE,
)
#: Markers that say outright that something said before was wrong or has changed (regex
#: alternatives, matched case-insensitively; English ones at a word start). The one list both
#: :data:`CORRECTION` (may this text correct anything?) and
#: :data:`memory_engine.write.intents.EXPLICIT_CORRECTION` (does it say so outright?) are built
#: from: an admitted slip ('说错了', 'my mistake') that only the explicit pattern knew never asked
#: which memory the correction names.
CHANGE_MARKERS_ZH: tuple[str, ...] = (
    "更正", "纠正", "改为", "改成", "换成", "改用", "其实是", "应该是", "搞错", "说错", "记错", "弄错", "写错", "不再",
)
CHANGE_MARKERS_EN: tuple[str, ...] = (
    "correction", r"my (?:mistake|bad)\b", "i meant", r"switch(?:ed)? to", "no longer", "not anymore", "scratch that",
    r"that'?s wrong", "i was wrong",
    # the admitted slips of 说错 / 记错 / 搞错 ('sorry I got that wrong earlier', 'I misspoke', 'I mixed them up')
    r"got (?:that|it|this|those|the \w+) wrong", "i misspoke", "i was mistaken", r"mixed (?:that|it|them|those) up",
)
#: words that may mark a correction but are ordinary language too ('不要', 'actually', "don't", 'cancel'):
#: only CORRECTION counts them (write/intents.correction_strength calls such a text 'weak')
_WEAK_MARKERS_ZH = ("不要", "不喜欢", "取消", "不对", "别再", "别给我", "别推")
_WEAK_MARKERS_EN = ("don'?t", "do not", "instead", "change to", "changed to", "actually", "cancel", "cancelled",
                    "canceled", "stop")
CORRECTION = re.compile(
    "|".join((*CHANGE_MARKERS_ZH, *_WEAK_MARKERS_ZH)) + r"|\b(" + "|".join((*CHANGE_MARKERS_EN, *_WEAK_MARKERS_EN)) + r")\b",
    re.IGNORECASE,
)
#: additive focus particles, zh and en (a closed class: Quirk et al. 1985, "A Comprehensive Grammar of the
#: English Language" §8.116 additive subjuncts also / too / as well / either; 现代汉语八百词 也 / 还有 / 另外 / 此外 /
#: 同时; the existential 又多 / 又添 / 新添 / 多了一 'one more'): the statement adds a value beside the earlier
#: ones ('I also started piano', '家里又多了一只布偶', 'and Wednesday too', '周三也去'), it replaces none. The one list
#: both the change links (write/intents.adds_value: no newer value) and the self-repairs (write/repair.py: no
#: repair) read. 'too' and 'as well' count only at the end of a clause ('I play tennis too'), not as degree words
#: ('too sweet'); 还 alone is left out: 还是 ('还是周四吧', "Thursday after all") is a repair.
ADDITIVE = re.compile(
    r"(?<![A-Za-z'])(?:also|another|plus|besides|either|additionally|in addition|as well as)(?![A-Za-z'])|"
    r"(?<![A-Za-z'])(?:too|as well)\s*(?:[,.;!?，。；！？]|$)|"
    r"也|还有|另外|此外|以及|再加上|同时|又多|又添|新添|多了一",
    re.IGNORECASE,
)
NEGATION = re.compile(r"不|没|别|无|非|\b(not|no|never|don'?t|doesn'?t|didn'?t|won'?t|isn'?t|cannot|can'?t)\b", re.IGNORECASE)
UNCERTAIN = re.compile(
    r"也许|可能|大概|或许|好像|估计|不确定|说不定|要不|试试|是不是|吗[？?]?$|呢[？?]?$|[？?]\s*$|"
    r"\b(maybe|perhaps|might|possibly|probably|i guess|i think|not sure|wonder|should i|what if)\b",
    re.IGNORECASE,
)
#: hedge words proper (not a bare question): "maybe I'd like X" is no preference yet (seed 002)
HEDGE = re.compile(
    r"也许|可能|大概|或许|好像|估计|不确定|说不定|要不|试试|"
    r"\b(maybe|perhaps|might|possibly|probably|i guess|not sure|what if)\b",
    re.IGNORECASE,
)


#: sentence ends: 。！？；!?; and newlines, and a full stop followed by a space or the end ("3.5 kg" stays whole)
_SENTENCE_END = re.compile(r"[。！？；!?;\n]+|\.(?=\s|$)")


def sentences(text: str) -> list[str]:
    """The text's sentences (stripped, empty ones dropped)."""
    return [s.strip() for s in _SENTENCE_END.split(text) if s.strip()]


#: an approximate quantity ('大概四十分钟', 'about 40 minutes') is a measurement, not a hedge
_APPROX_QUANTITY = re.compile(
    r"(?:大概|大约|差不多)(?=\s*(?:\d|[一二两三四五六七八九十百千万半几]+\s*(?:个|分钟|小时|天|周|星期|月|年|公里|米|"
    r"块|元|万|岁|点|次|斤|公斤|人|页|遍)))|\b(?:about|around|roughly|approximately)\s+(?=\d)",
    re.IGNORECASE,
)


def without_approximations(text: str) -> str:
    """``text`` without approximation words before a quantity ('大概四十分钟' -> '四十分钟')."""
    return _APPROX_QUANTITY.sub("", text)


def hedged(text: str, sig: Signals, clauses: int = 0) -> bool:
    """An uncertain text with a hedge word proper ('Maybe I should try yoga', '也许我下个月去杭州',
    '要不试试游泳课'): it waits in the candidate pool (seed 002). A bare question or an
    'I think' opinion is not a hedge and is kept as an episodic memory (issue 16).

    A hedge governs its sentence: a text with another sentence that states something
    without any uncertainty marker (a review: 'The Siemens washer is quiet and easy to
    use. Maybe a bit big for a small flat.') is a statement with a hedged remark, kept
    (as an episodic memory, never curated), not a guess as a whole. A message of at least ``clauses``
    clauses (``write.hedge_clauses``; 0 = off) is read clause by clause: in a long ramble one 'I guess' governs
    its clause, not the diagnosis told two clauses before it."""
    if not (sig.uncertain and HEDGE.search(without_approximations(text))):
        return False
    parts = sentences(text)
    by_clause = [c.strip() for c in _CLAUSE_END.split(text) if c.strip()]  # the sentences' clauses
    if clauses and len(by_clause) >= clauses:
        parts = by_clause
    return not any(not UNCERTAIN.search(p) and content_terms(p) for p in parts) if len(parts) > 1 else True


PROCEDURAL = re.compile(
    r"步骤|流程|第一步|先.+再|每次.+都|规则|操作方法|\b(step \d|steps|workflow|procedure|always (run|do|use)|"
    r"first .+ then|how to)\b",
    re.IGNORECASE,
)
FACTUAL = re.compile(
    r"我是|我叫|我住|我在.+(工作|上班|读书)|我的.+是|我有|我家|生日|地址|电话|年级|岁|"
    r"\b(i am|i'm|my name|i live|i work|my .+ is|my .+ are|i have|birthday|address|years old|grade)\b",
    re.IGNORECASE,
)
IDENTIFIER = re.compile(r"(?=[A-Za-z0-9_-]*\d)(?=[A-Za-z0-9_-]*[A-Za-z])[A-Za-z0-9][A-Za-z0-9_-]{3,}|\d{5,}|尾号\d{3,}|v\d+\.\d+")


#: marker words that say *how* the user feels, not *what* about: they must not make two
#: memories "related" for supersession ("我不喜欢鼠标" is not about "我喜欢 MacBook")
MARKER_TERMS = frozenset(
    "喜欢 不喜欢 讨厌 偏好 不要 别 不想 想 要 习惯 默认 总是 从不 改为 改成 换成 改用 更正 取消 不再 其实 应该 决定 确认 "
    "prefer like love hate dislik want don't never alway usual default instead chang switch actual longer cancel stop "
    "decid confirm".split()
)
_NUMBER = re.compile(r"\d+(?:\.\d+)?")


def numbers(text: str) -> frozenset[str]:
    """Every number in the text ('82 kg' vs '78 kg' must never merge)."""
    return frozenset(_NUMBER.findall(text))


def correction_scope(text: str) -> str:
    """The part of a correction that names what changes: the text from the first
    correction marker on ('写代码我喜欢用 HHKB，不喜欢鼠标' -> '不喜欢鼠标'), so an
    older memory is related only when it mentions what is being corrected."""
    m = CORRECTION.search(text)
    return text[m.start():] if m else text


def normalise(text: str) -> str:
    """Lower-case, punctuation and spaces removed: the form chit-chat and dedup compare."""
    return _PUNCT.sub("", text.lower())


#: clause ends inside a message: the sentence ends and commas ('check the weather in Tokyo, I'm flying there
#: Friday'); a colon stays inside its clause ('6:30'), a full stop only before a space or the end ('3.5 kg')
_CLAUSE_END = re.compile(r"[。！？；!?;\n，,、]+|\.(?=\s|$)")


def _worded_terms(text: str) -> int:
    """Content terms of ``text`` without a digit: the times and counts of a command's object
    ('10 minutes', '6:30', '3rd') say when, not what."""
    return sum(1 for t in content_terms(text) if not any(ch.isdigit() for ch in t))


def one_off_command(text: str, object_terms: int) -> bool:
    """A one-off command whose whole message is the command (issue 16: losing the user's words is
    the worst bug). The text matches a command of :data:`_ONE_OFF` and says nothing else: every
    other clause is noise (:func:`memory_engine.write.noise.noise_reason`: 'thanks', 'please'), and the
    command's own object, the text after the command words up to the clause end, has fewer than
    ``object_terms`` (``write.one_off_object_terms``) content terms without a digit. So 'set a timer for 10
    minutes' and '帮我查一下今天的天气' are commands, while 'check the weather in Tokyo, I'm flying there
    Friday', '帮我定个闹钟，明天早上六点要赶飞机去成都' and 'set a reminder for my mom's birthday on
    June 3rd' carry a statement and are kept (as episodic memories, curated by importance)."""
    stripped = text.strip()
    for rx in _ONE_OFF:
        m = rx.search(stripped)
        if m:
            break
    else:
        return False
    clauses = _CLAUSE_END.split(stripped[m.end():])
    if any(c.strip() and noise_reason(c.strip()) is None for c in clauses[1:]):
        return False  # a statement after the command rides on it
    return _worded_terms(clauses[0]) < object_terms


def reject_reason(text: str, cfg: WriteSection | None = None) -> str | None:
    """``empty``, ``chit_chat``, ``no_content`` (true noise, :func:`memory_engine.write.noise.noise_reason`),
    ``one_off_command`` (:func:`one_off_command` with ``write.one_off_object_terms`` of ``cfg``, None =
    the defaults) or None (keep)."""
    stripped = text.strip()
    noise = noise_reason(stripped)
    if noise:
        return noise
    low = re.sub(r"[\s!！。.,，~～?？]+$", "", stripped.lower()).strip()
    if low in CHIT_CHAT or normalise(low) in _CHIT_CHAT_NORMALISED:
        return "chit_chat"
    if one_off_command(stripped, (cfg or WriteSection()).one_off_object_terms):
        return "one_off_command"
    return None


@dataclass(frozen=True)
class Signals:
    """Which rule markers a text carries."""

    preference: bool
    decision: bool
    correction: bool
    uncertain: bool
    procedural: bool
    factual: bool
    identifier: bool


#: "like" as a preposition or comparison says nothing about a preference ("feels like", "looks like a")
_LIKE_NOT_PREFERENCE = re.compile(
    r"\b(?:feel|feels|felt|feeling|look|looks|looked|looking|sound|sounds|sounded|seem|seems|seemed|just|more|much|"
    r"something|anything|nothing|things?)\s+like\b",
    re.IGNORECASE,
)


def signals(text: str) -> Signals:
    return Signals(
        preference=bool(PREFERENCE.search(_LIKE_NOT_PREFERENCE.sub(" ", text))),
        decision=bool(DECISION.search(text)),
        correction=bool(CORRECTION.search(text)),
        uncertain=bool(UNCERTAIN.search(without_approximations(text.strip()))),
        procedural=bool(PROCEDURAL.search(text)),
        factual=bool(FACTUAL.search(text)),
        identifier=bool(IDENTIFIER.search(text)),
    )


def importance(text: str, sig: Signals, cfg: WriteSection, has_fact: bool = False) -> float:
    """Importance in [0, 1] (seed 000, section 'write pipeline'):

    base 0.5; +fact_bonus (0.3) for a structured fact or factual statement;
    +preference_bonus (0.3) for preference/constraint markers;
    +decision_bonus (0.2) for decision markers; +correction_bonus (0.2) for
    corrections without a preference marker; +identifier_bonus (0.1) for
    identifiers; -short_penalty (0.3) below short_length (4) characters;
    -uncertainty_penalty (0.2) for questions/guesses/hedges (seed 002); clipped.
    """
    s = cfg.importance_base
    if has_fact or sig.factual:
        s += cfg.fact_bonus
    if sig.preference:
        s += cfg.preference_bonus
    if sig.decision:
        s += cfg.decision_bonus
    if sig.correction and not sig.preference:
        s += cfg.correction_bonus
    if sig.identifier:
        s += cfg.identifier_bonus
    if len(text.strip()) < cfg.short_length:
        s -= cfg.short_penalty
    if sig.uncertain:
        s -= cfg.uncertainty_penalty
    return round(min(1.0, max(0.0, s)), 4)


def classify(sig: Signals, has_fact: bool, hint: MemoryType | None) -> MemoryType:
    """Memory type: the caller's hint wins; facts -> fact; rules/workflows ->
    procedural; preferences, decisions, factual statements -> semantic
    (only certain statements, seed 002); everything else -> episodic."""
    if hint is not None:
        return hint
    if has_fact:
        return MemoryType.FACT
    if sig.procedural and not sig.uncertain:
        return MemoryType.PROCEDURAL
    if (sig.preference or sig.decision or sig.factual) and not sig.uncertain:
        return MemoryType.SEMANTIC
    return MemoryType.EPISODIC


RECOMMEND_INTENT = re.compile(
    r"推荐|建议|推一下|有什么(好|新|值得)|有啥|适合我|\b(recommend|recommendation|suggest|suggestion|any (new|good)|"
    r"what should i|ideas for|what to (watch|read|play|buy|eat|learn))",
    re.IGNORECASE,
)


def is_constraint(text: str, sig: Signals) -> bool:
    """A negated preference ('don't recommend games', '别给我推游戏') is a constraint: it
    blocks a scope for every later recommendation (seed 001 keeps constraints apart from preferences)."""
    return sig.preference and polarity(text) and not sig.uncertain


def polarity(text: str) -> bool:
    """True when the text carries a negation (used so 'I like X' and 'I don't like X' never merge)."""
    return bool(NEGATION.search(text))


#: a state the text places in the past, over ('used to', 'previously', '以前', '曾经'): closed-class aspect
#: words, zh and en. '我以前在上海住过三年' and '我现在住在上海' share every content term of the shorter one
#: (the time words are stop words), yet one is over and the other holds now: they are not one memory.
PAST_ASPECT = re.compile(
    r"以前|之前|曾经|过去|原来|从前|当年|那时候?|\b(used to|previously|formerly|back then|back in|in the past|no longer|"
    r"anymore|any more|years? ago|once was|was once)\b",
    re.IGNORECASE,
)


def past_aspect(text: str) -> bool:
    """True when the text says its state is over (:data:`PAST_ASPECT`); a past and a present statement of
    the same terms never merge as duplicates."""
    return bool(PAST_ASPECT.search(text))
