"""The frozen held-out test split (``eval_sets_test/``, issue 16) loads with the strict loader.

Asserts its size and language mix only, never pass rates: the split measures
the engine, it is not tuned to it.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from memory_engine.evaluation.suite import expand_paths, load_suites

SPLIT = Path(__file__).resolve().parents[2] / "eval_sets_test"
GOLDEN = Path(__file__).resolve().parents[2] / "eval_sets"

#: One file per failure class of issue 16.
CLASS_FILES = {
    "write_gate.yaml",
    "dates.yaml",
    "floor_short_crosslang.yaml",
    "facts_by_meaning.yaml",
    "multi_hop.yaml",
    "updates_forgetting.yaml",
    "hygiene.yaml",
    "pii.yaml",
    "supersession_safety.yaml",
}


def test_every_file_loads_strictly_and_counts_hold() -> None:
    suites = load_suites([SPLIT])
    assert {Path(s.path).name for s in suites} == CLASS_FILES
    cases = [c for s in suites for c in s.cases]
    assert len(cases) >= 60
    langs = Counter(c.lang for c in cases)
    assert set(langs) <= {"zh", "en", "mixed"}
    assert langs["zh"] * 2 >= len(cases), langs
    assert langs["mixed"] > 0
    for s in suites:
        assert len(s.cases) >= 5, s.name
        assert all(c.category for c in s.cases)


def test_split_is_disjoint_from_the_golden_suites() -> None:
    # The split lives outside eval_sets/ so `memwb ci eval_sets` and its baseline
    # never see it, and its suite names do not clash when both are loaded together.
    assert not any(p.resolve().is_relative_to(GOLDEN.resolve()) for p in expand_paths([SPLIT]))
    both = load_suites([GOLDEN, SPLIT])
    assert len({s.name for s in both}) == len(both)
