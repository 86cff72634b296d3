"""Reviewer verdicts on cited memories: storage, a stratified sampler, agreement.

A verdict judges one citation, keyed by (retrieval span id, cited memory id,
reviewer): ``correct`` / ``incorrect`` / ``unsure`` with a note and a time.
Judging the same citation again as the same reviewer updates the row. Two
reviewers on one citation give two rows, from which Cohen's kappa is computed
(:func:`reviewer_agreement`). Citation accuracy itself lives in
:func:`memory_engine.observability.metrics.citation_accuracy`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from itertools import combinations

from ..errors import ValidationError
from ..validation import parse_enum
from .filters import Filters, span_where
from .warehouse import Warehouse, _naive


class Verdict(StrEnum):
    """A reviewer's judgement of one cited memory."""

    CORRECT = "correct"
    INCORRECT = "incorrect"
    UNSURE = "unsure"


@dataclass(frozen=True)
class CitationSample:
    """One citation to review: the retrieval, the cited memory (rank 1-based
    in the retrieval, content when the span carried it), the user, the UTC
    day, the query and the answer text."""

    retrieve_span_id: str
    memory_id: str
    user_id: str | None
    day: str
    rank: int | None
    content: str | None
    query: str | None
    answer_text: str | None


@dataclass(frozen=True)
class ReviewerAgreement:
    """Cohen's kappa between two reviewers over the ``n`` citations both
    judged (labels correct/incorrect/unsure); ``observed`` is the raw share
    of equal labels. ``kappa`` is ``None`` when undefined (n = 0, or chance
    agreement is 1 because both used one single label). ``expected`` is the
    chance agreement p_e; ``note`` says in words what the kappa means
    (:func:`kappa_note`)."""

    reviewer_a: str
    reviewer_b: str
    n: int
    observed: float | None
    kappa: float | None
    expected: float | None = None
    note: str = ""


def _checked_verdict(verdict: Verdict | str) -> Verdict:
    return parse_enum(Verdict, verdict, "verdict")


def record_verdict(
    wh: Warehouse,
    retrieve_span_id: str,
    memory_id: str,
    verdict: Verdict | str,
    *,
    reviewer: str,
    note: str | None = None,
    at: datetime | None = None,
    require_citation: bool = True,
) -> None:
    """Store or update one verdict (upsert on span, memory id, reviewer).

    ``at`` is the judgement time (default: now, UTC). With
    ``require_citation`` the retrieval must exist and ``memory_id`` must be
    among its retrieved ids. Raises ValidationError naming the bad field.
    """
    record_verdicts(wh, [(retrieve_span_id, memory_id, verdict, at)], reviewer=reviewer, note=note,
                    require_citation=require_citation)  # fmt: skip


def record_verdicts(
    wh: Warehouse,
    items: Iterable[tuple[str, str, Verdict | str, datetime | None]],
    *,
    reviewer: str,
    note: str | None = None,
    require_citation: bool = True,
) -> int:
    """Store or update many verdicts of one reviewer in one transaction; returns how many.

    ``items``: ``(retrieve_span_id, memory_id, verdict, at)`` each, checked as
    :func:`record_verdict` checks one (``at`` None = now, UTC). All or nothing:
    one bad item raises ValidationError naming the bad field before anything
    is stored. The citation check reads all the retrievals in one query.
    """
    checked = [(span, mid, _checked_verdict(v), at) for span, mid, v, at in items]
    if not reviewer:
        raise ValidationError("reviewer must not be empty", field="reviewer")
    if not checked:
        return 0
    if require_citation:
        spans = sorted({span for span, _, _, _ in checked})
        got = dict(wh.fetchall("SELECT span_id, retrieved_ids FROM retrievals WHERE list_contains(?, span_id)",
                               [spans]))  # fmt: skip
        for span, mid, _, _ in checked:
            if span not in got:
                raise ValidationError(f"no retrieval with span id {span!r}", field="retrieve_span_id")
            if mid not in (got[span] or ()):
                raise ValidationError(f"memory {mid!r} was not retrieved by span {span!r}", field="memory_id")
    now = datetime.now(UTC).replace(tzinfo=None)
    wh.executemany(
        "INSERT OR REPLACE INTO verdicts VALUES (?, ?, ?, ?, ?, ?)",
        [[span, mid, reviewer, v.value, note, _naive(at) if at is not None else now] for span, mid, v, at in checked],
    )
    return len(checked)


def list_verdicts(wh: Warehouse, retrieve_span_id: str | None = None, memory_id: str | None = None) -> list[dict]:
    """Verdict rows (newest first), optionally for one retrieval and/or memory."""
    rows = wh.fetch_dicts(
        "SELECT * FROM verdicts WHERE (? IS NULL OR retrieve_span_id = ?) AND (? IS NULL OR memory_id = ?) "
        "ORDER BY judged_at DESC",
        [retrieve_span_id, retrieve_span_id, memory_id, memory_id],
    )
    for r in rows:
        r["judged_at"] = r["judged_at"].replace(tzinfo=UTC)
    return rows


_CITATIONS_SQL = """
WITH a AS (
    SELECT a.retrieve_span_id, unnest(a.cited_ids) AS memory_id, a.answer_text FROM answers a
), c AS (
    SELECT DISTINCT ON (r.span_id, a.memory_id)
           r.span_id AS retrieve_span_id, a.memory_id, r.user_id,
           strftime(make_timestamp(r.start_ns // 1000), '%Y-%m-%d') AS day,
           list_position(r.retrieved_ids, a.memory_id) AS rank,
           r.retrieved_contents, r.query, a.answer_text
    FROM retrievals r JOIN a ON a.retrieve_span_id = r.span_id
    WHERE {where} AND list_contains(r.retrieved_ids, a.memory_id)
)
SELECT c.retrieve_span_id, c.memory_id, c.user_id, c.day, c.rank,
       CASE WHEN c.rank IS NOT NULL THEN c.retrieved_contents[c.rank] END AS content, c.query, c.answer_text
FROM c
WHERE NOT EXISTS (
    SELECT 1 FROM verdicts v WHERE v.retrieve_span_id = c.retrieve_span_id AND v.memory_id = c.memory_id
      AND (? IS NULL OR v.reviewer = ?)
)
ORDER BY c.user_id, c.day, c.retrieve_span_id, c.memory_id
"""

# The same draw done in SQL, so a queue over 100k retrievals never loads every
# unreviewed citation into Python: a seeded hash orders the strata and the items in
# each stratum; items are taken depth by depth (round-robin over the strata).
_SAMPLE_SQL = """
WITH s AS ({citations}),
ranked AS (
    SELECT s.*,
           row_number() OVER (PARTITION BY s.user_id, s.day
                              ORDER BY hash(s.retrieve_span_id || '|' || s.memory_id || '|' || ?::VARCHAR),
                                       s.retrieve_span_id, s.memory_id) AS depth,
           hash(coalesce(s.user_id, '') || '|' || s.day || '|' || ?::VARCHAR) AS stratum_order
    FROM s
)
SELECT retrieve_span_id, memory_id, user_id, day, rank, content, query, answer_text
FROM ranked
ORDER BY depth, stratum_order, user_id, day
LIMIT ?
"""


def sample_citations(
    wh: Warehouse, n: int, seed: int, filters: Filters | None = None, *, reviewer: str | None = None
) -> list[CitationSample]:
    """Draw up to ``n`` unreviewed citations, stratified by (user, UTC day).

    A citation is a memory id cited by an answer and present in its linked
    retrieval's ``retrieved_ids``. Unreviewed = no verdict yet (by anyone, or
    by ``reviewer`` when given, so a second reviewer can be sampled for
    kappa). Strata are visited round-robin in a seeded order and each stratum
    is shuffled by the same seed (a seeded hash, in SQL), so every user-day is
    represented before any gets a second item; the same seed gives the same
    sample.
    """
    if n < 0:
        raise ValidationError(f"n must be >= 0, got {n}", field="n")
    where, params = span_where(filters or Filters(), "r")
    citations = _CITATIONS_SQL.format(where=where).rsplit("ORDER BY", 1)[0]
    rows = wh.fetchall(_SAMPLE_SQL.format(citations=citations), [*params, reviewer, reviewer, seed, seed, n])
    return [CitationSample(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7]) for r in rows]


def cohen_kappa(labels_a: Sequence[str], labels_b: Sequence[str]) -> float | None:
    """Cohen's kappa (Cohen 1960): (p_o - p_e) / (1 - p_e), with p_o the
    observed agreement and p_e the agreement expected from each rater's label
    frequencies. ``None`` when there are no pairs or p_e = 1."""
    if len(labels_a) != len(labels_b):
        raise ValidationError("label sequences differ in length", field="labels_b")
    n = len(labels_a)
    if n == 0:
        return None
    po = sum(a == b for a, b in zip(labels_a, labels_b, strict=True)) / n
    cats = set(labels_a) | set(labels_b)
    pe = sum((list(labels_a).count(c) / n) * (list(labels_b).count(c) / n) for c in cats)
    if pe >= 1.0:
        return None
    return (po - pe) / (1 - pe)


def reviewer_agreement(wh: Warehouse, filters: Filters | None = None) -> list[ReviewerAgreement]:
    """Cohen's kappa for every reviewer pair that judged at least one common citation."""
    where, params = span_where(filters or Filters(), "r")
    rows = wh.fetchall(
        "SELECT v.retrieve_span_id, v.memory_id, v.reviewer, v.verdict FROM verdicts v "
        f"LEFT JOIN retrievals r ON r.span_id = v.retrieve_span_id WHERE {where} "
        "ORDER BY v.retrieve_span_id, v.memory_id, v.reviewer",
        params,
    )
    by_cite: dict[tuple[str, str], dict[str, str]] = defaultdict(dict)
    for span, mem, reviewer, verdict in rows:
        by_cite[(span, mem)][reviewer] = verdict
    pairs: dict[tuple[str, str], tuple[list[str], list[str]]] = {}
    for judged in by_cite.values():
        for a, b in combinations(sorted(judged), 2):
            la, lb = pairs.setdefault((a, b), ([], []))
            la.append(judged[a])
            lb.append(judged[b])
    out = []
    for (a, b), (la, lb) in sorted(pairs.items()):
        n = len(la)
        po = sum(x == y for x, y in zip(la, lb, strict=True)) / n
        pe = sum((la.count(c) / n) * (lb.count(c) / n) for c in set(la) | set(lb))
        k = cohen_kappa(la, lb)
        out.append(ReviewerAgreement(a, b, n, po, k, pe, kappa_note(n, po, pe, k, sorted(set(la) | set(lb)))))
    return out


# Landis & Koch (1977), Biometrics 33:159, the usual reading of kappa
_KAPPA_BANDS = ((0.0, "poor (below chance)"), (0.2, "slight"), (0.4, "fair"), (0.6, "moderate"),
                (0.8, "substantial"), (1.01, "almost perfect"))  # fmt: skip


def kappa_note(n: int, observed: float, expected: float, kappa: float | None, labels: Sequence[str]) -> str:
    """What a kappa value means, in words: undefined when chance agreement is 1 (both reviewers used one
    single label, so agreement says nothing), 0 when they agree exactly as often as chance predicts, else
    the Landis & Koch band; always with n, observed and chance agreement."""
    base = f"{n} common citations, observed agreement {observed:.2f}, chance {expected:.2f}"
    if kappa is None:
        only = labels[0] if len(labels) == 1 else "one label"
        return f"undefined: both reviewers gave only {only!r}, so agreement cannot be told from chance ({base})"
    if n < 10:
        base += "; fewer than 10 citations: a rough estimate"
    if abs(kappa) < 1e-12:
        return f"0: they agree exactly as often as chance predicts ({base})"
    band = next(name for hi, name in _KAPPA_BANDS if kappa < hi) if kappa >= 0 else _KAPPA_BANDS[0][1]
    return f"{band} ({base})"
