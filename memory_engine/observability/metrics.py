"""Dashboard metrics: one named, parameterised SQL query each over the warehouse.

Definitions are TRACES.md's ("Metric definitions") and SEED_DIGEST.md
section 6. Every function returns a frozen :class:`MetricValue` carrying the
value with its numerator and denominator, so a dashboard shows
``0.62 (31/50)``; an empty window gives ``value=None`` ("no data"), never 0.
SQL does the work; Python only shapes the rows.

Filters (:class:`Filters`) apply to the span the metric is about (the
retrieval for hit rate, latency, degraded share and verdicts; the write for
write efficacy): tenant, user, service, config hash and a time range
``[since, until)`` on the span start time.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from ..errors import ValidationError
from .filters import Filters, span_where, to_ns
from .verdicts import reviewer_agreement
from .warehouse import Warehouse

_where = span_where  # the name other modules used before filters.py

NS_PER_DAY = 86_400 * 1_000_000_000
WILSON_Z_95 = 1.959963984540054
"""Standard normal quantile for a two-sided 95% interval (Wilson 1927)."""


class Bucket(StrEnum):
    """Time series bucket width."""

    HOUR = "hour"
    DAY = "day"


class Metric(StrEnum):
    """Metrics that :func:`metric_timeseries` can bucket."""

    CITATION_HIT_RATE = "citation_hit_rate"
    CITATION_ACCURACY = "citation_accuracy"
    WRITE_EFFICACY = "write_efficacy"
    LATENCY_P50 = "latency_p50"
    LATENCY_P95 = "latency_p95"
    LATENCY_P99 = "latency_p99"
    DEGRADED_SHARE = "degraded_share"


@dataclass(frozen=True)
class MetricValue:
    """A metric value with its parts.

    ``value`` is ``None`` when the window holds no data. ``numerator`` and
    ``denominator`` are the counts behind a ratio (for a latency percentile
    ``numerator`` is ``None`` and ``denominator`` the number of retrievals);
    ``low``/``high`` a confidence interval when the metric has one;
    ``bucket`` the bucket start (UTC) in a time series; ``extra`` metric
    specific details (e.g. ``not_yet_mature`` for write efficacy).
    """

    name: str
    value: float | None
    numerator: float | None
    denominator: int
    unit: str = "ratio"
    low: float | None = None
    high: float | None = None
    bucket: datetime | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def label(self) -> str:
        """Display text: ``0.62 (31/50)``, ``41.2 ms (n=50)`` or ``no data``."""
        if self.value is None:
            return "no data"
        if self.unit == "ms":
            return f"{self.value:.1f} ms (n={self.denominator})"
        num = self.numerator
        num_s = f"{int(num)}" if num is not None and float(num).is_integer() else f"{num}"
        return f"{self.value:.2f} ({num_s}/{self.denominator})"


def _bucket_expr(alias: str, bucket: Bucket | None) -> str:
    if bucket is None:
        return "NULL::TIMESTAMP"
    return f"date_trunc('{Bucket(bucket).value}', make_timestamp({alias}.start_ns // 1000))"


def _aware(dt: Any) -> datetime | None:
    return dt.replace(tzinfo=UTC) if isinstance(dt, datetime) and dt.tzinfo is None else dt


def _ratio(name: str, num: float | None, den: int | None, **kw: Any) -> MetricValue:
    den_i = int(den or 0)
    n = float(num or 0)
    return MetricValue(name, (n / den_i) if den_i else None, n if den_i else (num or 0), den_i, **kw)


def _series(rows: Sequence[tuple[Any, ...]], bucket: Bucket | None, shape: Any) -> list[MetricValue]:
    out = [shape(r, _aware(r[0])) for r in rows]
    return out if bucket is not None else out[:1]


# --- the window holding the metrics' data -----------------------------------------------------------
def data_window(wh: Warehouse, filters: Filters | None = None) -> tuple[datetime | None, datetime | None]:
    """First and last start time (UTC) of the spans the dashboard metrics are about: retrievals
    (hit rate, accuracy, latency, degraded share) and writes (write efficacy) matching the
    tenant/user/service/config filters of ``filters`` (its time range is ignored).

    A dashboard's default window ends here, not at the newest span of any kind: spans that feed
    no metric (another agent's HTTP spans, say) must not push the metrics out of the window.
    ``(None, None)`` when no such span exists.
    """
    f = filters or Filters()
    f = Filters(tenant_id=f.tenant_id, user_id=f.user_id, service=f.service, config_hash=f.config_hash)
    where_r, params_r = span_where(f, "r")
    where_w, params_w = span_where(f, "w")
    row = wh.fetchone(
        f"SELECT min(lo), max(hi) FROM (SELECT min(r.start_ns) AS lo, max(r.start_ns) AS hi FROM retrievals r "
        f"WHERE {where_r} UNION ALL SELECT min(w.start_ns), max(w.start_ns) FROM writes w WHERE {where_w})",
        [*params_r, *params_w],
    )
    if row is None or row[1] is None:
        return None, None
    return (datetime.fromtimestamp(row[0] / 1e9, tz=UTC), datetime.fromtimestamp(row[1] / 1e9, tz=UTC))


# --- citation hit rate ---------------------------------------------------------------------
# Most retrievals have exactly one answer: those join answer to retrieval directly (no list aggregate, and
# the small cited list is what travels through the hash join). Only retrievals with several answers unite
# their citations with list(), as the definition asks. |cited ∩ retrieved| counts distinct ids, like
# list_intersect. (EXPLAIN ANALYZE on 1M spans: 0.53 s with list() over every answer, 0.28 s this way.)
_HIT_RATE_SQL = """
WITH multi AS (
    SELECT retrieve_span_id FROM answers WHERE retrieve_span_id IS NOT NULL
    GROUP BY retrieve_span_id HAVING count(*) > 1
), one AS (
    SELECT {bucket} AS bucket,
           len(list_filter(list_distinct(a.cited_ids), lambda c: list_contains(r.retrieved_ids, c))) AS hits,
           len(r.retrieved_ids) AS n_retrieved
    FROM answers a JOIN retrievals r ON r.span_id = a.retrieve_span_id
    WHERE {where} AND a.retrieve_span_id NOT IN (SELECT retrieve_span_id FROM multi)
), many AS (
    SELECT {bucket} AS bucket, len(list_intersect(r.retrieved_ids, a.cited)) AS hits,
           len(r.retrieved_ids) AS n_retrieved
    FROM (SELECT retrieve_span_id, list_distinct(flatten(list(cited_ids))) AS cited FROM answers
          WHERE retrieve_span_id IN (SELECT retrieve_span_id FROM multi) GROUP BY retrieve_span_id) a
    JOIN retrievals r ON r.span_id = a.retrieve_span_id
    WHERE {where}
)
SELECT bucket, coalesce(sum(hits), 0) AS hits, coalesce(sum(n_retrieved), 0) AS retrieved, count(*) AS retrievals
FROM (SELECT * FROM one UNION ALL SELECT * FROM many)
GROUP BY bucket ORDER BY bucket
"""


def _hit_rate(wh: Warehouse, f: Filters, bucket: Bucket | None) -> list[MetricValue]:
    where, params = span_where(f, "r")
    rows = wh.fetchall(_HIT_RATE_SQL.format(bucket=_bucket_expr("r", bucket), where=where), params + params)
    return _series(
        rows,
        bucket,
        lambda r, b: _ratio("citation_hit_rate", r[1], r[2], bucket=b, extra={"retrievals_with_answer": int(r[3])}),
    )


def citation_hit_rate(wh: Warehouse, filters: Filters | None = None) -> MetricValue:
    """Citation hit rate = sum |cited ∩ retrieved| / sum |retrieved| over
    retrievals with a linked answer (TRACES.md; SEED_DIGEST 6 "hit rate",
    seed 000). Several answers to one retrieval: their citations are united.
    ``extra["retrievals_with_answer"]`` counts the retrievals used."""
    got = _hit_rate(wh, filters or Filters(), None)
    return got[0] if got else MetricValue("citation_hit_rate", None, 0, 0)


# --- latency and degraded share ---------------------------------------------------------------
def _latency(wh: Warehouse, f: Filters, bucket: Bucket | None, percentile: float) -> list[MetricValue]:
    if not 0 <= percentile <= 100:
        raise ValidationError(f"percentile must be in [0, 100], got {percentile}", field="percentile")
    where, params = span_where(f, "r")
    sql = (
        f"SELECT {_bucket_expr('r', bucket)} AS bucket, quantile_cont(r.latency_ms, ?), count(*) "
        f"FROM retrievals r WHERE {where} GROUP BY bucket ORDER BY bucket"
    )
    rows = wh.fetchall(sql, [percentile / 100.0, *params])
    name = f"retrieval_latency_p{percentile:g}"
    return _series(
        rows,
        bucket,
        lambda r, b: MetricValue(name, float(r[1]) if r[2] else None, None, int(r[2]), unit="ms", bucket=b),
    )


def retrieval_latency(wh: Warehouse, filters: Filters | None = None, *, percentile: float = 95.0) -> MetricValue:
    """Retrieval latency percentile in milliseconds (span duration of
    ``memory.retrieve``; linear interpolation, ``quantile_cont``). Seed 000's
    target is p95 < 50 ms. ``denominator`` = retrievals in the window."""
    got = _latency(wh, filters or Filters(), None, percentile)
    return got[0] if got else MetricValue(f"retrieval_latency_p{percentile:g}", None, None, 0, unit="ms")


def _degraded(wh: Warehouse, f: Filters, bucket: Bucket | None) -> list[MetricValue]:
    where, params = span_where(f, "r")
    sql = (
        f"SELECT {_bucket_expr('r', bucket)} AS bucket, count(*) FILTER (WHERE r.degraded), count(*) "
        f"FROM retrievals r WHERE {where} GROUP BY bucket ORDER BY bucket"
    )
    return _series(wh.fetchall(sql, params), bucket, lambda r, b: _ratio("degraded_share", r[1], r[2], bucket=b))


def degraded_share(wh: Warehouse, filters: Filters | None = None) -> MetricValue:
    """Share of retrievals flagged ``memory.degraded`` (a failure made them return empty)."""
    got = _degraded(wh, filters or Filters(), None)
    return got[0] if got else MetricValue("degraded_share", None, 0, 0)


# --- stale memories served -------------------------------------------------------------------------
# A memory's life ends (for retrieval) at the first write that supersedes it; a retrieval after that moment
# that still returns it served a stale memory. Ranks come from the position in retrieved_ids.
_STALE_SQL = """
WITH sup AS (
    SELECT unnest(w.superseded_ids) AS memory_id, min(w.start_ns) AS superseded_ns
    FROM writes w WHERE len(w.superseded_ids) > 0 GROUP BY 1
), rr AS (
    SELECT r.trace_id, r.span_id, r.start_ns,
           unnest(r.retrieved_ids) AS memory_id, generate_subscripts(r.retrieved_ids, 1) AS rank
    FROM retrievals r WHERE {where}
), stale AS (
    SELECT rr.trace_id, rr.span_id, min(rr.rank) AS first_rank
    FROM rr JOIN sup ON sup.memory_id = rr.memory_id AND sup.superseded_ns < rr.start_ns
    GROUP BY 1, 2
)
SELECT {bucket} AS bucket, count(s.span_id) AS stale, count(*) AS retrievals, avg(s.first_rank) AS mean_rank
FROM retrievals r LEFT JOIN stale s ON s.trace_id = r.trace_id AND s.span_id = r.span_id
WHERE {where}
GROUP BY bucket ORDER BY bucket
"""


def stale_served_series(wh: Warehouse, filters: Filters | None = None,
                        bucket: Bucket | str | None = None) -> list[MetricValue]:
    """Share of retrievals that returned a memory an earlier write had superseded (live stale@k),
    overall (``bucket=None``) or per hour/day bucket. ``extra["mean_first_rank"]``: mean rank of the
    first stale hit among those retrievals. Same definition as the evaluation's ``stale@k``
    (docs/metrics.md), measured on live spans instead of replayed cases."""
    f = filters or Filters()
    b = Bucket(bucket) if bucket is not None else None
    where, params = _where(f, "r")
    rows = wh.fetchall(_STALE_SQL.format(bucket=_bucket_expr("r", b), where=where), params + params)
    return _series(rows, b, lambda r, bk: _ratio("stale_served", r[1], r[2], bucket=bk,
                                                 extra={"mean_first_rank": None if r[3] is None else float(r[3])}))


def stale_served(wh: Warehouse, filters: Filters | None = None) -> MetricValue:
    """Live stale@k over the window: see :func:`stale_served_series`."""
    got = stale_served_series(wh, filters)
    return got[0] if got else MetricValue("stale_served", None, 0, 0)


# --- write efficacy -------------------------------------------------------------------------------
# A semi join keeps each mature memory once, at its first retrieval in the window, instead of joining every
# (retrieval, memory) pair and de-duplicating; the bucket of a memory is taken from its first write after
# grouping (date_trunc is monotonic). (EXPLAIN ANALYZE on 1M spans: 0.28-0.51 s before, 0.16 s this way.)
_EFFICACY_SQL = """
WITH w AS (
    SELECT w.memory_id, min(w.start_ns) AS start_ns
    FROM writes w WHERE w.memory_id IS NOT NULL AND list_contains(?, w.outcome) AND {where}
    GROUP BY w.memory_id
), bounds AS (
    SELECT min(start_ns) AS lo, max(start_ns) + ? AS hi FROM w WHERE start_ns <= ?
), r AS (
    SELECT unnest(r.retrieved_ids) AS memory_id, r.start_ns
    FROM retrievals r, bounds WHERE r.start_ns BETWEEN bounds.lo AND bounds.hi
), hit AS (
    SELECT m.memory_id FROM w m SEMI JOIN r
        ON r.memory_id = m.memory_id AND r.start_ns >= m.start_ns AND r.start_ns <= m.start_ns + ?
    WHERE m.start_ns <= ?
)
SELECT {bucket} AS bucket,
       count(*) FILTER (WHERE w.memory_id IN (SELECT memory_id FROM hit)) AS hits,
       count(*) FILTER (WHERE w.start_ns <= ?) AS mature,
       count(*) FILTER (WHERE w.start_ns > ?) AS immature
FROM w GROUP BY ALL ORDER BY 1
"""


def _efficacy(
    wh: Warehouse, f: Filters, bucket: Bucket | None, now: datetime | float, window_days: float,
    outcomes: Sequence[str],
) -> list[MetricValue]:  # fmt: skip
    if window_days <= 0:
        raise ValidationError(f"window_days must be > 0, got {window_days}", field="window_days")
    now_ns = to_ns(now)
    assert now_ns is not None
    win = int(window_days * NS_PER_DAY)
    cutoff = now_ns - win
    where, params = span_where(f, "w")
    sql = _EFFICACY_SQL.format(bucket=_bucket_expr("w", bucket), where=where)
    rows = wh.fetchall(sql, [list(outcomes), *params, win, cutoff, win, cutoff, cutoff, cutoff])
    name = f"write_efficacy_{window_days:g}d"
    return _series(
        rows,
        bucket,
        lambda r, b: _ratio(name, r[1], r[2], bucket=b, extra={"not_yet_mature": int(r[3]), "window_days": window_days}),
    )


def write_efficacy(
    wh: Warehouse,
    filters: Filters | None = None,
    *,
    now: datetime | float,
    window_days: float = 7.0,
    outcomes: Sequence[str] = ("stored",),
) -> MetricValue:
    """7-day write efficacy (seed 000; TRACES.md): share of memories stored in
    the window (write span with an outcome in ``outcomes``) whose id appears in
    ``retrieved_ids`` of a retrieval starting within ``window_days`` after the
    write. Maturity rule: only writes at least ``window_days`` old at ``now``
    count; younger ones are reported in ``extra["not_yet_mature"]``. A low
    value means the write threshold is too loose (seed 000)."""
    got = _efficacy(wh, filters or Filters(), None, now, window_days, outcomes)
    if got:
        return got[0]
    return MetricValue(f"write_efficacy_{window_days:g}d", None, 0, 0, extra={"not_yet_mature": 0, "window_days": window_days})


# --- citation accuracy ------------------------------------------------------------------------------
def wilson_interval(successes: int, n: int, z: float = WILSON_Z_95) -> tuple[float, float] | None:
    """Wilson score interval for a binomial proportion (Wilson 1927, JASA 22:209).

    ``z`` is the normal quantile (1.96 for 95%). Returns ``(low, high)`` in
    [0, 1], or ``None`` when ``n == 0``. Better than the normal approximation
    near 0 and 1 and for small ``n``, which is where reviewer samples live.
    """
    if n <= 0:
        return None
    if not 0 <= successes <= n:
        raise ValidationError(f"successes {successes} not in [0, {n}]", field="successes")
    p = successes / n
    z2 = z * z
    denom = 1 + z2 / n
    centre = (p + z2 / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


# One verdict per citation: the latest one (by judged_at; a tie goes to the reviewer name first in order), so
# two reviewers judging one citation count it once, as its current judgement, not twice.
_ACCURACY_SQL = """
SELECT {bucket} AS bucket,
       count(*) FILTER (WHERE v.verdict = 'correct') AS correct,
       count(*) FILTER (WHERE v.verdict = 'incorrect') AS incorrect,
       count(*) FILTER (WHERE v.verdict = 'unsure') AS unsure
FROM (SELECT * FROM verdicts WHERE (? IS NULL OR reviewer = ?)
      QUALIFY row_number() OVER (PARTITION BY retrieve_span_id, memory_id ORDER BY judged_at DESC, reviewer) = 1) v
LEFT JOIN retrievals r ON r.span_id = v.retrieve_span_id
WHERE {where}
GROUP BY bucket ORDER BY bucket
"""


def _accuracy(wh: Warehouse, f: Filters, bucket: Bucket | None, reviewer: str | None, z: float) -> list[MetricValue]:
    where, params = span_where(f, "r")
    rows = wh.fetchall(_ACCURACY_SQL.format(bucket=_bucket_expr("r", bucket), where=where), [reviewer, reviewer, *params])

    def shape(r: tuple[Any, ...], b: datetime | None) -> MetricValue:
        correct, incorrect, unsure = int(r[1]), int(r[2]), int(r[3])
        n = correct + incorrect
        ci = wilson_interval(correct, n, z)
        return MetricValue(
            "citation_accuracy", correct / n if n else None, correct, n,
            low=ci[0] if ci else None, high=ci[1] if ci else None, bucket=b,
            extra={"unsure": unsure, "reviewer": reviewer},
        )  # fmt: skip

    return _series(rows, bucket, shape)


def citation_accuracy(
    wh: Warehouse, filters: Filters | None = None, *, reviewer: str | None = None, z: float = WILSON_Z_95
) -> MetricValue:
    """Citation accuracy = correct / (correct + incorrect) over reviewer
    verdicts on cited memories, "unsure" excluded (counted in
    ``extra["unsure"]``), with a Wilson interval in ``low``/``high``
    (TRACES.md; seed 000 "human spot checks"). ``reviewer`` restricts to one
    reviewer; otherwise each citation counts once, with its latest verdict
    (two reviewers on one citation give one verdict: the later one; agreement
    between them is what kappa measures). ``extra["agreement"]`` lists Cohen's kappa per
    reviewer pair that judged common citations."""
    f = filters or Filters()
    got = _accuracy(wh, f, None, reviewer, z)
    mv = got[0] if got else MetricValue("citation_accuracy", None, 0, 0, extra={"unsure": 0, "reviewer": reviewer})
    if reviewer is None:
        agreements = reviewer_agreement(wh, f)
        mv = MetricValue(**{**mv.__dict__, "extra": {**mv.extra, "agreement": agreements}})
    return mv


def citation_accuracy_by_reviewer(wh: Warehouse, filters: Filters | None = None) -> dict[str, MetricValue]:
    """:func:`citation_accuracy` per reviewer, keyed by reviewer name."""
    names = [r[0] for r in wh.fetchall("SELECT DISTINCT reviewer FROM verdicts ORDER BY reviewer")]
    return {n: citation_accuracy(wh, filters, reviewer=n) for n in names}


# --- time series ------------------------------------------------------------------------------------
def metric_timeseries(
    wh: Warehouse,
    metric: Metric | str,
    bucket: Bucket | str = Bucket.DAY,
    filters: Filters | None = None,
    *,
    now: datetime | float | None = None,
    window_days: float = 7.0,
    reviewer: str | None = None,
) -> list[MetricValue]:
    """One :class:`MetricValue` per non-empty hour or day bucket (UTC), oldest first.

    ``now`` is required for :attr:`Metric.WRITE_EFFICACY` (buckets by write
    time). Raises ValidationError for an unknown metric or bucket, naming the
    valid ones.
    """
    try:
        metric = Metric(metric)
    except ValueError as e:
        raise ValidationError(f"unknown metric {metric!r}; valid: {', '.join(m.value for m in Metric)}", field="metric") from e
    try:
        bucket = Bucket(bucket)
    except ValueError as e:
        raise ValidationError(f"unknown bucket {bucket!r}; valid: {', '.join(b.value for b in Bucket)}", field="bucket") from e
    f = filters or Filters()
    if metric is Metric.CITATION_HIT_RATE:
        return _hit_rate(wh, f, bucket)
    if metric is Metric.DEGRADED_SHARE:
        return _degraded(wh, f, bucket)
    if metric is Metric.CITATION_ACCURACY:
        return _accuracy(wh, f, bucket, reviewer, WILSON_Z_95)
    if metric is Metric.WRITE_EFFICACY:
        if now is None:
            raise ValidationError("write efficacy needs 'now' (the maturity rule)", field="now")
        return _efficacy(wh, f, bucket, now, window_days, ("stored",))
    pct = {Metric.LATENCY_P50: 50.0, Metric.LATENCY_P95: 95.0, Metric.LATENCY_P99: 99.0}[metric]
    return _latency(wh, f, bucket, pct)


def dashboard(wh: Warehouse, filters: Filters | None = None, *, now: datetime | float) -> dict[str, MetricValue]:
    """Every headline metric for one window, keyed by metric name."""
    f = filters or Filters()
    out = {
        "citation_hit_rate": citation_hit_rate(wh, f),
        "citation_accuracy": citation_accuracy(wh, f),
        "write_efficacy_7d": write_efficacy(wh, f, now=now),
        "degraded_share": degraded_share(wh, f),
    }
    for p in (50, 95, 99):
        out[f"retrieval_latency_p{p}"] = retrieval_latency(wh, f, percentile=p)
    return out
