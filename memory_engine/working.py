"""Session working memory and prompt-context assembly (SEED_DIGEST section 1).

Per session (owner + session id) the :class:`WorkingMemory` keeps the raw
turns, a rolling summary and an idle TTL (``working.ttl_minutes``). The
conversation block is the summary plus every turn it does not cover; when that
block passes ``summary_trigger`` (80 %, seed 004) of ``conversation_tokens``,
every turn except the last ``recent_turns`` (N = 4, seed 003: 3..5) is folded
into the summary. The summary is always rebuilt from the raw turns it covers
(one level only, never a summary of a summary, seed 003) and names the turn
ids it covers, so a summary and the raw turns of the same span never both
reach the context.

:func:`build_context` assembles the blocks a prompt needs - system, summary,
recent turns, retrieved memories with ``[mem-<id>]`` ids - each within its
budget (seed 004: 8K window = 2K system + 2.5K conversation + 1.5K memory, the
rest for the output), counting tokens with the real tokenizer of
:func:`memory_engine.text.count_tokens`. When the conversation does not fit,
the newest turns win and the summary is shortened first.

Summarisers: :class:`ExtractiveSummariser` (default, rule-based: keeps
sentences carrying confirmed facts, decisions, numbers and ids) and
:class:`LLMSummariser` (any OpenAI-compatible endpoint, see
:mod:`memory_engine.lifecycle.llm`).
"""

from __future__ import annotations

import re
import threading
import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from .config import WorkingSection
from .errors import NotFoundError, ValidationError
from .text import count_tokens, identifiers
from .validation import epoch_now
from .write import rules

if TYPE_CHECKING:
    from .lifecycle.llm import ChatClient
    from .ports import Retriever

__all__ = [
    "Block",
    "ContextBundle",
    "ConversationView",
    "ExtractiveSummariser",
    "LLMSummariser",
    "SessionState",
    "Summariser",
    "Turn",
    "WorkingMemory",
    "build_context",
    "sessions_for",
    "truncate_tokens",
]

_SENTENCE = re.compile(r"[^。！？!?；;\n.]+(?:[。！？!?；;.]+|$)")
_NUMBER = re.compile(r"\d")
_ROLES = ("user", "assistant", "system", "tool")


def truncate_tokens(text: str, max_tokens: int) -> str:
    """Longest prefix of ``text`` with at most ``max_tokens`` tokens (real tokenizer), cut at a character."""
    if max_tokens <= 0:
        return ""
    if count_tokens(text) <= max_tokens:
        return text
    lo, hi = 0, len(text)
    while lo < hi:  # binary search on the character count: token counts grow monotonically with the prefix
        mid = (lo + hi + 1) // 2
        if count_tokens(text[:mid]) <= max_tokens:
            lo = mid
        else:
            hi = mid - 1
    return text[:lo]


@dataclass(frozen=True)
class Turn:
    """One raw turn: ``turn_id`` (``t1``, ``t2``... per session), role, text, time (epoch s), tokens."""

    turn_id: str
    role: str
    text: str
    at: float
    tokens: int

    def render(self) -> str:
        return f"[{self.turn_id}] {self.role}: {self.text}"


@runtime_checkable
class Summariser(Protocol):
    """Turns a span of raw turns into a summary of at most ``max_tokens`` tokens
    that keeps confirmed facts, numbers and ids (seed 003). Raises on failure."""

    def summarise(self, turns: Sequence[Turn], max_tokens: int) -> str: ...


def _span_label(turns: Sequence[Turn]) -> str:
    return turns[0].turn_id if len(turns) == 1 else f"{turns[0].turn_id}-{turns[-1].turn_id}"


class ExtractiveSummariser:
    """Rule-based summary: sentences of the covered turns ranked by what seed 003
    says a summary must keep - decisions/confirmations, identifiers, numbers,
    facts and preferences, open questions - each cited by its turn id, in
    conversation order, within ``max_tokens``. Chit-chat is never kept.

    ``weights`` score each signal (decision, identifier, number, fact,
    preference, question); a sentence needs ``min_score`` to be kept.
    """

    def __init__(self, weights: dict[str, float] | None = None, min_score: float = 1.0) -> None:
        self.weights = {"decision": 3.0, "identifier": 3.0, "number": 2.0, "fact": 2.0, "preference": 2.0,
                        "question": 1.0, **(weights or {})}
        self.min_score = min_score

    def score(self, sentence: str) -> float:
        sig = rules.signals(sentence)
        w = self.weights
        s = 0.0
        s += w["decision"] if sig.decision else 0.0
        s += w["identifier"] if (sig.identifier or identifiers(sentence)) else 0.0
        s += w["number"] if _NUMBER.search(sentence) else 0.0
        s += w["fact"] if sig.factual else 0.0
        s += w["preference"] if sig.preference else 0.0
        s += w["question"] if sig.uncertain else 0.0
        return s

    def summarise(self, turns: Sequence[Turn], max_tokens: int) -> str:
        if not turns:
            return ""
        header = f"Summary of turns {_span_label(turns)}:"
        cands: list[tuple[float, int, str]] = []
        order = 0
        for t in turns:
            for m in _SENTENCE.finditer(t.text):
                sent = m.group(0).strip()
                if not sent or rules.reject_reason(sent):
                    continue
                s = self.score(sent)
                if s >= self.min_score:
                    cands.append((s, order, f"- ({t.turn_id} {t.role}) {sent}"))
                order += 1
        budget = max_tokens - count_tokens(header)
        chosen: list[tuple[int, str]] = []
        used = 0
        for _s, o, line in sorted(cands, key=lambda c: (-c[0], c[1])):
            n = count_tokens(line)
            if used + n <= budget:
                chosen.append((o, line))
                used += n
        lines = [line for _, line in sorted(chosen)]
        if not lines:
            lines = ["- (no confirmed facts, numbers or ids)"]
        return truncate_tokens("\n".join([header, *lines]), max_tokens)


class LLMSummariser:
    """Summary by an LLM through a :class:`~memory_engine.lifecycle.llm.ChatClient`;
    the output is prefixed with the covered turn ids and cut to ``max_tokens``.
    ``fallback`` (default extractive) is used when the call fails."""

    SYSTEM = ("You compress a conversation for an assistant's working memory. Keep the user's demands, confirmed "
              "facts, conclusions, open issues, every number and every identifier exactly. Cite the turn id in "
              "parentheses after each point, e.g. '(t3)'. Plain bullet points, no preamble.")

    def __init__(self, client: ChatClient, fallback: Summariser | None = None) -> None:
        self.client = client
        self.fallback = fallback or ExtractiveSummariser()

    def summarise(self, turns: Sequence[Turn], max_tokens: int) -> str:
        if not turns:
            return ""
        from .lifecycle.llm import LLMError

        body = "\n".join(t.render() for t in turns)
        try:
            text = self.client.complete(self.SYSTEM, f"Summarise in at most {max_tokens} tokens:\n{body}").strip()
        except LLMError:
            return self.fallback.summarise(turns, max_tokens)
        return truncate_tokens(f"Summary of turns {_span_label(turns)}:\n{text}", max_tokens)


@dataclass
class SessionState:
    """Mutable state of one session (guarded by :class:`WorkingMemory`'s lock)."""

    tenant_id: str
    user_id: str
    session_id: str
    turns: list[Turn] = field(default_factory=list)
    summary: str | None = None
    summary_turn_ids: tuple[str, ...] = ()
    last_active: float = 0.0
    next_turn: int = 1

    @property
    def unsummarised(self) -> list[Turn]:
        covered = set(self.summary_turn_ids)
        return [t for t in self.turns if t.turn_id not in covered]


@dataclass(frozen=True)
class ConversationView:
    """What the conversation block holds: the summary (or None), the turn ids it
    covers, and the raw turns it does not cover (oldest first)."""

    summary: str | None
    summary_turn_ids: tuple[str, ...]
    turns: tuple[Turn, ...]


class WorkingMemory:
    """Per-session working memory with idle TTL, in process (thread-safe).

    ``config``: the ``working`` section (recent_turns, ttl_minutes,
    summary_trigger, conversation_tokens); ``summary_tokens``: the summary's
    token cap (seed 003: 200..300 characters; default ``working.summary_tokens`` when the
    config has it, else 300 tokens, at most half of ``conversation_tokens``);
    ``summariser``: default :class:`ExtractiveSummariser`.
    """

    def __init__(self, config: WorkingSection | None = None, *, summariser: Summariser | None = None,
                 summary_tokens: int | None = None) -> None:
        self.config = config or WorkingSection()
        cap = summary_tokens
        if cap is None:  # seed 003's 200..300 characters, never more than half the conversation block
            cap = min(getattr(self.config, "summary_tokens", 300), max(1, self.config.conversation_tokens // 2))
        if cap < 1 or cap >= self.config.conversation_tokens:
            raise ValidationError("summary_tokens must be >= 1 and below working.conversation_tokens",
                                  field="summary_tokens")
        self.summary_tokens = cap
        self.summariser = summariser or ExtractiveSummariser()
        self._sessions: dict[tuple[str, str, str], SessionState] = {}
        self._lock = threading.RLock()

    def _key(self, user_id: str, session_id: str, tenant_id: str) -> tuple[str, str, str]:
        for name, v in (("user_id", user_id), ("session_id", session_id), ("tenant_id", tenant_id)):
            if not isinstance(v, str) or not v.strip():
                raise ValidationError(f"{name} is required for working memory", field=name)
        return (tenant_id, user_id, session_id)

    def _expired(self, st: SessionState, ts: float) -> bool:
        return ts - st.last_active > self.config.ttl_minutes * 60.0

    def session(self, user_id: str, session_id: str, *, tenant_id: str = "default",
                now: datetime | None = None) -> SessionState | None:
        """The live session, or None (never seen or idle past the TTL, which drops it)."""
        key = self._key(user_id, session_id, tenant_id)
        ts = epoch_now(now)
        with self._lock:
            st = self._sessions.get(key)
            if st is not None and self._expired(st, ts):
                del self._sessions[key]
                return None
            return st

    def expire(self, now: datetime | None = None) -> int:
        """Drop every session idle for longer than the TTL; returns how many."""
        ts = epoch_now(now)
        with self._lock:
            dead = [k for k, st in self._sessions.items() if self._expired(st, ts)]
            for k in dead:
                del self._sessions[k]
            return len(dead)

    def add_turn(self, text: str, *, user_id: str, session_id: str, role: str = "user", tenant_id: str = "default",
                 now: datetime | None = None) -> Turn:
        """Append a turn (a session idle past the TTL starts afresh) and fold old
        turns into the summary when the conversation block passes the trigger."""
        key = self._key(user_id, session_id, tenant_id)
        if not isinstance(text, str):
            raise ValidationError("text must be a string", field="text")
        if role not in _ROLES:
            raise ValidationError(f"role must be one of {list(_ROLES)}", field="role")
        ts = epoch_now(now)
        with self._lock:
            st = self._sessions.get(key)
            if st is None or self._expired(st, ts):
                st = self._sessions[key] = SessionState(tenant_id, user_id, session_id, last_active=ts)
            turn = Turn(f"t{st.next_turn}", role, text, ts, count_tokens(text))
            st.next_turn += 1
            st.turns.append(turn)
            st.last_active = ts
            self._maybe_summarise(st)
            return turn

    def block_tokens(self, st: SessionState) -> int:
        """Tokens of the conversation block: summary + uncovered turns, as rendered."""
        n = count_tokens(st.summary) if st.summary else 0
        return n + sum(count_tokens(t.render()) for t in st.unsummarised)

    def _maybe_summarise(self, st: SessionState) -> None:
        cfg = self.config
        if self.block_tokens(st) <= cfg.summary_trigger * cfg.conversation_tokens:
            return
        keep = cfg.recent_turns
        fold_upto = len(st.turns) - keep if keep else len(st.turns)
        covered = st.turns[:fold_upto]
        if not covered or tuple(t.turn_id for t in covered) == st.summary_turn_ids:
            return
        # one level only: the summary is rebuilt from the raw turns it covers, never from the old summary
        st.summary = self.summariser.summarise(covered, self.summary_tokens)
        st.summary_turn_ids = tuple(t.turn_id for t in covered)

    def view(self, user_id: str, session_id: str, *, tenant_id: str = "default",
             now: datetime | None = None) -> ConversationView:
        """The conversation block's parts (empty for an unknown or expired session)."""
        st = self.session(user_id, session_id, tenant_id=tenant_id, now=now)
        if st is None:
            return ConversationView(None, (), ())
        with self._lock:
            return ConversationView(st.summary, st.summary_turn_ids, tuple(st.unsummarised))

    def drop_user(self, user_id: str, *, tenant_id: str = "default") -> int:
        """Forget every session of one owner (erase); returns how many went."""
        with self._lock:
            gone = [k for k, st in self._sessions.items() if st.user_id == user_id and st.tenant_id == tenant_id]
            for k in gone:
                del self._sessions[k]
            return len(gone)

    def __len__(self) -> int:
        return len(self._sessions)


_REGISTRY: weakref.WeakKeyDictionary[object, WorkingMemory] = weakref.WeakKeyDictionary()
_REGISTRY_LOCK = threading.Lock()


def sessions_for(eng: Retriever) -> WorkingMemory:
    """The working memory of an engine: ``eng.working`` when the engine has one,
    else one kept per engine object here (created from ``eng.config.working``)."""
    wm = getattr(eng, "working", None)
    if isinstance(wm, WorkingMemory):
        return wm
    with _REGISTRY_LOCK:
        wm = _REGISTRY.get(eng)
        if wm is None:
            wm = _REGISTRY[eng] = WorkingMemory(eng.config.working)
        return wm


@dataclass(frozen=True)
class Block:
    """One context block: ``name`` (system | summary | recent_turns | memories),
    rendered ``text``, its ``tokens`` (real tokenizer), the ``budget`` it had,
    and the ids it carries (turn ids or memory ids)."""

    name: str
    text: str
    tokens: int
    budget: int
    ids: tuple[str, ...] = ()
    truncated: bool = False


@dataclass(frozen=True)
class ContextBundle:
    """The assembled context: blocks in prompt order, total tokens, the
    retrieval used for the memory block (its span id links answers), and the
    turn ids left out because the conversation budget was full."""

    blocks: tuple[Block, ...]
    total_tokens: int
    context_tokens: int
    memory_ids: tuple[str, ...] = ()
    dropped_turn_ids: tuple[str, ...] = ()
    retrieve_span_id: str | None = None
    degraded: bool = False

    def block(self, name: str) -> Block:
        for b in self.blocks:
            if b.name == name:
                return b
        raise NotFoundError(name)

    def render(self) -> str:
        """Blocks joined in order, empty ones skipped."""
        return "\n\n".join(b.text for b in self.blocks if b.text)


def _fit_lines(lines: Sequence[str], budget: int) -> list[str]:
    """Longest prefix of ``lines`` whose joined text stays within ``budget`` tokens."""
    out: list[str] = []
    for line in lines:
        if count_tokens("\n".join([*out, line])) > budget:
            break
        out.append(line)
    return out


def build_context(
    eng: Retriever,
    query: str,
    *,
    user_id: str,
    session_id: str | None = None,
    tenant_id: str = "default",
    system: str = "",
    now: datetime | None = None,
    top_k: int | None = None,
    working: WorkingMemory | None = None,
) -> ContextBundle:
    """Assemble system, summary, recent turns and retrieved memories within budgets.

    Budgets (tokens) come from the working memory's config (``working`` or the
    engine's, i.e. ``eng.config.working``): ``system_tokens`` for the system
    block (a longer system prompt is cut and flagged ``truncated``);
    ``conversation_tokens`` shared by summary and recent turns - newest turns
    first, the summary shortened before any turn is dropped, dropped turn ids
    reported; ``memory_tokens`` for ``[mem-<id>] content`` lines of
    ``eng.retrieve(query, ...)`` in rank order. Every block's ``tokens`` <= its
    ``budget`` and the total <= ``context_tokens``. Raises ValidationError for a
    missing owner or budgets that exceed the window; a failed retrieval gives an
    empty memory block with ``degraded=True``.
    """
    wm = working or sessions_for(eng)
    cfg = wm.config
    if cfg.system_tokens + cfg.conversation_tokens + cfg.memory_tokens > cfg.context_tokens:
        raise ValidationError("working.system_tokens + conversation_tokens + memory_tokens exceed context_tokens",
                              field="working")
    blocks: list[Block] = []

    sys_text = truncate_tokens(system, cfg.system_tokens)
    blocks.append(Block("system", sys_text, count_tokens(sys_text), cfg.system_tokens, (), sys_text != system))

    view = wm.view(user_id, session_id, tenant_id=tenant_id, now=now) if session_id else ConversationView(None, (), ())
    conv_budget = cfg.conversation_tokens
    turns = list(view.turns)
    # newest turns first: keep as many as fit, then give the summary what is left
    kept: list[Turn] = []
    for t in reversed(turns):
        if count_tokens("\n".join(x.render() for x in [t, *kept])) > conv_budget:
            break
        kept.insert(0, t)
    cut_newest = False
    if not kept and turns:  # a single newest turn longer than the whole budget: cut it
        t = turns[-1]
        head = f"[{t.turn_id}] {t.role}: "
        cut = truncate_tokens(t.text, max(0, conv_budget - count_tokens(head)))
        kept = [Turn(t.turn_id, t.role, cut, t.at, count_tokens(cut))]
        cut_newest = True
    recent_text = "\n".join(t.render() for t in kept)
    recent_tokens = count_tokens(recent_text)
    dropped = tuple(t.turn_id for t in turns[: len(turns) - len(kept)])
    summary_text = ""
    summary_trunc = False
    if view.summary:
        room = conv_budget - recent_tokens
        summary_text = truncate_tokens(view.summary, room)
        summary_trunc = summary_text != view.summary
    blocks.append(Block("summary", summary_text, count_tokens(summary_text), conv_budget - recent_tokens,
                        view.summary_turn_ids if summary_text else (), summary_trunc))
    blocks.append(Block("recent_turns", recent_text, recent_tokens, conv_budget,
                        tuple(t.turn_id for t in kept), bool(dropped) or cut_newest))

    res = eng.retrieve(query, user_id=user_id, tenant_id=tenant_id, session_id=session_id, top_k=top_k, now=now)
    lines = [f"[mem-{h.memory_id}] {h.content}" for h in res.hits]
    fit = _fit_lines(lines, cfg.memory_tokens)
    mem_text = "\n".join(fit)
    mem_ids = tuple(h.memory_id for h in res.hits[: len(fit)])
    blocks.append(Block("memories", mem_text, count_tokens(mem_text), cfg.memory_tokens, mem_ids, len(fit) < len(lines)))

    total = sum(b.tokens for b in blocks)
    return ContextBundle(tuple(blocks), total, cfg.context_tokens, mem_ids, dropped, res.span_id, res.degraded)
