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

__all__ = ["CONFIRMED_KEY", "Confirmer", "author_role", "confirmation_extra_terms", "is_confirmation", "turn_before"]

#: metadata key of a suggestion the user confirmed: {"text": the user's words, "at": epoch seconds}
CONFIRMED_KEY = "_confirmed_by_user"

_AFFIRM = re.compile(
    r"^\W*(?:yes|yeah|yep|yup|ok(?:ay)?|sure|sounds good|perfect|great|alright|fine|deal|cool|let'?s|go ahead|do it)\b|"
    r"^\W*(?:好|行|可以|没问题|就|嗯|对|成|妥|那就|OK|ok)",
    re.IGNORECASE,
)
#: a reference back to the offer, or a verb of taking it
_TAKE = re.compile(
    r"\b(?:that|this|it|those|these|that one|this one|the (?:first|second|third|last|cheaper|latter|former) one)\b|"
    r"\b(?:book|take|reserve|order|buy|get|pick|choose|go with|go for|sign me up)\b|"
    r"它|这个|那个|这家|那家|这款|那款|这件|那件|这里|那里|(?:订|选|定|要|买|约)(?:这|那|它|吧|了|下)",
    re.IGNORECASE,
)
_NEGATED = re.compile(r"\b(?:no|not|don'?t|never|nah|nope)\b|不|别|没|算了", re.IGNORECASE)
_QUESTION = re.compile(r"[?？]|吗\W*$|\b(?:what|which|how|why|when|where|any)\b", re.IGNORECASE)
#: words of the confirmation itself (they name nothing the suggestion lacks)
_OWN_WORDS = frozenset(
    "yes yeah yep yup ok okay sure sound good perfect great alright fine deal cool let go ahead book take reserve order "
    "buy get pick choos choose one first second third last cheaper latter former sign up 好 行 可以 没问题 就 嗯 对 订 选 定 要 "
    "买 约 它 这个 那个 这家 那家 这款 那款 吧 了 啦 就是 就它 就这个 就那个 就这家 就那家 就订 就选 就要 就定 就买 就约".split()
)


def author_role(payload: Mapping[str, Any]) -> str:
    """``user`` for a suggestion the user confirmed (metadata ``_confirmed_by_user``), else the
    payload's role (missing = ``user``)."""
    role = str(payload.get("role") or "user")
    if role != "user" and (payload.get("metadata") or {}).get(CONFIRMED_KEY):
        return "user"
    return role


def is_confirmation(text: str, max_terms: int) -> bool:
    """Whether a user turn only accepts what was just offered (module docstring); pure."""
    t = (text or "").strip()
    if not t or not _AFFIRM.search(t) or not _TAKE.search(t) or _NEGATED.search(t) or _QUESTION.search(t):
        return False
    return len(content_terms(t)) <= max_terms


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

    def offer(self, scope: Scope, session_id: str | None, ts: float) -> ScoredPayload | None:
        if not self.enabled:
            return None
        return turn_before(self.store, scope, session_id, ts, self.window)

    def confirm(self, offer: ScoredPayload, text: str, ts: float) -> None:
        meta = dict(offer.payload.get("metadata") or {})
        meta[CONFIRMED_KEY] = {"text": text, "at": ts}
        self.store.set_payload([offer.id], {"metadata": meta, "source": Source.USER_STATED.value, "updated_at": ts})
