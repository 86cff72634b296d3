"""Intents a user statement carries for the store itself (issue 16):

* **forget**: "forget that I ...", "please delete what I said about X",
  "别记...了", "忘掉...", "把我的地址删了" -> :func:`forget_target` returns the
  words naming what to forget (possibly empty: "forget what I just said");
  the engine archives what those words name and does not store the instruction.
* **correction strength**: an *explicit* correction ("更正", "改成", "其实是",
  "I meant", "changed to", "no longer", "not anymore", "switched to") may
  retire the memory it names; a *weak* marker ("cancel", "actually",
  "don't", "不要", "取消", "改天") is ordinary language far more often than a
  correction ("the picnic got cancelled because of the rain"), so it only
  retires a memory it contradicts outright (see :mod:`memory_engine.write.correction`).

Pure functions over the (already redacted) text.
"""

from __future__ import annotations

import re
from difflib import SequenceMatcher

from ..text import asks, content_terms, ends_as_question, pos_tags, starts_with_verb
from .rules import ADDITIVE, CHANGE_MARKERS_EN, CHANGE_MARKERS_ZH

# ---- forget requests, recognised by structure (issue 16) -------------------------------------
# A forget request is a clause addressed to the assistant whose verb asks it to drop, or not to
# keep, something said: (1) a forget / erase verb in the imperative: it opens the clause once
# greetings, politeness and request frames ("could you", "I'd rather you", "麻烦", "帮我") are set
# aside, so a first-person subject ("I always forget my keys", "我忘了带伞") makes it a report;
# (2) a keep / remember / store verb negated in the imperative ("don't keep", "stop storing",
# "别记", "不用存"). Verbs that also name ordinary actions ("delete", "remove", "删") need an object
# that is something said or stored ("what I said", "my salary info", "那条记录"). The target is the
# clause's object with the pointer words ("what I said about", "那条", "的事") removed.

_EN_SPLIT = re.compile(r"[,;.!?\n]+|\s+-+\s+")
_EN_LEAD = re.compile(
    r"^(?:(?:hey|hi|ok(?:ay)?|so|and|also|oh|um+|uh+|hmm+|well|actually|btw|by the way|wait|sorry|nvm|honestly|"
    r"frankly|tbh|look|listen|never ?mind|scratch that(?!\s+\w)|on second thought|one more thing|do me a favou?r(?: and)?)\b[\s,]*)+", re.I)
#: request frames put before the verb; what remains starts with the verb itself
_EN_FRAME = re.compile(
    r"^(?:(?:please|pls|plz|kindly|just|now|then)\s+)*"
    r"(?:(?:could|can|would|will)\s+(?:you|u)\s+|i(?:'d| would)\s+(?:like|love|prefer|want)\s+(?:you|u)\s+to\s+|"
    r"i\s+(?:want|need)\s+(?:you|u)\s+to\s+|(?:you|u)\s+(?:can|should|may|could|might)\s+|"
    r"i(?:'d| would)\s+rather\s+(?:you|u)\s+(?!not\b)|(?P<neg>(?:i\s+)?(?:really\s+)?(?:don'?t|do not)\s+want\s+(?:you|u)\s+"
    r"(?:to\s+)?|i(?:'d| would)?\s*(?:prefer|rather)\s+(?:(?:if|that)\s+)?(?:you|u)\s+(?:did\s+)?not\s+(?:to\s+)?|"
    r"(?:you|u)\s+(?:don'?t|do not)\s+(?:need|have)\s+to\s+|(?:there'?s\s+)?no need (?:for (?:you|u) )?to\s+)|"
    r"let'?s\s+)?(?:(?:please|pls|plz|kindly|just|also)\s+)*", re.I)
_EN_KEEP_NEG = re.compile(
    r"^(?P<negator>don'?t|dont|do not|didn'?t|did not|not|never|stop|quit|no longer)\s+(?:(?:to|please|pls|ever|even|"
    r"bother(?: to)?)\s+)*(?P<verb>remember(?:ing)?|memori[sz](?:e|ing)|keep(?:ing)?(?: track of)?|stor(?:e|ing)|"
    r"sav(?:e|ing)|record(?:ing)?|log(?:ging)?|track(?:ing)?|retain(?:ing)?|hold(?:ing)? on to|not(?:e|ing)(?: down)?|"
    r"writ(?:e|ing) down)\b(?P<rest>.*)$", re.I)
_EN_DROP = re.compile(r"^(?P<verb>erase|delete|remove|drop|wipe|clear|discard|purge|scrub|scratch|scrap|nix|strike|unlearn|ditch|toss|lose|"
                      r"ignore|disregard|"
                      r"get rid of|throw (?:away|out)|forget about)\b(?P<rest>.*)$", re.I)
_EN_FREE = ("unlearn", "forget about")
_EN_NOT_FORGET = frozenset({"forgot", "forgotten", "forgets", "forgetting", "forgetful", "forge", "forged", "forger"})
_EN_WORD = re.compile(r"^([a-z']+)\b(.*)$", re.I | re.DOTALL)
#: the object is something said or stored (not "the batteries", not "cash at home")
_EN_MEMORY_OBJECT = re.compile(
    r"\b(?:i (?:just |earlier |once )?(?:said|told you|mentioned|shared|wrote)|memor(?:y|ies)|notes?|records?|"
    r"info(?:rmation)?|details?|data|stuff|(?:everything|anything|all|something) (?:about|regarding|on)|"
    r"(?:what|everything|anything|all) (?:you (?:know|have|saved|stored|remember|noted|wrote down))|"
    r"from your (?:memory|notes)|about (?:me|my)\b)\b|^\s*(?:that|this|it|those|these|them|what|whatever|"
    r"everything|anything)\b", re.I)
#: an object that is a clause ("don't remember where I parked", "forget to call") is not a target
_EN_NOT_TARGET = re.compile(r"^\s*(?:to|where|when|how|why|if|whether|me|us|yourself|going|quiet|in mind)\b", re.I)
#: ...unless the request is addressed ("please", "could you") or asks to cease ("stop remembering"): then a
#: question-word clause about the speaker names one of their details ("stop remembering where I work")
_EN_OWN_DETAIL = re.compile(r"^\s*(?:where|what|when|who|how (?:much|many|old|tall|far))\s+(?:i|i'm|i've|my|we|we're|our)\b",
                            re.I)
_EN_CEASE = ("stop", "quit", "no longer")
#: an erase verb whose source is not what was said or stored ('remove my name from the list', 'scratch my name off
#: the board') acts on that thing, not on a memory
_EN_OTHER_SOURCE = re.compile(r"\b(?:from|off|out of)\s+(?!(?:your|the|my|ur)?\s*(?:memory|memories|notes?|records?|mind|"
                              r"head|files?|profile)\b)\w", re.I)
#: "(I) don't want that saved", "don't want my address stored": a negated wish with a keep verb's participle
_EN_WANT_NOT = re.compile(
    r"^(?:i\s+)?(?:really\s+)?(?:don'?t|do not)\s+want\s+(?!(?:you|u)\b)(?P<obj>.+?)\s+(?:to be\s+|being\s+)?"
    r"(?:saved|stored|kept|remembered|recorded|logged|memori[sz]ed|written down|on file)\b\s*(?P<rest>.*)$", re.I)
_EN_POINTER = re.compile(
    r"^\s*(?:(?:everything|anything|all|any|what|whatever|that|this|those|these|the|some|stuff|things?|info(?:rmation)?"
    r"|details?|bits?|parts?|facts?|memor(?:y|ies)|notes?|last|previous|first|thing|one|message|you know|"
    r"i\s+(?:just\s+|earlier\s+|once\s+|before\s+)?(?:said|told you|mentioned|shared|wrote)|just now|earlier|"
    r"before|to you|about|regarding|on|of)\b[\s,]*)+", re.I)
_EN_TAIL = re.compile(r"(?:[\s,]+(?:please|pls|plz|thanks|thank you|for me|from (?:your |the )?(?:memory|notes)|thing|"
                      r"ok\??|info(?:rmation)?|details?|data|stuff|part|bit|any ?more|either|too))+\s*$", re.I)
#: ... unless it dates what was said ('forget what I said today about my ex')
_EN_SAID_BEFORE = re.compile(r"\b(?:said|told (?:you|u)|mentioned|shared|wrote|asked|typed)\s+(?:to (?:you|u)\s+)?$", re.I)
#: a time that bounds the request to one occasion ('tonight', 'this time', 'for a bit', 'just this once'): an override
#: of a standing preference for now, not a forget
_EN_FOR_NOW = re.compile(r"\b(?:tonight|today|this (?:time|once|evening|weekend|round|trip)|for (?:now|today|tonight|once|"
                         r"a (?:bit|while|moment|sec(?:ond)?|minute|day)|the (?:moment|day|evening|night|weekend))|"
                         r"just (?:this once|for)|for this (?:one|order|trip|meal))\b", re.I)
#: 'pretend I never said it', 'act like I didn't mention that': withdraw what was said (the topic, if any, stands beside)
_EN_UNSAY = re.compile(r"^(?:(?:just|please|pls|and)\s+)*(?:pretend|act (?:like|as if)|assume)\s+(?:that\s+)?i\s+"
                       r"(?:never|didn'?t|did not)\s+(?:said|say|mention(?:ed)?|told you|tell you|bring|brought)\b"
                       r"(?:\s+(?:it|that|this|anything|up|(?:it|that) up))*\s*$", re.I)
_EN_EMPTY = re.compile(r"^(?:it|this|that|them|those|these|one|about it|that one|this one|all that)?$", re.I)

_ZH_SPLIT = re.compile(r"[，,。！!？?；;~～\n]+")
_ZH_KEEP_NEG = re.compile(r"(?:别|不要|不用|不必|无需|甭|不需要|用不着|没必要)(?:再|去|帮我|给我|替我)*"
                          r"(?:记住|记着|记下|记录|记|存下|存着|保存|保留|留着|存)(?![错得性忆账者者])")
_ZH_FORGET = re.compile(r"(?:忘掉|忘记掉|忘记|忘了|忘)")
_ZH_DROP = re.compile(r"(?:删掉|删除|删去|删了|删一下|删|清除|清掉|清空|抹掉|抹去|去掉|移除|丢掉|撤回|收回|"
                      r"\b(?:delete|remove|erase|clear)\b)(?:\s*掉)?", re.I)
#: a first-person subject right before the verb makes a report ("我又忘了", "我不用记这些")
_ZH_SELF_BEFORE = re.compile(r"(?<![帮给替让叫跟和对把将])(?:我|我们|俺|咱们?)(?:也|都|就|还|又|总|老|老是|总是|经常|常常|已经|刚|刚刚|可以|会)*$")
_ZH_NOT_BEFORE = re.compile(r"(?:别|不要|不能|不会|没|没有|千万别|不许|可别)$")  # 别忘了 = don't forget (to)
_ZH_DIRECT = re.compile(r"请|麻烦|帮我|帮忙|你|给我|替我|拜托|把|将|吧$|一下|掉")
_ZH_MEMORY_OBJECT = re.compile(r"关于|有关|说的|说过|讲的|讲过|提到|提过|告诉你|记忆|记录|信息|资料|那条|这条|的事|上一条|"
                               r"那句|这句|刚才|刚刚")
#: 不要把X记下来 / 别把X存起来: a negated keep verb with its object before it
_ZH_KEEP_NEG_BA = re.compile(r"(?:别|不要|不用|不必|无需|甭|不需要)(?:再)?(?:把|将)(?P<obj>.+?)(?:记下来|记下|记住|记着|记录下来|记录|"
                             r"存下来|存起来|保存下来|保存|存着|存|记)(?:了|啦|吧)?$")
#: 当我没说 / 就当我没说过: withdraw what was just said (the topic, if any, precedes it)
_ZH_UNSAY = re.compile(r"(?:就)?当我(?:没|没有)(?:说|讲|提)(?:过)?(?:吧|好了|哈)?$")
#: 你就当我没提过我离婚的事: the withdrawn topic after the verb, addressed to the assistant at the clause start
#: ('他当我没说过这话一样' reports what someone did)
_ZH_UNSAY_OBJ = re.compile(r"^\s*(?:你|您|那|那你|请|麻烦你?)?(?:就)?当我(?:没|没有)(?:说|讲|提)(?:过|起)?(?P<obj>.+?)(?:吧|好了|哈)?$")
#: 我不想让你记得我怀孕的事 / 我不希望你记住我的住址: the speaker's wish that the assistant not keep something
_ZH_WISH_NOT = re.compile(r"(?:不想|不希望|不愿意|不愿|不要)(?:让|叫)?你(?:再)?(?:去)?(?:记住|记得|记着|记下来|记下|记录|保存|保留|留着|存着|存)"
                          r"(?P<obj>.*)$")
#: 'delete' addressed to the assistant about the speaker's own details needs no record noun
_ZH_ADDRESSED_OWN = re.compile(r"(?:你|帮我|麻烦|请).*我的|我的.*(?:你|帮我)")
#: 把我住址删掉 / 把我的手机号删了: the object of 把 is the speaker's own detail (not a place on a device:
#: 把我电脑里的游戏删了)
_ZH_BA_OWN = re.compile(r"^(?:我|我们)(?:的)?(?![^里上中内]*[里上中内])\S{1,10}$")
_ZH_TOPIC = re.compile(r"^(?:(?:那|这)(?:条|个|些|段)?)?(?:关于|有关|至于|我说的|我说过的)|^(?:以后|今后)?(?:别|不要)再?提(?:起)?|(?:的事情?|那件事|这件事|那个事情?|这个事情?|那事|这事|那条|这条|那个|"
                       r"的信息|的记录|的话题)$")
_ZH_HEAD = re.compile(r"^(?:请|麻烦|帮我|帮忙|你|就|都|也|再|以后|今后|从现在起|从今以后|之后|算了|一下|掉|把|将|"
                      r"(?:别|不要|不用)再?提(?:起)?|"
                      r"关于|有关|至于|那个|这个|那条|这条|那些|这些|所有|全部|给我|替我|"
                      r"我(?:之前|刚才|刚刚|上次|前面)?(?:跟你)?(?:说|讲|提|告诉你)(?:过)?的?(?:那些|那个|那条)?)+")
_ZH_TAIL = re.compile(r"(?:的(?:事情?|那条|那些|记忆|记录|信息|内容|资料|话)|这件事|那件事|(?:这个|那个)(?:事情?)?|那事|这事|这条|那条|记忆|记录|"
                      r"信息|资料|的事|(?:那|这)(?:一)?(?:块|部分|段)|吧|了|啦|哦|呀|吗|哈|呢|呗|嘛|啊|一下|掉|就|都|你|也|再|请|的)+$")
_ZH_EMPTY = frozenset({"", "它", "这", "那", "这些", "那些", "刚才", "刚刚", "我刚才说", "刚才说", "我说的", "我刚才说的", "话", "那些话",
                       "那句话", "这句话", "那段话", "这段话", "上一条", "上条", "刚才那条", "刚才那句", "那段", "这段"})
_POLITE_LATIN = re.compile(r"\b(?:pls|plz|please|thx|thanks)\b", re.I)

#: an explicit correction: the change markers of the write rules (:data:`~memory_engine.write.rules.CHANGE_MARKERS_ZH`,
#: ``CHANGE_MARKERS_EN``, one list for both patterns) plus the phrasings that say so outright only in context
#: ('不对，', '不是X而是Y', 'instead of', 'moved to')
EXPLICIT_CORRECTION = re.compile(
    "|".join((*CHANGE_MARKERS_ZH, "改到", r"不对[，,。]", r"不是.{1,12}而是", "已经不")) + "|"
    r"\b(" + "|".join((*CHANGE_MARKERS_EN, r"i mean[t]?,", r"changed? (?:it |that )?to", r"any ?more\b", "instead of",
                        "rather than", "moved to", "update[d]?:")) + ")|"
    # a contrast that names the wrong value: "my city is Suzhou, not Hangzhou" (replacement, see replaced_phrase)
    r"[，,]\s*不是(?=[^。，；！？,.;!?\n]{1,12}(?:$|[。！？!?.]))|"
    r",\s*not\b(?=\s+(?!only\b|just\b|even\b|yet\b|really\b|bad\b|sure\b|too\b|to\b|that\b|always\b|final\b|confirmed\b|decided\b|fixed\b|certain\b)\w)",
    re.IGNORECASE,
)


def _en_forget_clause(clause: str) -> str | None:
    """The target of one English clause when it is a forget request ('' = names nothing), else None."""
    c = _EN_LEAD.sub("", clause.strip().replace("’", "'"))
    if _EN_UNSAY.match(c):
        return ""  # 'nvm about the ex stuff, pretend I never said it': the topic beside it is the target
    want = _EN_WANT_NOT.match(c)
    if want and not want.group("rest").strip(" ,.;:!?\"'") and (
            re.match(r"^\s*(?:my|our)\b", want.group("obj"), re.I) or _EN_MEMORY_OBJECT.search(want.group("obj"))):
        target = _EN_TAIL.sub("", _EN_POINTER.sub("", want.group("obj"), count=1)).strip(" ,.;:!?\"'")
        return "" if _EN_EMPTY.match(target) else target
    frame = _EN_FRAME.match(c)
    addressed = frame is not None and bool(frame.group(0).strip())
    if frame and frame.group("neg"):
        c = "don't " + c[frame.end():]  # "no need to remember X" = "don't remember X"
    elif frame:
        c = c[frame.end():]
    c = c.strip()
    verb, rest, free = "", "", False
    m = _EN_KEEP_NEG.match(c)
    keep_neg = m is not None
    if m:
        verb, rest = m.group("verb").lower(), m.group("rest")
        # "never keep cash at home" is a habit, "don't remember where I parked" a report: the object must be
        # something said or stored, unless the verb itself is about memory ("don't remember my salary")
        free = verb.startswith(("remember", "memori", "not", "writ", "record", "log"))
    elif (m := _EN_DROP.match(c)) is not None:
        verb, rest = m.group("verb").lower(), m.group("rest")
        free = verb in _EN_FREE
    elif (w := _EN_WORD.match(c)) is not None:
        word = w.group(1).lower()
        # 'forget' and its typos ('forgt', 'foget'), never 'forgot' / 'forgetting'
        if word not in _EN_NOT_FORGET and 4 <= len(word) <= 7 and SequenceMatcher(None, word, "forget").ratio() >= 0.8:
            verb, rest, free = "forget", w.group(2), True
    if not verb:
        return None
    if _EN_NOT_TARGET.match(rest):
        ceasing = m is not None and keep_neg and m.group("negator").lower() in _EN_CEASE
        if not ((addressed or ceasing) and _EN_OWN_DETAIL.match(rest)):
            return None
        return rest.strip(" ,.;:!?\"'")  # 'where I work': the detail it asks about
    # 'never keep cash at home' is a habit; "don't keep my card number" and 'please erase my home address' (an
    # imperative erase verb on the speaker's own detail) name it
    own = re.match(r"^\s*(?:my|our)\b", rest, re.I) is not None and (keep_neg or not _EN_OTHER_SOURCE.search(rest))
    if not free and not own and not _EN_MEMORY_OBJECT.search(rest):
        return None
    if any(not _EN_SAID_BEFORE.search(rest[: m.start()]) for m in _EN_FOR_NOW.finditer(rest)):
        # 'forget about my diet tonight, I want the best pizza', 'ignore my budget this time': an exception for one
        # occasion, not a request to drop what was said (the keto diet was archived; session 20 red-team)
        return None
    target = _EN_TAIL.sub("", _EN_POINTER.sub("", rest, count=1)).strip(" ,.;:!?\"'")
    return "" if _EN_EMPTY.match(target) else target


#: a clause naming a topic without a verb: "never mind the train thing", "about my commute", "as for the
#: 8:15 train", "that gym stuff": a topic marker before it, or a topic noun ending it
_EN_TOPIC_LEAD = re.compile(r"^\s*(?:(?:never ?mind|nvm|forget|about|regarding|re|as (?:for|to)|what i said about|"
                            r"the (?:thing|stuff|part|bit) about)\b[\s:,]*)+", re.I)
_EN_TOPIC_END = re.compile(r"\b(?:thing|things|stuff|business|matter|story|topic|part|bit)\s*$", re.I)
#: a clause with a subject and a verb is a statement, not a topic ("I'll book the hotel myself")
_EN_STATEMENT = re.compile(r"\b(?:i|i'm|i'll|i've|i'd|we|we're|we'll|you|he|she|they|it's|that's|is|are|was|were|"
                           r"will|would|can|have|has|had|do|does|did)\b", re.I)


def _en_topic(clause: str) -> str:
    """The topic a verbless clause names ('never mind the train thing' -> 'train', 'about my commute' ->
    'my commute'), '' when the clause names none or is a statement."""
    c = clause.strip().replace("’", "'")
    lead = _EN_TOPIC_LEAD.match(c)
    rest = c[lead.end():] if lead else _EN_LEAD.sub("", c)
    if not (lead or _EN_TOPIC_END.search(rest)) or _EN_STATEMENT.search(rest) or len(rest.split()) > 6:
        return ""
    t = _EN_TAIL.sub("", _EN_POINTER.sub("", rest, count=1)).strip(" ,.;:!?\"'")
    return "" if _EN_EMPTY.match(t) or not content_terms(t) else t


def _zh_clean(target: str) -> str:
    t = _POLITE_LATIN.sub("", target).strip(" ，,。.！!？?“”\"'")
    for _ in range(3):  # the head and tail words come in any order and nest ('那个…的信息')
        t = _ZH_TAIL.sub("", _ZH_HEAD.sub("", t).strip()).strip(" ，,。.！!？?")
    return "" if t in _ZH_EMPTY else t


def _token_starts(text: str) -> frozenset[int]:
    """Offsets where a word starts in ``text`` (jieba's cut, :func:`memory_engine.text.pos_tags`)."""
    out, i = set(), 0
    for word, _ in pos_tags(text):
        j = text.find(word, i)
        if j >= 0:
            out.add(j)
            i = j + len(word)
    return frozenset(out)


_ZH_SELF_BA = re.compile(r"^\s*(?:我|我们|俺)(?P<mid>[^把将的]{0,6}?)(?:把|将)")


def _zh_self_ba(before: str) -> bool:
    """Whether the speaker is the subject of a 把 phrase before the verb, with only time words and adverbs
    between ('我把文件', '我前天把聊天记录', '我前两天已经把'): what follows reports what they did."""
    m = _ZH_SELF_BA.match(before)
    if m is None:
        return False
    mid = m.group("mid").strip()
    # no noun or pronoun between them (jieba tags time words unevenly: 前两天 is an idiom to it): '我工资那条你把它'
    # is a topic and an addressee, not the speaker doing something
    return not mid or not any(tag[:1] in ("n", "r") and word != "自己" for word, tag in pos_tags(mid))


def _zh_forget_clause(clause: str) -> str | None:
    """The target of one Chinese (or mixed) clause when it is a forget request ('' = names nothing), else None."""
    c = clause.strip()
    m = _ZH_KEEP_NEG_BA.search(c)
    if m and not _ZH_SELF_BEFORE.search(c[: m.start()]):
        return _zh_clean(m.group("obj"))
    m = _ZH_UNSAY.search(c)
    if m:
        return _zh_clean(c[: m.start()])
    m = _ZH_UNSAY_OBJ.search(c)
    if m and content_terms(m.group("obj")):
        return _zh_clean(m.group("obj"))
    m = _ZH_WISH_NOT.search(c)
    if m:
        return _zh_clean(m.group("obj"))
    m = _ZH_KEEP_NEG.search(c)
    if m:
        before, after = c[: m.start()], c[m.end():]
        if _ZH_SELF_BEFORE.search(before):
            return None  # 我不用记这些: the speaker does not need to remember
        return _zh_clean(after) or _zh_clean(before)
    starts = _token_starts(c)
    for rx, destructive in ((_ZH_FORGET, False), (_ZH_DROP, True)):
        # the verb is a word of its own, not a character inside a noun (备忘录, 删除键)
        m = next((x for x in rx.finditer(c) if x.start() in starts), None)
        if not m:
            continue
        before, after = c[: m.start()], c[m.end():]
        if _ZH_SELF_BEFORE.search(before) or _ZH_NOT_BEFORE.search(before) or _zh_self_ba(before):
            return None  # 我又忘了 / 别忘了带伞 / 我把文件删了 / 我前天把聊天记录删了: a report or a reminder
        if re.match(r"^了.", after):
            return None  # 删掉了手机里的游戏: a completed action, not a request
        ba = re.search(r"(?:把|将)(?P<obj>.+)$", before)
        from_after = ba is None and bool(_zh_clean(after))
        obj = ba.group("obj") if ba else (after if from_after else before)
        own = ba is not None and _ZH_BA_OWN.match(ba.group("obj")) is not None
        if destructive and not (_ZH_MEMORY_OBJECT.search(c) or _ZH_ADDRESSED_OWN.search(c) or own):
            return None  # 把这个文件删了: a file, not something said
        if not destructive and not ba:
            if not (_ZH_DIRECT.search(c) or _ZH_MEMORY_OBJECT.search(c)):
                return None  # 今天又忘了带伞: no one is asked to do anything
            if from_after and starts_with_verb(after):
                return None  # 忘了带钥匙: forgot to do something
        return _zh_clean(obj)
    return None


#: words by which a forget request points at what was said or kept ('what I said about', 'that I', 'my info',
#: 关于…的那条, 别记, 删): a request without one that matches nothing may be a statement that only uses the verb
#: ('forget the fancy place', a restaurant named 一坐一忘), so its words are kept (write/pipeline.py)
_ADDRESSES_MEMORY = re.compile(
    r"\b(?:that|what|everything|anything|all|about|said|told|mentioned|remember\w*|sav\w*|keep\w*|kept|stor\w*|"
    r"memor\w*|info\w*|details?|delete|erase|remove|record\w*|notes?|my|please|pls|plz)\b|"
    r"关于|那条|这条|那件|这件|的事|信息|记录|记忆|记住|别记|不要记|不用记|删|说的|说过|提到|告诉|我的|你|请|那个|这个", re.IGNORECASE)


#: a forget request naming a matter rather than one item: 'everything about X', 'stuff about X', 'what I said about X',
#: 关于X的, X的事, X相关的 (not 'X那条', 'my X number')
_NAMES_MATTER = re.compile(r"\b(?:about|regarding|related to|to do with)\b|\b(?:stuff|things?|matters?|business)\b|"
                           r"关于|有关|相关|的事|那些事|方面", re.IGNORECASE)


def names_matter(text: str) -> bool:
    """Whether a forget request names a whole matter ('以后不用记我工资的事了', 'forget everything about my ex')
    rather than one item ('把我工资那条删掉', 'forget my phone number'): what belongs to that matter in the
    same message goes with the clause that names it (write/forgetting.py, ``forget_matter_clause_margin``)."""
    return _NAMES_MATTER.search(text or "") is not None


def addresses_memory(text: str) -> bool:
    """Whether a forget request points at something said or stored (see ``_ADDRESSES_MEMORY``): 'Forget what
    I said about my dentist', '忘掉关于牙医的那条' -> True; "I'm eating at Forget-Me-Not tonight, forget the
    fancy place", '今晚去一坐一忘吧' -> False."""
    return _ADDRESSES_MEMORY.search(text or "") is not None


def _forget_clauses(text: str) -> tuple[str | None, list[str]]:
    """The target of the forget clauses of ``text`` (None: none is one) and its other clauses."""
    t = text.strip()
    zh = bool(re.search(r"[\u4e00-\u9fff]", t))
    clauses = [c for c in (_ZH_SPLIT if zh else _EN_SPLIT).split(t) if c.strip()]
    found: str | None = None
    others: list[str] = []
    for i, clause in enumerate(clauses):
        got = _zh_forget_clause(clause) if zh else _en_forget_clause(clause)
        if zh and got is None:
            got = _en_forget_clause(clause) if not re.search(r"[\u4e00-\u9fff]", clause) else None
        if zh and got is None and i > 0 and _ZH_TOPIC.search(clauses[i - 1].strip()) \
                and re.fullmatch(rf"\s*(?:都|全|全部|统统|通通)?\s*(?:{_ZH_DROP.pattern})(?:了|吧|啦|一下)*\s*", clause, re.I):
            got = ""  # 健身那事，删了吧: a bare 'delete' after a topic clause deletes that topic (not a file)
        if got is None:
            others.append(clause)
            continue
        if zh and not got and i > 0 and _ZH_TOPIC.search(clauses[i - 1].strip()):
            got = _zh_clean(clauses[i - 1])  # 关于我前任的事，你都忘了吧: the topic clause names the target
        if found is None or (not found and got):
            found = got
    return found, others


def says_more(text: str) -> bool:
    """Whether a forget request also states something of substance in a clause of its own ('Forget my keys, I lost
    my wallet today'): such a text is kept when the forget names nothing stored (write/pipeline.py), so the
    statement is not lost with the request. A clause naming the request's topic ('关于我前男友李航的事') says no more."""
    found, others = _forget_clauses(text)
    if found is None:
        return False
    for o in others:
        zh = re.search(r"[\u4e00-\u9fff]", o) is not None
        if (_ZH_TOPIC.search(o.strip()) if zh else _en_topic(o)):
            continue
        if len(content_terms(_EN_LEAD.sub("", o))) >= 2:
            return True
    return False


def forget_target(text: str) -> str | None:
    """The words naming what to forget when ``text`` is an explicit forget request,
    '' when it names nothing ('forget that', '那条别记了': the newest memory is meant),
    None when it is no forget request. Recognised by structure (see the comments above
    ``_EN_FRAME``), clause by clause: 'Please forget that I live in Berlin' -> 'I live in
    Berlin'; "I'd rather you didn't keep my salary info" -> 'my salary'; '别记我的手机号了'
    -> '我的手机号'; '关于我前任的事，你都忘了吧' -> '我前任'; 'I always forget my keys',
    '今天又忘了带伞', '删掉了手机里的游戏' -> None. A request that names nothing next to a
    statement of substance ('forget it, I'll book the hotel myself') is 'never mind', not a
    forget request (None: the statement is kept)."""
    found, others = _forget_clauses(text)
    if found == "":
        # a pronoun ('forget it') next to a clause naming a topic ('never mind the train thing, forget it',
        # '火车那个事，忘了吧') means the topic, never the newest memory: the named topic wins wherever it stands
        for o in others:
            # a sentence-final particle does not end the topic phrase ('以后别再提我儿子高考的事了，忘了吧')
            topic = (_zh_clean(o) if _ZH_TOPIC.search(o.strip().rstrip("了吧啦呀哦嘛呢。.！!")) else "") \
                if re.search(r"[\u4e00-\u9fff]", o) else _en_topic(o)
            if topic:
                return topic
    if found == "" and any(len(content_terms(_EN_LEAD.sub("", o))) >= 2 for o in others):
        return None
    return found


#: a value stated as provisional: a later statement about the same subject is likely its final value
PROVISIONAL = re.compile(
    r"\b(?:tentative(?:ly)?|tbd|tbc|to be (?:confirmed|decided|determined|announced)|not (?:yet )?(?:final|"
    r"confirmed|decided|fixed)|provisional(?:ly)?|pencil(?:l)?ed in|for now|subject to change|placeholder|"
    r"rough (?:estimate|plan)|still (?:tbd|open|undecided)|(?:might|may) (?:still )?change|"
    # a value held pending someone's answer (session 11): 'the 3rd, venue still up in the air', 'he said
    # he'd let me know', 'they'll confirm'
    r"up in the air|on hold|holding off|(?:will|'ll|would|'d) (?:let (?:me|us) know|confirm|get back to (?:me|us)))\b|"
    r"暂定|待定|初定|暂时|先按|先定|先约|还没定|没定|未定|待确认|待定|等.{1,12}再说|草案|初步|可能会变|还不确定|"
    r"还要看|还得看|要看情况|等.{1,12}(?:确认|通知|回复|答复)",
    re.IGNORECASE,
)


def provisional(text: str) -> bool:
    """Whether ``text`` states its value as provisional ('tentatively on May 12', '年会暂定在12月20号',
    '预算先按15万算'), or as held pending someone's answer ("holding the 3rd, venue still up in the air", "he said
    he'd let me know", '先约了下周六，还要看排不排得开车', '还要等HR确认')."""
    return bool(PROVISIONAL.search(text or ""))


#: a statement that presents its value as the current one after a change (aspect and temporal-contrast
#: words, not correction words: no earlier statement is called wrong): a present-state adverb ('now',
#: 'these days', 'lately', '现在', '最近', '如今'), a return ('back to', 'again', '又', '回到'), a change-of-state
#: verb ('switched', 'moved', 'quit', 'joined', '入职', '跳槽', '改', '换', '涨到', '瘦到'), a settled plan ('finally', 'final', '定了',
#: '最终'). A time of the statement alone ('today', '今天') is an event, not a changed state, and the sequence
#: words of a story ('后来', '终于', 'finally': "后来每天多刷一套卷子") order past events, so neither is a marker.
#: Not built from rules.CHANGE_MARKERS_*: those say that something said before was wrong ('其实是', '说错',
#: 'my mistake'), which the write path judges (write/supersede.py); a correction it did not accept ('其实是我朋友
#: 推荐的这家火锅店') must not win by ranking either (correction-safety-outside, MRR 0.899 -> 0.871 with them).
CHANGE = re.compile(
    r"\b(?:now|nowadays|these days|lately|currently|at the moment|any ?more|no longer|again|back (?:to|on|in|at)|"
    r"went back|go(?:ing)? back|switched|switching|moved|moving|changed|quit|final|settled|joined|new job|"
    r"down to|up to|went (?:up|down))\b|"
    r"现在|如今|目前|最近|这阵子|这段时间|近来|不再|已经不|又|回到|改成|改为|改用|改到|改了|换了|换成|变成|变了|"
    r"涨到|涨了|降到|降了|瘦到|瘦了|胖到|胖了|调到|调回|搬到|搬去|搬回|搬家到|搬家去|定了|定在|最终|最后定|入职|跳槽",
    re.IGNORECASE,
)


#: a change told as one value put in the place of another (a subset of :data:`CHANGE`: the verbs of substitution,
#: whose object is the new value: 'switched to evening runs', 'changed to decaf', '改成早上喝燕麦奶', '换成了电动牙刷'):
#: with no name on either side, what the change replaces is the speaker's nearest memory of the same activity
#: (write/changes.py, :meth:`ChangeLinker._substituted`)
SUBSTITUTION = re.compile(r"\b(?:switched|switching|changed|changing)\s+(?:over\s+)?to\b|改成|改为|改用|改到|换成|换到|变成",
                          re.IGNORECASE)


def reports_change(text: str) -> bool:
    """Whether ``text`` presents its value as the current one after a change (:data:`CHANGE`): "Marcus quit,
    he's doing finance at a startup these days", "涨到4300一个月", "还是回到吃素了"; "my brother works as a
    nurse" does not. A question states nothing, so it reports no change either."""
    t = (text or "").strip()
    return bool(t) and not t.endswith(("?", "？")) and CHANGE.search(t) is not None


#: the beginning of a new state told as an event: the aspectual verbs of beginning (a closed class, Quirk et al.
#: 1985, "A Comprehensive Grammar of the English Language" §3.49 / §16.47: start, begin, commence; zh 开始):
#: "just started at Tencent last week", "began at the new clinic in May". Not part of :data:`CHANGE`: a start names
#: no earlier state ("I started piano" adds a hobby), so it links an older value only where the query itself asks
#: for the present one (write/changes.py, ``metadata._succeeds``)
INCHOATIVE = re.compile(r"\b(?:start(?:ed|ing|s)?|began|begun|begin(?:ning|s)?|commenc(?:ed|es|ing))\b|开始", re.IGNORECASE)

#: the end of a state told as an event done: the terminative verbs of leaving a job, a school, a habit, a membership
#: or a hobby (a closed class: quit, resign, retire, drop out, give up, cancel, stop + gerund, leave + an employer;
#: zh 辞职 / 离职 / 辞掉 / 退学 / 退出 / 不干了 / 戒掉 / 退掉 / 注销 / 停掉). "I quit my job at Amazon last Friday" ends
#: "I work at Amazon as a recruiter" without naming a newer value, which :data:`CHANGE` needs (write/changes.py,
#: rule ``ended_state``). A break-up is left out: its object is a person, whose memories are their own. 'left' counts
#: only before an employer-like object or a capitalised name ('I left Google', not 'I left my keys at Google').
ENDING = re.compile(
    r"\b(?:quit|resigned|retired|dropped out|gave up|given up|cancell?ed (?:my|the|our)|stopped (?=\w+ing\b)|"
    r"left (?=(?:my|the|our) (?:job|position|role|post|company|firm|team|school|program|club|gym)\b)|"
    r"left (?-i:(?=[A-Z][a-z])))|"
    r"辞职|离职|辞掉|辞了|退学|退出|不干了|戒掉|戒了|戒(?=[\u4e00-\u9fff]{1,2}了)|退掉|注销了|停掉|停了",
    re.IGNORECASE,
)
#: what before an ending verb in its clause says it was not done: a wish, a plan, a modal, a negation, a condition
#: ('I want to quit', "I'm thinking of quitting", "I didn't quit", '我想辞职', '打算离职', '还没辞职', '要是辞职了')
_NOT_DONE = re.compile(
    r"\b(?:want(?:s|ed)?|wanna|going|gonna|plan(?:s|ned|ning)?|thinking|think|about|might|may|should|would|could|"
    r"will|shall|considering|consider|hope|if|whether|never|not|almost|nearly|can|can't|cannot|won't|didn't|don't|"
    r"haven't|hasn't|wouldn't|shouldn't|to)\b|'ll\b|"
    r"想|打算|准备|计划|考虑|可能|也许|或许|没有?|不会|不想|别|如果|要是|假如|万一|快要?|差点|要(?!求)",
    re.IGNORECASE,
)
_ENDING_CLAUSE = re.compile(r"[,，.。;；!！?？\n]")


def ends_state(text: str) -> re.Match[str] | None:
    """The ending verb (:data:`ENDING`) of a statement that reports a state the speaker left as done ('Actually I quit
    my job at Amazon last Friday', '我上个月从阿里辞职了'), None when it names none, when nothing before it in its
    clause says it was wished, planned, negated or imagined (:data:`_NOT_DONE`), and for a question."""
    t = (text or "").strip()
    if not t or ends_as_question(t):
        return None
    for m in ENDING.finditer(t):
        starts = [c.end() for c in _ENDING_CLAUSE.finditer(t, 0, m.start())]
        if not _NOT_DONE.search(t[(starts[-1] if starts else 0): m.start()]):
            return m
    return None


def adds_value(text: str) -> bool:
    """Whether ``text`` adds a value beside earlier ones (:data:`memory_engine.write.rules.ADDITIVE`): "I also started piano lessons",
    "家里又多了一只布偶"; such a statement is no newer value of what it is similar to."""
    return ADDITIVE.search(text or "") is not None


def starts_state(text: str) -> bool:
    """Whether ``text`` reports that a new state began (:data:`INCHOATIVE`) and adds nothing beside an
    earlier one (:func:`adds_value`): "just started at Tencent last week" yes, "I also started piano" no,
    a question never."""
    t = (text or "").strip()
    return bool(t) and not t.endswith(("?", "？")) and INCHOATIVE.search(t) is not None and not adds_value(t)


#: deictic time adverbs of a question (a closed class): the present ones, and the habitual ones ('usually',
#: '一般', '平时': a habit asked about is the one that holds now), ask for the value that holds now
#: ("where do I work now?", "what phone am I using these days?", "我现在在哪上班", "我最近用什么学日语"), the past
#: ones for an earlier value ("where did I work before?", "我之前在哪家公司", "我以前住哪"; 'before' only ends the
#: question: "before bed", "before my checkup" name another time, not the value's); the superlatives of recency
#: ('latest', 'most recent', 'newest', '最新') ask for the newest value of a series the same way
PRESENT_QUERY = re.compile(
    r"\b(?:now|currently|current|these days|nowadays|at the moment|at present|lately|still|any ?more|"
    r"usually|normally|typically|generally|tend to|latest|most recent|newest)\b|"
    r"现在|目前|如今|眼下|当前|最近|这阵子|这段时间|近来|一般|平时|平常|通常|最新", re.IGNORECASE)
PAST_QUERY = re.compile(
    r"\b(?:previously|used to|did (?:i|we|you) use to|formerly|back then|originally|at first|former|in the past)\b|\bbefore\s*(?:[?？.!,]|$)|"
    r"以前|之前|原来|原先|过去|当时|曾经|从前|早先|一开始|最早|上一(?:家|个|份|次)", re.IGNORECASE)


def query_tense(query: str) -> str | None:
    """'past' when ``query`` asks about an earlier value (:data:`PAST_QUERY`), 'present' when it asks for the
    value that holds now (:data:`PRESENT_QUERY`), None when it names no time of the value. Past wins over
    present ('what did I use before, and what now?' asks for the history). Only a question of one line has a
    tense of the value it asks for: in a conversation or a request ('用户：…我现在心慌得不行', '我现在想吃点辣的')
    'now' is the speaker's own moment, not a slot's newest value."""
    q = (query or "").strip()
    if "\n" in q or not asks(q):  # chat often drops the mark: 'where do I work now', '我现在住哪个区'
        return None
    if PAST_QUERY.search(q):
        return "past"
    if PRESENT_QUERY.search(q):
        return "present"
    return None


#: the operator of an English question (Quirk et al. 1985, "A Comprehensive Grammar of the English Language"
#: §3.21-3.22: the first auxiliary, moved before the subject, carries the tense): the present forms of the primary
#: verbs ('how do I get my groceries?', 'when is the plumber coming?', "what's my weight?") and the past ones
#: ('what did I eat on June 10?', 'where was I on Friday?'); a question without an operator is a subject question
#: whose verb carries the tense itself ('who works at Shopify?'), left to the time words
_PRESENT_OPERATOR = re.compile(r"\b(?:do|does|am|is|are|have|has)\b|\b(?:what|where|who|when|how|which|that|it|he|she)'s\b|"
                               r"'re\b|\bi'm\b", re.IGNORECASE)
_PAST_OPERATOR = re.compile(r"\b(?:did|was|were|had)\b|\b(?:yesterday|ago|last (?:week|month|year|night|time|weekend))\b",
                            re.IGNORECASE)
#: a Chinese question has no tense: its time is the present unless it carries the experiential aspect particle 过
#: ('我之前在哪家公司干过', Li & Thompson 1981, "Mandarin Chinese: A Functional Reference Grammar" §6.3) or a
#: deictic noun of a past time (a closed class: 昨天 / 前天 / 上次 / 上周 / 上个月 / 去年 / 前年 / 那天 / 当时 / 刚才)
_ZH_PAST = re.compile(r"过|昨天|昨晚|前天|上次|上回|上周|上星期|上礼拜|上个月|上月|去年|前年|那天|那次|当时|刚才|刚刚")
_CJK_CHAR = re.compile(r"[\u4e00-\u9fff]")
#: the perfect auxiliary of a question: 'has' / 'have' inverted before its subject, a personal pronoun, a possessive
#: determiner or a capitalised name ('What books has Melanie read?', 'Where have you camped?', 'How long has my
#: brother lived there?'); subject-auxiliary inversion marks an auxiliary (main-verb 'have' takes 'do': 'what do I
#: have?', Quirk et al. 1985 §3.31-3.34). The English experiential perfect asks for events up to now, the analogue of
#: the Chinese 过 (Comrie 1976, "Aspect" §3.1)
_PERFECT_AUX = re.compile(r"\b(?i:has|have)\s+(?:(?i:i|you|he|she|we|they|my|your|his|her|our|their)\b|[A-Z][a-z])")


def present_question(query: str, chinese: bool = True, perfect_is_past: bool = True) -> bool:
    """Whether a question that names no time of its value (:func:`query_tense` None) is still put in the present:
    in English its operator is a present form and no past operator or past time adverb appears ('how do I get my
    groceries?', 'when is my sister's baby shower?'; not 'what did I do on June 10?'), in Chinese it carries no
    experiential 过 and no past deictic noun ('搬家是哪天？', '我儿子多高？'; not '我之前在哪家公司干过？'). Such a
    question asks for the value that holds now, like one that says 'now'. False for anything but a one-line question
    (the same test as :func:`query_tense`), for a question :func:`query_tense` dates itself, and with ``chinese``
    False for any question holding a CJK ideograph. With ``perfect_is_past`` an inverted perfect auxiliary
    (:data:`_PERFECT_AUX`: 'What books has Melanie read?', 'Where has Maria made friends?') is no present operator:
    the experiential perfect asks for what happened so far, like 过, not for the value that holds now."""
    q = (query or "").strip()
    if "\n" in q or not ends_as_question(q) or query_tense(q) is not None:
        return False
    if _CJK_CHAR.search(q):
        return chinese and _ZH_PAST.search(q) is None and _PAST_OPERATOR.search(q) is None
    if perfect_is_past:
        q = _PERFECT_AUX.sub(" ", q)
    return _PRESENT_OPERATOR.search(q) is not None and _PAST_OPERATOR.search(q) is None


def subject_terms(text: str) -> frozenset[str]:
    """The content terms of ``text`` (:func:`memory_engine.text.content_terms`) without the change markers
    (:data:`CHANGE`): two statements that share one name the same subject ('Marcus', '聚会', '午饭'),
    where two that share only '最近' do not."""
    return frozenset(content_terms(CHANGE.sub(" ", text or "")))


#: a replacement ("X instead of Y", "X rather than Y", "用X而不是Y", "it's X, not Y") names what it replaces: Y
_REPLACEMENT = re.compile(r"(?:\b(?:instead of|rather than)\b|,\s*not\b)(?P<obj>[^.,;!?。，；！？\n]*)|"
                          r"(?:而不是|[，,]\s*不是)(?P<zh>[^。，；！？,.;!?\n]*)", re.IGNORECASE)
#: a contrast names the wrong value after the right one: 'it's 4pm, not 3pm', '七岁了，不是六岁'
_CONTRAST = re.compile(r",\s*not\b|[，,]\s*不是")
_PHRASE_END = re.compile(r"\s+(?:in|on|at|for|with|from|because|when|since|to|and|but|so|now|these days|anymore)\b",
                         re.IGNORECASE)
_REPLACEMENT_ONLY = re.compile(r"^(?:instead of|rather than|,\s*not|[，,]\s*不是)$", re.IGNORECASE)


def contrast_replacement(text: str) -> bool:
    """Whether the replacement in ``text`` (see :func:`replaced_phrase`) is a contrast, 'X, not Y' /
    'X，不是Y', which restates only the corrected value, not the rest of what it corrects."""
    m = _REPLACEMENT.search(text)
    return m is not None and _CONTRAST.match(m.group(0)) is not None


def contrast_phrase(text: str) -> str | None:
    """The wrong value a contrast names ('X, not Y' / 'X，不是Y' -> 'Y'), whatever other correction markers the text
    holds ('Correction: the Berlin flight is June 14, not June 12' -> 'June 12', '更正一下，去武汉是下周六，不是下周五' ->
    '下周五'); None without a contrast. The contrast restates only the corrected value, so it says what the data rule
    of :mod:`memory_engine.write.supersede` keeps."""
    m = _REPLACEMENT.search(text)
    if m is None or _CONTRAST.match(m.group(0)) is None:
        return None
    y = _PHRASE_END.split((m.group("obj") or m.group("zh") or "").strip(), maxsplit=1)[0].strip()
    return y or None


def replaced_phrase(text: str) -> str | None:
    """What a correction replaces when its only explicit marker is a replacement:
    'I use coconut oil instead of butter' -> 'butter', 'my dentist appointment is Thursday,
    not Tuesday' -> 'Tuesday'; None when another explicit
    marker ('changed to', '更正', 'no longer') says outright that something changed,
    or when there is no replacement. "instead of" is ordinary language (a recipe,
    a plan) far more often than a correction, so such a text may retire only an older
    memory that names the replaced thing."""
    markers = [m.group(0).strip() for m in EXPLICIT_CORRECTION.finditer(text)]
    if not markers or not all(_REPLACEMENT_ONLY.match(m) for m in markers):
        return None
    m = _REPLACEMENT.search(text)
    if not m:
        return None
    # the replaced thing is the phrase right after the marker, up to a preposition or conjunction
    # ('butter in my cakes now' -> 'butter'): what follows describes the new habit, not the old one
    return _PHRASE_END.split((m.group("obj") or m.group("zh") or "").strip(), maxsplit=1)[0].strip()


def correction_strength(text: str, marker_found: bool) -> str | None:
    """'explicit' when the text says outright that something changed or was
    wrong, 'weak' when it only carries a marker word used in ordinary language
    too (``marker_found`` = the write rules' CORRECTION marker matched), else None."""
    if any(_states_change(text, m) for m in EXPLICIT_CORRECTION.finditer(text)):
        return "explicit"
    return "weak" if marker_found else None


_SENTENCE_END = re.compile(r"[.!?。！？\n]")
_ANY_MORE = re.compile(r"any ?more", re.IGNORECASE)
_NEGATED = re.compile(r"n't|\b(?:not|never|no)\b|不|没", re.IGNORECASE)


def _states_change(text: str, m: re.Match[str]) -> bool:
    """An explicit marker counts only in a statement: a question ("Have you made any more art
    lately?") asks, it corrects nothing; and "any more" says a change only under a negation
    ("I don't eat meat any more"), not as a quantifier ("any more art")."""
    start = max((e.end() for e in _SENTENCE_END.finditer(text, 0, m.start())), default=0)
    end = _SENTENCE_END.search(text, m.end())
    if end is not None and end.group(0) in "?？":
        return False
    sentence = text[start: end.start() if end else len(text)]
    return not (_ANY_MORE.fullmatch(m.group(0).strip()) and not _NEGATED.search(sentence))


_CLAUSE_END = re.compile(r"[.!?。！？;；\n]+")
#: a comma before a conjunction opens a new clause: a negation does not reach past it ("I don't have to
#: stress about it, so I can just enjoy my movies" negates the stress, not the movies)
_CLAUSE_JOIN = re.compile(
    r"[,，、]\s*(?:(?:and\s+)?(?:so|but|because|since|though|although|while|whereas|yet|then|which|so that)\b"
    r"|所以|但是|但|可是|不过|因为|然后|而且|于是|因此|只是)",
    re.IGNORECASE,
)
_FIRST_PERSON = re.compile(r"\b(i|i'm|i've|i'll|i'd|me|my|mine|myself)\b|我|俺|本人", re.IGNORECASE)


def marker_clause(text: str, *markers: re.Pattern[str]) -> str:
    """The corrected part of ``text``: from the first match of any of ``markers`` to the
    end of the sentence holding the first match of each, or to a comma before a conjunction
    ('Thanks Jon! Keep going and don't stop dreaming. See you' -> "don't stop dreaming";
    "I don't have to stress, so I can enjoy my movies" -> "don't have to stress"; "Please don't recommend games any
    more, courses included" -> "don't recommend games any more, courses included");
    the whole text when no marker matches."""
    found = [m for m in (rx.search(text) for rx in markers) if m]
    if not found:
        return text
    start = min(m.start() for m in found)
    stop = max(m.end() for m in found)
    ends = [m.start() for m in (_CLAUSE_END.search(text, stop), _CLAUSE_JOIN.search(text, stop)) if m]
    return text[start: min(ends) if ends else len(text)]


#: the first person plural: the speaker's household or couple ("we're naming the baby Olivia")
_FIRST_PLURAL = re.compile(r"\b(?:we|we're|we've|we'll|we'd|us|our|ours|ourselves)\b", re.IGNORECASE)


def about_speaker(clause: str, plural: bool = False) -> bool:
    """True when the clause speaks in the first person ('I don't like sushi any more',
    '以后不要再给我推荐恐怖片'), so a negation in it can contradict the speaker's own
    earlier statement; "don't forget your passion" is about someone else. With ``plural`` the first person
    plural counts too ("We're thinking of naming the baby Olivia": a value of the speaker's household; 我们 always
    holds 我)."""
    c = clause.replace("’", "'")
    return bool(_FIRST_PERSON.search(c) or (plural and _FIRST_PLURAL.search(c)))
