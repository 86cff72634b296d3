"""Who a memory speaks for (issue 16, failure class 7): what the assistant said is a record of
its suggestion (``model_inferred``), never the user's own fact, until the user takes it up.

A user turn that only accepts the turn before it ("yes, book that one", "sounds good, let's do
that", "好，就它了", "行，就订这家") is a *confirmation*: it carries

* an affirmation (yes / ok / sure / sounds good / 好 / 行 / 可以 / 就),
* a reference back to what was offered (that one / it / this / 它 / 这个 / 那家) or a verb of
  taking it (book / take / go with / 订 / 选 / 要),
* no negation ("no, not that one", "不要这个"), no question, and at most
  ``write.confirm_max_terms`` content terms of its own (it names nothing new).

When the session's latest memory before it (within ``write.confirm_window_s``) was said by the
assistant, that memory becomes the user's: metadata ``_confirmed_by_user`` (the user's words
and time) and ``source`` ``user_stated``; its role stays ``assistant`` (who said it is not
rewritten). A confirmation that adds no content term beyond its affirmation / reference /
taking words merges into the memory it confirms (nothing of the user's is lost: the words are
kept in that metadata); one that adds something ("yes, book that one for Friday") is stored too.

:func:`author_role` is what retrieval reads: ``user`` for a confirmed suggestion, else the role.

**Replies to the assistant's question.** When the assistant asks the user about themselves ("Do you
have a car?", "你平时抽烟吗？", "Where did you grow up?") the user's short reply ("yes", "没有",
"nope", a bare place name) is the user's fact, but only with its question: alone "yes" is an
acknowledgement and "Hangzhou" answers nothing. :func:`asked_about_user` reads the question: the
last question clause of the turn, spoken to the user (you / your / 你 / 您) and neither an offer or a
proposal of the assistant ("Shall I book it?", "Would you like the window seat?", "要不要试试游泳？",
"需要我帮你订吗？") nor a closing of the conversation ("anything else?", "还有别的问题吗？"): those
are taken up by a confirmation or a decision, or by nothing. A reply within ``write.reply_window_s``
with at most ``write.reply_max_terms`` content terms that is no question back ("why do you ask?") is
then that question's answer
(:class:`Confirmer` ``question``): a bare yes / no (:func:`is_polar_reply`) is kept instead of
dropped as chit-chat, its words are kept as said, and it is embedded and indexed together with the
question (metadata ``_reply_to``: the question's id and words), so "do I have a car?" finds "yes".
The assistant's words stay the assistant's: the memory is the user's reply, the question its context.
A tag question ("You're in Seattle, right?", "你是当老师的，对吧？") is read with the clause it tags
(:func:`last_question`, ``write.reply_tag_max_terms``), and the question is embedded in the user's own
person (:func:`as_said_by_user`, ``write.reply_in_user_person``).

**Acceptance** (:meth:`Confirmer.takes_up`). Besides a confirmation, a bare affirmation ("yes please",
"sounds good", "好的", "可以") accepts an assistant turn that offers to act itself ("Want me to book it?",
"要我帮你订吗？", :func:`offers_to_act`); after advice ("You might like trail running") it stays noncommittal.
A reference back to the assistant's words ("那就听你的", "your call") is a confirmation. When the accepted
turn answers the user's question about an earlier offer ("does it come with full insurance?"), that offer
is taken up too (``write.confirm_followups``). A confirmed suggestion is the decision of the request it
answers (retrieve/addressee.py threads). **Refusals** ("no thanks", "nah, too pricey", "不用了",
:func:`is_refusal`, ``write.decline_max_terms``) mark the assistant turn ``_declined_by_user``
(``write.declines``; nothing archived): it then answers only a query about the assistant's words
(``retrieval.declined_needs_addressee``).

**Commitments** (``write.assistant_commitments``). An assistant turn that announces a standing way of acting of
its own ("From now on I'll answer in French", "好的，以后我都用英文回复你"; :func:`standing_commitment`: a sentence
with the assistant's own first person in the future or habitual, 'I'll' / 'I will' / 我会 / 我都 / 我就 / 我将, and a
standing marker, 'from now on' / 'going forward' / 'always' / 以后 / 今后 / 从现在起) is the assistant's commitment,
not the user's preference: it is marked ``_assistant_commitment`` (the sentence) and answers only a query that
refers to the assistant (``retrieval.commitment_needs_addressee``). Asked as a question ("以后我都用英文回复你，可以
吗？") a bare acceptance ("可以", "ok") takes it up like an offer to act, and a confirmed commitment is the user's.
When the user asked for it ("answer me in Spanish from now on") the user's own request says so.

**Denied guesses** (``write.denied_guesses``). A reply that opens by denying the assistant's guess about the user
(:func:`is_guess`: "You work night shifts, right?", "应该上小学了吧？"; not an interrogative such as "Do you have a
car?", whose "no" is a plain answer) ("nope, days only", "nah, Portland", "没有，才上幼儿园中班", "不是，在苏州";
:func:`is_denial`) marks that guess
``_declined_by_user`` like a declined offer: the reply, embedded with the question, is the user's answer, and the
guess answers only a query that refers to the assistant (``retrieval.declined_needs_addressee``), not "night
shifts at the hospital" asked without a first person. Nothing is archived.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ..config import WriteSection
from ..errors import ConfigError
from ..models import Source
from ..scope import Scope
from ..store.base import ScoredPayload, VectorStore
from ..text import content_terms

__all__ = ["ANSWERS_KEY", "COMMITMENT_KEY", "CONFIRMED_KEY", "DECLINED_KEY", "REPLY_TO_KEY", "SETTLES_KEY", "Confirmer",
           "after_dismissal", "commitment", "is_denial", "is_guess", "standing_commitment",
           "asked_about_user",
           "as_said_by_user", "author_role", "confirmation_extra_terms", "declined", "is_bare_acceptance", "is_confirmation", "is_decision",
           "is_polar_reply", "is_refusal", "last_question", "offers_to_act", "turn_before"]

#: metadata key of a suggestion the user confirmed: {"text": the user's words, "at": epoch seconds}
CONFIRMED_KEY = "_confirmed_by_user"
#: metadata key of an assistant turn the user declined right after it: {"text": the user's words, "at": epoch seconds}
DECLINED_KEY = "_declined_by_user"
#: metadata key of an assistant turn: the id of the user's request it answers (module docstring, threads)
ANSWERS_KEY = "_answers"
#: metadata key of a user decision: [the assistant turn it settles, the request that turn answers (when known)]
SETTLES_KEY = "_settles"
#: metadata key of a user's reply to the assistant's question about them: {"id": the question's memory, "text": the question}
REPLY_TO_KEY = "_reply_to"
_CJK_ANY = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
#: metadata key of an assistant turn announcing a standing way of acting of its own: the sentence (module docstring)
COMMITMENT_KEY = "_assistant_commitment"

#: the speaker's own first person in the future or habitual: I'll / I will / I'm going to, 我会 / 我都 / 我就 / 我将
_OWN_FUTURE = re.compile(
    r"\b(?:i'?ll|i will|i shall|i'?m going to|i am going to|i'?m gonna|i'?ll be|i will be)\b|"
    r"我(?:会|都|就|将|一直|每次|以后|今后|往后|之后)",
    re.IGNORECASE,
)
#: a standing marker: the act is a way of acting from now on, not one act ('I'll book it' is an offer)
_STANDING = re.compile(
    r"\b(?:from now on|going forward|from here on(?: out)?|from this point(?: on| forward)?|henceforth|"
    r"in (?:the )?future|always|every time|each time|whenever)\b|以后|今后|往后|从现在(?:开始|起)|从今天(?:开始|起)|从此|"
    r"每次|一直",
    re.IGNORECASE,
)

_AFFIRM = re.compile(
    r"^\W*(?:yes|yeah|yep|yup|ok(?:ay)?|sure|sounds good|perfect|great|alright|fine|deal|cool|let'?s|go ahead|do it)\b|"
    r"^\W*(?:好|行|可以|没问题|就|嗯|对|成|妥|那就|OK|ok)",
    re.IGNORECASE,
)
#: a reference back to the offer, or a verb of taking it
_TAKE = re.compile(
    r"\b(?:that|this|it|those|these|that one|this one|the (?:first|second|third|last|cheaper|latter|former) one)\b|"
    r"\b(?:book|take|reserve|order|buy|get|pick|choose|go with|go for|sign me up)\b|"
    r"它|这个|那个|这家|那家|这款|那款|这件|那件|这里|那里|(?:订|选|定|要|买|约)(?:这|那|它|吧|了|下)|"
    # a reference back to the assistant's own words: 'your call', 'as you said', 听你的, 按你说的
    r"\byour (?:call|pick|suggestion|idea|way)\b|\b(?:as|what) you (?:said|suggested|say)\b|听你的|(?:按|照|依)你",
    re.IGNORECASE,
)
#: a question that refers back to what was offered ("does it come with insurance?", "这个能加热吗？"), not one asking
#: for something else ("anything cheaper?", "有没有不用排队的？"): a pronoun or demonstrative of the offer
_REFERS_BACK = re.compile(
    r"\b(?:it|its|it'?s|this|that|they|them|there|this one|that one)\b|它|这个|那个|这家|那家|这款|那款|这件|那件|这里|那里|这班|那班",
    re.IGNORECASE,
)
_NEGATED = re.compile(r"\b(?:no|not|don'?t|never|nah|nope)\b|不|别|没|算了", re.IGNORECASE)
_QUESTION = re.compile(r"[?？]|吗\W*$|\b(?:what|which|how|why|when|where|any)\b", re.IGNORECASE)
#: words of the confirmation itself (they name nothing the suggestion lacks)
_OWN_WORDS = frozenset(
    "yes yeah yep yup ok okay sure sound good perfect great alright fine deal cool let go ahead book take reserve order "
    "buy get pick choos choose one first second third last cheaper latter former sign up 好 行 可以 没问题 就 嗯 对 订 选 定 要 "
    "买 约 它 这个 那个 这家 那家 这款 那款 吧 了 啦 就是 就它 就这个 就那个 就这家 就那家 就订 就选 就要 就定 就买 就约 "
    # agreeing to have it done: 'please', 就这么办 / 就这样 (do it that way), 安排 (arrange it), 听你的 (as you say)
    "please 这么 这样 办 安排 听".split()
)
#: a dismissal opening a reply, set off by a clause break: zh 算了 / 算了吧 (现代汉语词典 第7版 "算了: 作罢; 不再计较"),
#: en never mind / forget it / whatever (discourse markers of dismissal, Schiffrin 1987 *Discourse Markers*). It dismisses
#: what was being weighed, not the offer: "算了，就订那家吧" / "never mind, let's just do that" take the offer up, and
#: "算了吧，我晚上要接孩子" declines it (:data:`_REFUSE`). A confirmation is read after it (:func:`after_dismissal`)
_DISMISS = re.compile(r"^\W*(?:那)?(?:算了吧?|never ?mind|forget it|whatever)\s*[,，、.。!！;；]+\s*", re.IGNORECASE)
#: a refusal opening a reply: no / nah / no thanks / don't / never mind, zh 不用 / 不要 / 不了 / 算了 / 别 / 不必 / 还是不
_REFUSE = re.compile(
    r"^\W*(?:no|nah|nope|not (?:now|really|today)|don'?t|never ?mind|pass|i'?m good|i'?ll pass)\b|"
    r"^\W*(?:不用|不要|不了|不必|不需要|算了|别|还是不|先不|暂时不|不考虑)",
    re.IGNORECASE,
)


#: a first-person choice or commitment: future ("I'll", "I'm going to"), a past choice ("went with", "ended up",
#: "booked"), a preference between options ("I'd rather", "instead"); zh 还是 + a verb (after all), 决定 / 打算 / 准备
#: (decided / plan to), a taking verb with 了 (订了 / 买了 / 选了), 改成 / 换成. Not 算了 ("forget it"): it dismisses
#: and decides nothing by itself ("算了吧，我晚上要接孩子" declines the offer, :func:`is_refusal`; "算了，我还是订了楼下那家"
#: decides by 还是 + 订), see :data:`_DISMISS`
_DECIDE = re.compile(
    r"\b(?:i(?:'ll| will| shall|'m going to| am going to|'m gonna| am gonna)|i (?:think|guess) i'?ll|i'?d rather|"
    r"i would rather|(?:i )?(?:decided|chose|picked|went with|ended up|settled on|booked|reserved|ordered|bought|"
    r"signed up)|(?:going|sticking) with|instead)\b|"
    # 还是 / 最后 only before a verb of choosing: '我还是觉得有点贵' (still) and '最后一个问题' (last) decide nothing
    r"(?:还是|最后|最终)[^，。！？,.!?]{0,4}?(?:去|订|定|选|买|要|吃|住|用|约|报|坐|点了|换|决定)|决定|打算|准备|干脆|"
    r"(?:订|定|买|选|约|报|挑|换|改)(?:了|成|去|到|好了)",
    re.IGNORECASE,
)


#: a question clause: up to a question mark, or a zh clause ending in the particle 吗 (a sentence without "？")
_QUESTION_CLAUSE = re.compile(r"[^.!?。！？\n,，;；:：]*(?:[?？]|吗(?=\s*(?:[。！.!\n]|$)))")
_TO_YOU = re.compile(r"\b(?:you|your|yours|yourself|you'?re|you'?ve|u|ur)\b|你|您", re.IGNORECASE)
#: the assistant offers or proposes something (its own first person, a proposal form) or closes the conversation:
#: the reply takes it up or declines it (a confirmation or a decision), it states nothing about the user
_OFFER = re.compile(
    r"\b(?:shall|should|can|could|may) (?:i|we)\b(?! ask)|\b(?:i|we) (?:can|could|will|would|shall|might)\b|"
    r"\b(?:i'?ll|i'?d|we'?ll|let me|let'?s|let us|want me|need me|like me|me to)\b|\b(?:would|do) you (?:like|want|mind)\b|"
    r"\bwant (?:to|me)\b|\b(?:how|what) about\b|\bwhy (?:not|don'?t)\b|\b(?:could|can|might|may|will) (?:you )?try\b|"
    r"\binterested in\b|\bcare to\b|\b(?:anything|something) else\b|\bany (?:other |more |further )?questions?\b|"
    r"要我|让我|需要我|我(?:来|帮|给|替|为|们)|我可以(?!问)|咱|要不要|想不想|需不需要|需要(?:帮|帮忙|帮助)|愿不愿意|试试|试一下|"
    r"考虑|怎么样|好吗|好不好|行吗|行不行|可以吗|如何|别的|其他|其它",
    re.IGNORECASE,
)
#: the assistant offers to act itself ("Want me to book it?", "Shall I move it?", "要我帮你订吗？", "我帮你约这个时间？"):
#: its own first person as the doer inside a question. A bare "yes please" / "好的" / "sounds good" accepts that
#: act; a proposal to the user ("要不要试试游泳？", "How about trail running?") is only advice, and a bare "sure"
#: to it says nothing the user did (hygiene-in-speech controls)
_ACT_OFFER = re.compile(
    r"\b(?:shall|should|can|could|may) (?:i|we)\b(?! ask)|\b(?:want|like|need) me to\b|\b(?:i|we) (?:can|could) \w+ (?:it|that|this|one|them|for you)\b|"
    r"要我|需要我|要不要我|让我|我(?:来|帮|给|替)(?:你|您)|我(?:帮|给)?(?:你|您)(?:订|约|买|改|预约|预订|安排|下单|换)",
    re.IGNORECASE,
)
#: a reply that answers a polar question by itself: yes / no, zh 是 / 对 / 有 / 没有 / 不 / 会 / 能 ...
_POLAR = re.compile(
    r"^\W*(?:yes|yeah|yep|yup|ya|yea|sure|right|correct|exactly|definitely|absolutely|of course|indeed|true|"
    r"no|nope|nah|not really|never|not at all)\b|"
    r"^\W*(?:是|对|嗯|没错|有|没有|没|不是|不|会|不会|能|不能|当然|确实|没有的|对的|是的)",
    re.IGNORECASE,
)


#: where a sentence ends: a tag question is joined only with the clauses of its own sentence
_SENTENCE_END = re.compile(r"[.!?。！？\n]")


def last_question(text: str, tag_max_terms: int = 1) -> str | None:
    """The last question clause of ``text`` (None without one). A tag question ("..., right?",
    "..., is that right?", "...，对吧？") carries no subject of its own: a last clause with no second person
    and at most ``tag_max_terms`` content terms is joined with the clauses before it in its sentence
    ("You're in Seattle, right?"), never across a sentence end ("Your order ships tomorrow. Does that make
    sense?" stays "Does that make sense?"). Pure."""
    t = text or ""
    found = [m for m in _QUESTION_CLAUSE.finditer(t) if m.group(0).strip(" ?？")]
    if not found:
        return None
    m = found[-1]
    last = m.group(0).strip()
    if tag_max_terms >= 0 and not _TO_YOU.search(last) and len(content_terms(last)) <= tag_max_terms:
        head = t[:m.start()]
        ends = list(_SENTENCE_END.finditer(head))
        stem = head[ends[-1].end():] if ends else head
        if stem.strip(" ,，;；:：-—"):
            return (stem + m.group(0)).strip()
    return last


#: second person -> first person, the closed class of English pronoun forms (longest first) and zh 你 / 您 / 你们
_SHIFT_EN = (("you're", "I'm"), ("you are", "I am"), ("you've", "I've"), ("you'd", "I'd"), ("you'll", "I'll"),
             ("yourself", "myself"), ("yours", "mine"), ("your", "my"), ("ur", "my"), ("you", "I"), ("u", "I"))
_SHIFT_EN_RE = re.compile(r"\b(?:" + "|".join(re.escape(a) for a, _ in _SHIFT_EN) + r")\b", re.IGNORECASE)
_SHIFT_ZH = re.compile(r"你们|您们|你|您")


def as_said_by_user(question: str) -> str:
    """The assistant's question about the user in the user's own person ("Do you have a car?" -> "Do I have a car?",
    "你是当老师的，对吧？" -> "我是当老师的，对吧？"): the user's reply is embedded with it, and the user asks about
    themselves in the first person ("do I have a car?", "我是做什么工作的"). Pure."""
    en = dict(_SHIFT_EN)
    q = question or ""

    def shift(m: re.Match[str]) -> str:
        word = m.group(0).lower()
        if word in ("you", "u") and re.match(r"\s*(?:[?!.,;:]|$)", q[m.end():]):
            return "me"  # an object at the clause end: 'is it bothering you?'
        return en[word]
    out = _SHIFT_EN_RE.sub(shift, q)
    return _SHIFT_ZH.sub(lambda m: "我们" if len(m.group(0)) == 2 else "我", out)


def offers_to_act(text: str, tag_max_terms: int = 1) -> bool:
    """Whether an assistant turn ends by offering to act itself (:data:`_ACT_OFFER` in its last question). Pure."""
    q = last_question(text, tag_max_terms)
    return q is not None and bool(_ACT_OFFER.search(q))


def asked_about_user(text: str, tag_max_terms: int = 1) -> str | None:
    """The question an assistant turn asks the user about themselves (module docstring, replies): its
    last question clause (a tag question with the clause it tags, :func:`last_question`) when that clause
    is spoken to the user and is no offer, proposal or closing; else None. Pure."""
    last = last_question(text, tag_max_terms)
    if last is None or not _TO_YOU.search(last) or _OFFER.search(last):
        return None
    return last


#: a reply that opens by denying what was asked: no / nope / nah / not really / wrong, zh 不是 / 不对 / 没有 / 没 / 不会 /
#: 错了 / 哪有, or a bare 不 set off by punctuation ('不，在苏州'); not 'not sure' (no denial: a question stays open)
_DENY = re.compile(
    r"^\W*(?:no|nope|nah|not really|not at all|not quite|never|wrong|incorrect)\b(?!\s+(?:sure|idea))|"
    r"^\W*(?:不是|不对|没有|没|不会|错了|并不|才不|哪有|不(?=[\s,，。.!！]|$))",
    re.IGNORECASE,
)


#: an English interrogative: it opens (after a discourse 'so' / 'and' / 'ok') with an auxiliary or a wh-word
_INTERROGATIVE_EN = re.compile(
    r"^\W*(?:(?:so|and|ok(?:ay)?|well|also|then)\b\W*)?(?:do|does|did|are|is|was|were|am|have|has|had|can|could|will|"
    r"would|shall|should|may|might|must|what|which|who|whom|whose|where|when|why|how)\b",
    re.IGNORECASE,
)
#: a zh guess: the question ends in the presumptive particle 吧 or a tag (对吧 / 是吧 / 对不对 / 是不是 / 没错吧)
_GUESS_ZH = re.compile(r"(?:吧|对不对|是不是|对不|没错吧)\s*[?？]?\s*$|是不是")


def is_guess(question: str) -> bool:
    """Whether the assistant's question about the user (:func:`asked_about_user`) puts forward a guess: a
    declarative with a tag or a question mark ("You're in Seattle, right?", "So you live in Seattle?", "...you
    don't eat meat, is that right?", "你是当老师的，对吧？", "应该上小学了吧？"), not an interrogative ("Do you have
    a car?", "Where did you grow up?", "你平时抽烟吗？"), whose "no" is a plain answer. Pure."""
    q = (question or "").strip()
    if not q:
        return False
    if _CJK_ANY.search(q):
        return bool(_GUESS_ZH.search(q))
    return not _INTERROGATIVE_EN.match(q)


def is_denial(text: str) -> bool:
    """Whether a reply opens by denying what it answers (:data:`_DENY`): "nope, days only", "没有，才上幼儿园中班".
    Read only for a reply to the assistant's question about the user (module docstring, denied guesses). Pure."""
    return bool(_DENY.search((text or "").strip()))


def standing_commitment(text: str) -> str | None:
    """The first sentence of an assistant turn that announces a standing way of acting of its own (module
    docstring, commitments): its first person in the future or habitual (:data:`_OWN_FUTURE`) and a standing
    marker (:data:`_STANDING`) in one sentence ("From now on I'll answer in French", "以后我都用英文回复你"); None
    without one ("I'll book it for 7pm" is one act, "you should always stretch" is advice). Pure."""
    for sent in re.split(r"(?<=[.!?。！？\n])", text or ""):
        if _OWN_FUTURE.search(sent) and _STANDING.search(sent):
            return sent.strip()
    return None


def commitment(payload: Mapping[str, Any]) -> bool:
    """Whether a memory is the assistant's own standing commitment (metadata ``_assistant_commitment``) that the
    user has not confirmed: it answers only a query that refers to the assistant."""
    return bool((payload.get("metadata") or {}).get(COMMITMENT_KEY)) and author_role(payload) == "assistant"


def is_polar_reply(text: str) -> bool:
    """Whether a reply opens with yes / no (en, zh): by itself it answers a polar question. Pure."""
    return bool(_POLAR.search((text or "").strip()))


def is_decision(text: str) -> bool:
    """Whether a user turn states the user's own choice or commitment (module docstring, threads):
    a decision marker and no question. Pure; the caller rules out confirmations first."""
    t = (text or "").strip()
    return bool(t) and bool(_DECIDE.search(t)) and not _QUESTION.search(t)


def author_role(payload: Mapping[str, Any]) -> str:
    """``user`` for a suggestion the user confirmed (metadata ``_confirmed_by_user``), else the
    payload's role (missing = ``user``)."""
    role = str(payload.get("role") or "user")
    if role != "user" and (payload.get("metadata") or {}).get(CONFIRMED_KEY):
        return "user"
    return role


def declined(payload: Mapping[str, Any]) -> bool:
    """Whether an assistant memory was declined by the user (metadata ``_declined_by_user``) and not confirmed later."""
    meta = payload.get("metadata") or {}
    no, yes = meta.get(DECLINED_KEY), meta.get(CONFIRMED_KEY)
    if str(payload.get("role") or "user") == "user" or not no:
        return False
    # the user's latest word on it counts: declined, then "actually ok, book it" confirms it again
    return not yes or float((no or {}).get("at") or 0.0) > float((yes or {}).get("at") or 0.0)


def after_dismissal(text: str) -> str:
    """``text`` after a dismissal opening (:data:`_DISMISS`: "算了，就订那家吧" -> "就订那家吧"); ``text`` itself
    without one, or when nothing follows it. Pure."""
    t = (text or "").strip()
    m = _DISMISS.match(t)
    return t[m.end():].strip() if m and t[m.end():].strip() else t


def is_confirmation(text: str, max_terms: int) -> bool:
    """Whether a user turn only accepts what was just offered (module docstring), read after a dismissal
    opening ("算了，就订那家吧", :func:`after_dismissal`); pure."""
    t = after_dismissal(text)
    if not t or not _AFFIRM.search(t) or not _TAKE.search(t) or _NEGATED.search(t) or _QUESTION.search(t):
        return False
    return len(content_terms(t)) <= max_terms


def is_bare_acceptance(text: str, max_terms: int) -> bool:
    """Whether a user turn is only an affirmation ("yes please", "sounds good", "好的", "可以", "ok 就这么办"):
    no negation, no question, no content term beyond the words of agreeing, read after a dismissal opening
    ("算了，好的", :func:`after_dismissal`). It accepts an offer to act (:func:`offers_to_act`), nothing else: after
    advice it is noncommittal. Pure."""
    t = after_dismissal(text)
    if not t or not _AFFIRM.search(t) or _NEGATED.search(t) or _QUESTION.search(t):
        return False
    return len(content_terms(t)) <= max_terms and not confirmation_extra_terms(t)


def is_refusal(text: str, max_terms: int) -> bool:
    """Whether a user turn declines what was just offered ("no thanks", "nah, too pricey", "不用了", "算了吧，
    我晚上要接孩子"): a refusal opening (:data:`_REFUSE`), no question, at most ``max_terms`` content terms
    (a longer reply states something of its own). Pure."""
    t = (text or "").strip()
    return bool(t) and bool(_REFUSE.search(t)) and not _QUESTION.search(t) and len(content_terms(t)) <= max_terms


def confirmation_extra_terms(text: str) -> frozenset[str]:
    """Content terms of a confirmation beyond its own affirmation / reference / taking words
    ('yes, book that one for Friday' -> {'friday'}); empty: it names nothing new."""
    return frozenset(t for t in content_terms(text) if t not in _OWN_WORDS)


def turn_before(store: VectorStore, scope: Scope, session_id: str | None, ts: float, window_s: float,
                role: str = "assistant") -> ScoredPayload | None:
    """The session's latest memory written before ``ts`` when ``role`` said it at most ``window_s``
    seconds before, else None (no session, no such turn, another speaker, too old). What a
    confirmation takes up (:class:`Confirmer`) and what a secret answers (write/pii.py
    ``asked_secret``) is this turn."""
    if not session_id or window_s <= 0:
        return None
    flt = scope.filter(session_id=session_id, created_before=ts)
    rows = store.scroll(flt, limit=1, order_by="created_at", descending=True)
    if not rows:
        return None
    pl = rows[0].payload
    if str(pl.get("role") or "user") != role or ts - float(pl.get("created_at") or 0.0) > window_s:
        return None
    return rows[0]


class Confirmer:
    """``offer(scope, session_id, ts)`` -> the assistant memory a confirmation said at ``ts`` takes up
    (the session's latest current memory written at or before ``ts``, when it is the assistant's and
    no older than ``write.confirm_window_s``), else None; ``confirm(offer, text, ts)`` marks it the
    user's. Raises ConfigError at construction for a negative window or max_terms."""

    def __init__(self, store: VectorStore, cfg: WriteSection) -> None:
        if cfg.confirm_window_s < 0 or cfg.confirm_max_terms < 0:
            raise ConfigError("write.confirm_window_s and write.confirm_max_terms must be >= 0",
                              key="write.confirm_window_s")
        self.store, self.window, self.max_terms = store, cfg.confirm_window_s, cfg.confirm_max_terms
        self.enabled = cfg.confirm_window_s > 0
        self.settle = cfg.settle_threads
        if cfg.reply_window_s < 0 or cfg.reply_max_terms < 0:
            raise ConfigError("write.reply_window_s and write.reply_max_terms must be >= 0", key="write.reply_window_s")
        self.reply_window, self.reply_max_terms = cfg.reply_window_s, cfg.reply_max_terms
        if cfg.confirm_followups < 0:
            raise ConfigError("write.confirm_followups must be >= 0", key="write.confirm_followups")
        self.followups, self.tag_max_terms, self.declines = cfg.confirm_followups, cfg.reply_tag_max_terms, cfg.declines
        self.decline_max_terms = cfg.decline_max_terms

    def takes_up(self, scope: Scope, session_id: str | None, ts: float, text: str) -> list[ScoredPayload]:
        """The assistant turns the user turn ``text`` said at ``ts`` accepts (module docstring, acceptance), newest
        first; [] when it accepts nothing. A confirmation (:func:`is_confirmation`) takes up the session's latest
        turn when the assistant said it within ``write.confirm_window_s``; a bare affirmation
        (:func:`is_bare_acceptance`) only when that turn offers to act (:func:`offers_to_act`). When that turn
        answers a question the user asked about an earlier offer, referring back to it ("does it come with full
        insurance?", "这个能加热吗？"; not "anything cheaper?", which asks for another offer), the
        earlier offer is taken up too, back over at most ``write.confirm_followups`` such question-and-answer
        pairs inside the window: "ok, book it" after the answer books the car, not only the insurance."""
        strict = is_confirmation(text, self.max_terms)
        if not strict and not is_bare_acceptance(text, self.max_terms):
            return []
        offer = self.offer(scope, session_id, ts)
        if offer is None:
            return []
        said = str(offer.payload.get("content") or "")
        # a bare "可以" / "ok" accepts an offer to act, or the assistant's commitment put as a question
        # ("以后我都用英文回复你，可以吗？"); after advice it stays noncommittal
        if not strict and not offers_to_act(said, self.tag_max_terms) and not (
                (offer.payload.get("metadata") or {}).get(COMMITMENT_KEY) and last_question(said, -1)):
            return []
        out = [offer]
        for _ in range(self.followups):
            asked = self._before(scope, session_id, out[-1], ts)
            # the question itself refers back: in 'that's a bit pricey, anything cheaper?' the question asks for another
            q = last_question(str(asked.payload.get("content") or ""), -1) if asked is not None else None
            if asked is None or str(asked.payload.get("role") or "user") != "user" or not q or not _REFERS_BACK.search(q):
                break  # no question of the user's about that offer ('anything cheaper?' asks for another one)
            earlier = self._before(scope, session_id, asked, ts)
            if earlier is None or str(earlier.payload.get("role") or "user") != "assistant":
                break
            out.append(earlier)
        return out

    def _before(self, scope: Scope, session_id: str | None, turn: ScoredPayload, ts: float) -> ScoredPayload | None:
        """The session's memory written just before ``turn`` (the store's bound is inclusive: ``turn`` itself and
        turns of the same second are skipped by id), when written at most ``write.confirm_window_s`` before ``ts``."""
        at = float(turn.payload.get("created_at") or ts)
        rows = self.store.scroll(scope.filter(session_id=session_id, created_before=at), limit=4,
                                 order_by="created_at", descending=True)
        for row in rows:
            if row.id != turn.id and float(row.payload.get("created_at") or at) < at:
                return row if ts - float(row.payload.get("created_at") or 0.0) <= self.window else None
        return None

    def declines_offer(self, scope: Scope, session_id: str | None, ts: float, text: str) -> ScoredPayload | None:
        """The assistant turn the user turn ``text`` declines (:func:`is_refusal` with ``write.decline_max_terms``):
        the session's latest turn,
        the assistant's within ``write.confirm_window_s``, when it asks nothing about the user (a "no" to "do you
        have a car?" is the user's answer, module docstring replies); else None. Off with ``write.declines``."""
        if not self.declines or not is_refusal(text, self.decline_max_terms) or is_confirmation(text, self.max_terms):
            return None
        turn = self.offer(scope, session_id, ts)
        if turn is None or asked_about_user(str(turn.payload.get("content") or ""), self.tag_max_terms) is not None:
            return None
        return turn

    def decline(self, offer: ScoredPayload, text: str, ts: float) -> None:
        """Mark ``offer`` declined by the user (metadata ``_declined_by_user``): nothing is archived, it stays a
        record of what the assistant said and answers a question about the assistant's words."""
        meta = dict(offer.payload.get("metadata") or {})
        meta[DECLINED_KEY] = {"text": text, "at": ts}
        self.store.set_payload([offer.id], {"metadata": meta, "updated_at": ts})

    def offer(self, scope: Scope, session_id: str | None, ts: float) -> ScoredPayload | None:
        return self.latest(scope, session_id, ts, "assistant")

    def latest(self, scope: Scope, session_id: str | None, ts: float, role: str) -> ScoredPayload | None:
        """The session's latest current memory written at or before ``ts``, when ``role`` said it at most
        ``write.confirm_window_s`` before ``ts``, else None (the turn a new one answers; :func:`turn_before`)."""
        if not self.enabled:
            return None
        return turn_before(self.store, scope, session_id, ts, self.window, role=role)

    def thread_metadata(self, scope: Scope, session_id: str | None, ts: float, role: str, text: str,
                        confirmation: bool) -> dict[str, Any]:
        """Metadata linking a turn into its thread (module docstring, threads): ``{_answers: id}`` for an
        assistant turn after a user turn, ``{_settles: [offer id, request id?]}`` for a user decision after
        an assistant turn, else {}. Off with ``write.settle_threads`` False."""
        if not self.settle:
            return {}
        if role == "assistant":
            req = self.latest(scope, session_id, ts, "user")
            return {ANSWERS_KEY: req.id} if req is not None else {}
        if role != "user" or confirmation or not is_decision(text):
            return {}
        offer = self.latest(scope, session_id, ts, "assistant")
        if offer is None:
            return {}
        request = (offer.payload.get("metadata") or {}).get(ANSWERS_KEY)
        return {SETTLES_KEY: [offer.id] + ([str(request)] if request else [])}

    def question(self, scope: Scope, session_id: str | None, ts: float, text: str) -> tuple[str, str] | None:
        """(id, question) of the assistant's question about the user that the user turn ``text`` said at
        ``ts`` answers (module docstring, replies): the session's latest memory, the assistant's, at most
        ``write.reply_window_s`` before, asking :func:`asked_about_user`, and ``text`` has at most
        ``write.reply_max_terms`` content terms; else None."""
        if self.reply_window <= 0 or len(content_terms(text)) > self.reply_max_terms or _QUESTION.search(text):
            return None  # off, a statement of its own, or a question back ('why do you ask?')
        turn = turn_before(self.store, scope, session_id, ts, self.reply_window)
        if turn is None:
            return None
        asked = asked_about_user(str(turn.payload.get("content") or ""), self.tag_max_terms)
        return None if asked is None else (turn.id, asked)

    def confirm(self, offer: ScoredPayload, text: str, ts: float) -> None:
        meta = dict(offer.payload.get("metadata") or {})
        meta[CONFIRMED_KEY] = {"text": text, "at": ts}
        self.store.set_payload([offer.id], {"metadata": meta, "source": Source.USER_STATED.value, "updated_at": ts})
