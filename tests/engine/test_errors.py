"""One exception hierarchy: every public error class lives in errors.py and derives
from MemoryEngineError; no bare builtin error escapes the library; the builtin
mixins callers rely on stay."""

from __future__ import annotations

import ast
import inspect
import re
from pathlib import Path

import pytest

from memory_engine import errors
from memory_engine.errors import MemoryEngineError

PKG = Path(__file__).resolve().parents[2] / "memory_engine"
BUILTIN = {"Exception", "ValueError", "KeyError", "RuntimeError", "TypeError", "OSError", "LookupError"}


def test_every_error_class_derives_from_the_root():
    classes = [c for _, c in inspect.getmembers(errors, inspect.isclass) if issubclass(c, BaseException)]
    assert len(classes) >= 15
    assert all(issubclass(c, MemoryEngineError) for c in classes)


def test_public_exception_classes_live_in_errors_py():
    elsewhere = []
    for path in PKG.rglob("*.py"):
        if path.name == "errors.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                bases = {b.id if isinstance(b, ast.Name) else getattr(b, "attr", "") for b in node.bases}
                if bases & BUILTIN or any(b.endswith("Error") for b in bases):
                    elsewhere.append(f"{path.relative_to(PKG)}:{node.name}")
    assert elsewhere == []


def test_no_bare_builtin_error_is_raised():
    bare = []
    for path in PKG.rglob("*.py"):
        lines = path.read_text(encoding="utf-8").splitlines()
        for i, line in enumerate(lines):
            if re.search(r"raise (ValueError|KeyError|RuntimeError|TypeError)\(", line):
                # allowed: a broken third-party invariant, or a type a stdlib protocol demands (json default=)
                if not any(w in lines[i - 1] for w in ("invariant", "protocol")):
                    bare.append(f"{path.relative_to(PKG)}:{i + 1}")
    assert bare == []


@pytest.mark.parametrize(("cls", "mixin"), [
    (errors.ValidationError, ValueError), (errors.ConfigError, ValueError), (errors.SpanRejected, ValueError),
    (errors.NotFoundError, KeyError), (errors.StartupError, RuntimeError),
])
def test_builtin_mixins(cls, mixin):
    assert issubclass(cls, mixin) and issubclass(cls, MemoryEngineError)


def test_old_import_paths_still_work():
    from memory_engine.evaluation.ci import BaselineError
    from memory_engine.evaluation.suite import SuiteErrors
    from memory_engine.evaluation.sweep import SweepError
    from memory_engine.lifecycle.llm import LLMError
    from memory_engine.lifecycle.reembed import ReembedError
    from memory_engine.lifecycle.writer import WriterBackpressure
    from memory_engine.observability.records import SpanRejected

    assert {BaselineError, SuiteErrors, SweepError, LLMError, ReembedError, WriterBackpressure, SpanRejected} <= {
        c for _, c in inspect.getmembers(errors, inspect.isclass)}


def test_store_filter_without_owner_is_a_validation_error():
    from memory_engine.store.base import StoreFilter

    with pytest.raises(errors.ValidationError):
        StoreFilter(tenant_id="t", user_id=None)
