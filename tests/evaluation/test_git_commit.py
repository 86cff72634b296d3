"""An eval run records the commit of the code that ran it, not of the shell's working directory."""

import subprocess
from pathlib import Path

import pytest

import memory_engine
from memory_engine.evaluation.runner import git_commit


def _head(where: Path) -> str | None:
    out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=where, capture_output=True, text=True, check=False)
    return out.stdout.strip() if out.returncode == 0 else None


@pytest.mark.unit
def test_commit_is_the_running_package_s_not_the_working_directory_s(tmp_path, monkeypatch):
    other = tmp_path / "other-checkout"
    other.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=other, check=True)
    (other / "f").write_text("x")
    subprocess.run(["git", "add", "f"], cwd=other, check=True)
    subprocess.run(
        ["git", "-c", "user.email=a@b", "-c", "user.name=a", "commit", "-q", "-m", "x"], cwd=other, check=True
    )
    monkeypatch.chdir(other)
    package_dir = Path(memory_engine.__file__).resolve().parent
    expected = _head(package_dir)
    assert git_commit() == expected
    assert git_commit() != _head(other)  # the shell's checkout is not what ran
    assert git_commit(other) == _head(other)  # an explicit folder is still honoured


@pytest.mark.unit
def test_outside_git_is_none(tmp_path):
    assert git_commit(tmp_path) is None
