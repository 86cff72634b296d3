"""The engine installs and runs without the workbench: optional dependencies stay optional."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: what `import memory_engine` and the engine must never pull (they belong to extras)
EXTRAS_ONLY = ("streamlit", "optuna", "ragas", "torch", "sentence_transformers", "plotly", "langchain_community",
               "starlette", "uvicorn", "openai")


def _run(code: str) -> str:
    res = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, cwd=ROOT,
                         env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]
    return res.stdout


def test_importing_the_engine_pulls_no_extra():
    out = _run(f"""
        import sys
        import memory_engine
        from memory_engine import MemoryEngine, EngineConfig, open_workspace
        import memory_engine.engine, memory_engine.workspace, memory_engine.cli
        print(sorted(m for m in {EXTRAS_ONLY!r} if m in sys.modules))
    """)
    assert out.strip() == "[]"


@pytest.mark.slow
def test_the_engine_and_its_cli_work_with_the_extras_missing(tmp_path):
    # a finder that refuses every extra: what a `pip install memwb` without extras sees
    out = _run(f"""
        import sys
        from importlib.abc import MetaPathFinder

        class NoExtras(MetaPathFinder):
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in {EXTRAS_ONLY!r}:
                    raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
                return None

        sys.meta_path.insert(0, NoExtras())
        from typer.testing import CliRunner
        from memory_engine import EngineConfig, open_workspace
        from memory_engine.cli import load_commands, missing_extra

        with open_workspace(EngineConfig(workspace={str(tmp_path / "ws")!r})) as ws:
            assert ws.engine.add("I always travel to Zanzibar in July", user_id="u1").outcome == "stored"
            assert ws.engine.retrieve("When do I travel to Zanzibar?", user_id="u1").hits
        app = load_commands()
        r = CliRunner().invoke(app, ["retrieve", "Zanzibar", "--user", "u1", "--workspace", {str(tmp_path / "ws")!r}])
        assert r.exit_code == 0 and "Zanzibar" in r.stdout, r.output
        r = CliRunner().invoke(app, ["timeline", "nope", "--workspace", {str(tmp_path / "ws")!r}])
        assert r.exit_code == 1, r.output
        try:
            import optuna  # noqa: F401
        except ModuleNotFoundError as e:
            assert missing_extra(e) == "sweep"
        print("ok")
    """)
    assert out.strip().endswith("ok")


def test_extras_declared_and_dev_installs_everything():
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    core = " ".join(meta["dependencies"])
    extras = meta["optional-dependencies"]
    for pkg in ("streamlit", "optuna", "ragas", "torch", "sentence-transformers", "starlette", "plotly"):
        assert pkg not in core, pkg
    assert {"app", "eval", "sweep", "collector", "st", "all", "dev"} <= set(extras)
    assert "torch==2.13.0" in extras["st"] and "langchain-community<0.4" in extras["eval"]
    assert "memwb[all,testing]" in extras["dev"]
    assert set(extras["all"][0][6:-1].split(",")) == set(extras) - {"all", "dev", "testing"}
    make = (ROOT / "Makefile").read_text()
    assert make.index("torch==2.13.0") < make.index("-e '.[dev]'")  # torch first, pinned, then everything
