"""Fixtures of the store tests."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture
def fast_tmp(tmp_path: Path) -> Iterator[Path]:
    """A temporary directory in RAM-backed /dev/shm when writable, else ``tmp_path``.

    Creating an edge shard fsyncs once per payload index (~2-4 s on a busy
    disk, ~0.1 s in tmpfs, measured); the engine under test is the same.
    """
    shm = Path("/dev/shm")
    if not (shm.is_dir() and os.access(shm, os.W_OK)):
        yield tmp_path
        return
    d = Path(tempfile.mkdtemp(prefix="memwb-test-", dir=shm))
    try:
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)
