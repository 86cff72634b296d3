"""Readable ``memwb ... --help``: value placeholders and unwrapped docstring paragraphs.

Typer >= 0.20 prints each option's Python annotation as its placeholder (``--explain <bool>``,
``--set <list[str]>``, ``FILES... <list[Path]>``). A flag takes no value, so it gets none; a value gets
the click-style name of what to type (``TEXT``, ``INTEGER``, ``NUMBER``, ``PATH``; ``...`` when the option
repeats or the argument takes several). An option that sets its own ``metavar`` (``--set KEY=VALUE``) keeps
it. Docstring paragraphs are joined into single lines (:func:`unwrap`), so the terminal wraps them.
Applied to every command and group of the ``memwb`` app by :func:`readable_help`.
"""

from __future__ import annotations

import inspect
import re
from typing import Any

from typer.core import TyperCommand, TyperGroup
from typer.models import DefaultPlaceholder

#: Python annotation name -> placeholder shown in help
PLACEHOLDER = {"str": "TEXT", "int": "INTEGER", "float": "NUMBER", "path": "PATH", "Path": "PATH",
               "file": "FILE", "directory": "DIR", "datetime": "DATETIME"}


def placeholder(param: Any, ctx: Any) -> str | None:
    """The placeholder for ``param``: None for a flag (it takes no value), its own metavar when set,
    else :data:`PLACEHOLDER` of the annotation (``list[X]`` -> ``X...``; a choice keeps its ``a|b|c``)."""
    if getattr(param, "is_flag", False) or getattr(param, "count", False):
        return None
    if param.metavar is not None and param.param_type_name == "option":
        return param.metavar
    try:
        raw = type(param).display_type_rich(param, ctx)  # type: ignore[attr-defined]
    except AttributeError:
        return None
    if raw is None:
        return None
    label = raw.strip("<>").removesuffix("...")
    many = raw.endswith("...") or label.startswith("list[") or getattr(param, "multiple", False)
    m = re.fullmatch(r"list\[(.*)\]", label)
    inner = m.group(1) if m else label
    if "|" in inner:
        out = inner
    elif inner.endswith(" range"):  # the bounds follow from Typer itself: INTEGER [1<=x<=65535]
        out = PLACEHOLDER.get(inner.removesuffix(" range"), inner.upper())
    else:
        out = PLACEHOLDER.get(inner, inner.upper())
    return out + ("..." if many else "")


def _readable(params: list[Any], ctx: Any) -> list[Any]:
    for p in params:
        label = placeholder(p, ctx)
        p.display_type_rich = lambda ctx, _label=label: _label  # type: ignore[attr-defined]
    return params


def unwrap(text: str | None) -> str | None:
    """A docstring's paragraphs as single lines (paragraphs stay apart, a ``\\b`` paragraph and list items
    starting with ``-`` / ``*`` keep their lines): Typer's rich help keeps a docstring's line breaks, so
    ``memwb --help`` cut each summary where the source line ended ("... differs from the" / "built-in ...")."""
    if not text:
        return text
    out = []
    for para in inspect.cleandoc(text).split("\n\n"):
        if para.startswith("\b"):
            out.append(para)
            continue
        lines: list[str] = []
        for line in para.splitlines():
            item = line.lstrip().startswith(("- ", "* "))
            if lines and not item:
                lines[-1] = f"{lines[-1]} {line.strip()}"
            else:
                lines.append(line.strip() if not item else line.rstrip())
        out.append("\n".join(lines))
    return "\n\n".join(out)


class MemwbCommand(TyperCommand):
    """A Typer command whose help shows :func:`placeholder`s and unwrapped docstring paragraphs."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.help = unwrap(self.help)

    def get_params(self, ctx: Any) -> list[Any]:  # ctx: Typer's click Context
        return _readable(super().get_params(ctx), ctx)


class MemwbGroup(TyperGroup):
    """A Typer group whose help (``memwb --help``, ``memwb lifecycle --help``) shows :func:`placeholder`s and
    unwrapped docstring paragraphs."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.help = unwrap(self.help)

    def get_params(self, ctx: Any) -> list[Any]:  # ctx: Typer's click Context
        return _readable(super().get_params(ctx), ctx)


def _unset(cls: Any, default: type) -> bool:
    """True when a command's ``cls`` is Typer's own default (None, a DefaultPlaceholder or ``default``)."""
    return cls is None or isinstance(cls, DefaultPlaceholder) or cls is default


def readable_help(typer_app: Any) -> Any:
    """Give every command and sub-group registered on ``typer_app`` (a ``typer.Typer``), recursively, the
    readable help classes unless it chose a ``cls`` of its own; returns ``typer_app``."""
    if _unset(typer_app.info.cls, TyperGroup):
        typer_app.info.cls = MemwbGroup
    for cmd in typer_app.registered_commands:
        if _unset(cmd.cls, TyperCommand):
            cmd.cls = MemwbCommand
    for grp in typer_app.registered_groups:
        if _unset(grp.cls, TyperGroup):
            grp.cls = MemwbGroup
        readable_help(grp.typer_instance)
    return typer_app
