"""Dev/test splits of golden suites: choose parameters on dev, judge them on test.

A split assigns every case (``suite/case``, the unit that owns a memory
space, so its queries never straddle the split) to ``dev`` or ``test``, by one
of three methods (:class:`SplitMethod`):

- ``file``: suites loaded from the test paths (``--test eval_sets_test``, or
  files named among the suite paths) are test, the rest dev;
- ``tag``: cases carrying the test tag (default ``test``) are test;
- ``stratified``: a seeded split per stratum (category, language): each
  stratum gives ``test_share`` of its cases to test, the rounding remainders
  are distributed by the largest-remainder method (ties broken by the seed) so
  the whole test share is ``round(test_share * n_cases)``. Same seed, same
  suites -> same split.

:meth:`Split.record` is what a run keeps of its split (method, parameters,
membership, counts), so a figure can always be traced to the cases it was
computed on.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import ConfigError
from .suite import ResolvedSuite

DEV = "dev"
TEST = "test"
#: Default tag that puts a case in the test split (``--split-by tag``).
DEFAULT_TEST_TAG = "test"
#: Default share of cases in the test split (``--split-by stratified``).
DEFAULT_TEST_SHARE = 0.3


class SplitMethod(StrEnum):
    FILE = "file"
    TAG = "tag"
    STRATIFIED = "stratified"


@dataclass(frozen=True)
class SplitSpec:
    """How to split. ``test_paths``: files/folders whose suites are test (``file``);
    ``test_tag`` (``tag``); ``test_share`` in (0, 1) and ``seed`` (``stratified``)."""

    method: SplitMethod
    test_paths: tuple[str, ...] = ()
    test_tag: str = DEFAULT_TEST_TAG
    test_share: float = DEFAULT_TEST_SHARE
    seed: int = 0

    def __post_init__(self) -> None:
        if self.method == SplitMethod.FILE and not self.test_paths:
            raise ConfigError("--split-by file needs the test suites: --test PATH (file or folder)")
        if self.method == SplitMethod.STRATIFIED and not 0.0 < self.test_share < 1.0:
            raise ConfigError(f"--test-share must be in (0, 1), got {self.test_share}")
        if self.method == SplitMethod.TAG and not self.test_tag:
            raise ConfigError("--test-tag must not be empty")

    @property
    def label(self) -> str:
        if self.method == SplitMethod.FILE:
            return "file: test = " + ", ".join(self.test_paths)
        if self.method == SplitMethod.TAG:
            return f"tag: test = cases tagged {self.test_tag!r}"
        return f"stratified by category x language: test share {self.test_share:g}, seed {self.seed}"

    def to_dict(self) -> dict[str, Any]:
        return {"method": self.method.value, "test_paths": list(self.test_paths), "test_tag": self.test_tag,
                "test_share": self.test_share, "seed": self.seed}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> SplitSpec:
        return cls(SplitMethod(d["method"]), tuple(d.get("test_paths") or ()), d.get("test_tag", DEFAULT_TEST_TAG),
                   float(d.get("test_share", DEFAULT_TEST_SHARE)), int(d.get("seed", 0)))


@dataclass(frozen=True)
class Split:
    """A split of suites: ``membership[suite/case]`` is ``dev`` or ``test``; ``dev``/``test`` hold
    the suites restricted to their cases (suites left without a case are dropped)."""

    spec: SplitSpec
    membership: dict[str, str]
    dev: tuple[ResolvedSuite, ...]
    test: tuple[ResolvedSuite, ...]

    def suites(self, part: str) -> tuple[ResolvedSuite, ...]:
        """The suites of ``part`` (``dev``/``test``/``all``). Raises ConfigError otherwise."""
        if part == DEV:
            return self.dev
        if part == TEST:
            return self.test
        if part == "all":
            return self.dev + self.test
        raise ConfigError(f"split part must be dev, test or all, got {part!r}")

    def counts(self) -> dict[str, dict[str, int]]:
        """Cases and queries per part: ``{"dev": {"cases": n, "queries": m}, "test": {...}}``."""
        return {p: {"cases": sum(len(s.cases) for s in ss), "queries": sum(s.n_queries for s in ss)}
                for p, ss in ((DEV, self.dev), (TEST, self.test))}

    def record(self) -> dict[str, Any]:
        """What a run keeps of its split: spec, counts and membership (JSON-able)."""
        return {"spec": self.spec.to_dict(), "label": self.spec.label, "counts": self.counts(),
                "membership": dict(sorted(self.membership.items()))}


def _under(path: str, roots: Sequence[Path]) -> bool:
    p = Path(path).resolve()
    return any(p == r or r in p.parents for r in roots)


def _restrict(suites: Iterable[ResolvedSuite], keep: set[str]) -> tuple[ResolvedSuite, ...]:
    out = []
    for s in suites:
        cases = tuple(c for c in s.cases if f"{s.name}/{c.id}" in keep)
        if cases:
            out.append(replace(s, cases=cases))
    return tuple(out)


def _stratified(keys: Sequence[tuple[str, str]], share: float, seed: int) -> set[str]:
    """Test keys of a largest-remainder stratified split; ``keys`` are (case key, stratum)."""
    strata: dict[str, list[str]] = {}
    for key, stratum in keys:
        strata.setdefault(stratum, []).append(key)
    names = sorted(strata)
    ideal = {s: share * len(strata[s]) for s in names}
    quota = {s: int(math.floor(ideal[s])) for s in names}
    rng = np.random.default_rng(seed)
    left = int(round(share * len(keys))) - sum(quota.values())
    ties = rng.random(len(names))  # seeded tie-break among equal remainders
    by_rest = sorted(range(len(names)), key=lambda i: (-(ideal[names[i]] - quota[names[i]]), ties[i]))
    for i in by_rest[: max(0, left)]:
        quota[names[i]] += 1
    test: set[str] = set()
    for s in names:
        members = sorted(strata[s])
        # each stratum gets its own stream, derived from the seed and the stratum name: adding a
        # stratum does not reshuffle the others
        sub = int.from_bytes(hashlib.sha256(f"{seed}\0{s}".encode()).digest()[:8], "big")
        order = np.random.default_rng(sub).permutation(len(members))
        test.update(members[int(i)] for i in order[: quota[s]])
    return test


def make_split(suites: Sequence[ResolvedSuite], spec: SplitSpec,
               test_suites: Sequence[ResolvedSuite] = ()) -> Split:
    """Split ``suites`` (plus ``test_suites``, loaded from ``spec.test_paths`` for ``file``).

    ``file``: every suite of ``test_suites``, and every suite of ``suites`` whose
    file lies under a test path, is test. Raises ConfigError when a part ends
    up empty or a suite name appears on both sides.
    """
    all_suites = list(suites)
    names = {s.name for s in all_suites}
    for t in test_suites:
        if t.name in names:
            raise ConfigError(f"suite {t.name!r} is both in the suite paths and in the test paths")
    all_suites.extend(test_suites)
    keys = [(f"{s.name}/{c.id}", s, c) for s in all_suites for c in s.cases]
    if spec.method == SplitMethod.FILE:
        roots = [Path(p).resolve() for p in spec.test_paths]
        test_names = {t.name for t in test_suites} | {s.name for s in suites if _under(s.path, roots)}
        test = {k for k, s, _ in keys if s.name in test_names}
    elif spec.method == SplitMethod.TAG:
        test = {k for k, _, c in keys if spec.test_tag in c.tags}
    else:
        test = _stratified([(k, f"{c.category}\0{c.lang}") for k, _, c in keys], spec.test_share, spec.seed)
    membership = {k: (TEST if k in test else DEV) for k, _, _ in keys}
    dev_s, test_s = _restrict(all_suites, set(membership) - test), _restrict(all_suites, test)
    if not dev_s:
        raise ConfigError(f"the dev split is empty ({spec.label})")
    if not test_s:
        raise ConfigError(f"the test split is empty ({spec.label})")
    return Split(spec, membership, dev_s, test_s)


def split_of(record: Mapping[str, Any] | None, suite: str, case_id: str) -> str | None:
    """The part (``dev``/``test``) of ``suite/case`` in a :meth:`Split.record`, None without a split."""
    if not record:
        return None
    return (record.get("membership") or {}).get(f"{suite}/{case_id}")




def load_split(paths: Sequence[str | Path], *, test_paths: Sequence[str | Path] = (), method: str | None = None,
               test_tag: str = DEFAULT_TEST_TAG, test_share: float = DEFAULT_TEST_SHARE,
               seed: int = 0) -> tuple[list[ResolvedSuite], Split | None]:
    """Load the suites under ``paths`` (and ``test_paths``) and split them as the CLI options say.

    ``method`` None: ``file`` when ``test_paths`` are given, else no split
    (returns ``(suites, None)``). Test paths that lie under ``paths`` are not
    loaded twice. Raises SuiteErrors (bad suites) and ConfigError (bad split).
    """
    from .suite import expand_paths, load_suites

    if method is None and not test_paths:
        return load_suites(paths), None
    m = SplitMethod(method) if method is not None else SplitMethod.FILE
    spec = SplitSpec(m, tuple(str(p) for p in test_paths), test_tag, test_share, seed)
    suites = load_suites(paths)
    loaded = {Path(s.path).resolve() for s in suites}
    extra = [p for p in expand_paths(test_paths) if p.resolve() not in loaded]
    test_suites = load_suites(extra) if extra else []
    return suites + test_suites, make_split(suites, spec, test_suites)


__all__ = ["DEFAULT_TEST_SHARE", "DEFAULT_TEST_TAG", "DEV", "TEST", "Split", "SplitMethod", "SplitSpec",
           "load_split", "make_split", "split_of"]
