"""Progress display of long ``memwb`` commands (eval, ci, the demo build of ``memwb app`` / ``memwb demo``,
reembed), on a terminal and off it.

On a terminal :func:`progress` is a rich progress bar. When stderr is not a terminal (``nohup``, a CI log,
``2> file``) a live bar prints nothing until the end, so :class:`LineProgress` prints sparse plain lines
instead, as pip and huggingface_hub do: ``replaying cases: 120/1282 (9%) 35 s``, one when a task starts,
then one each time it passes another ``step_share`` of its total (default 0.1) but no more often than every
``min_seconds`` (default 5 s) unless ``max_seconds`` (default 60 s) have passed, and one when it completes.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any, TextIO


class LineProgress:
    """The subset of ``rich.progress.Progress`` the CLI uses (``add_task``, ``advance``, ``update``, context
    manager), printing plain lines to ``stream``. ``clock`` (seconds, monotonic) is injectable for tests.
    ``step_share`` in (0, 1]; ``min_seconds`` <= ``max_seconds``, both >= 0."""

    def __init__(self, stream: TextIO | None = None, *, step_share: float = 0.1, min_seconds: float = 5.0,
                 max_seconds: float = 60.0, clock: Callable[[], float] = time.monotonic) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.step_share, self.min_seconds, self.max_seconds, self.clock = step_share, min_seconds, max_seconds, clock
        self._tasks: list[dict[str, Any]] = []

    def __enter__(self) -> LineProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Print the last state of every task not yet shown (as ``tqdm.close`` does)."""
        for t in self._tasks:
            if not t["closed"] and t["completed"] != t["printed"]:
                self._line(t)

    def add_task(self, description: str, total: float | None = None, **_: Any) -> int:
        now = self.clock()
        self._tasks.append({"description": description, "total": total, "completed": 0.0, "start": now,
                            "last": now, "printed": 0.0, "closed": False})
        self._line(self._tasks[-1])
        return len(self._tasks) - 1

    def advance(self, task_id: int, advance: float = 1) -> None:
        t = self._tasks[task_id]
        self.update(task_id, completed=t["completed"] + advance)

    def update(self, task_id: int, *, completed: float | None = None, total: float | None = None,
               advance: float | None = None, **_: Any) -> None:
        t = self._tasks[task_id]
        if total is not None:
            t["total"] = total
        if advance is not None:
            t["completed"] += advance
        if completed is not None:
            t["completed"] = completed
        if t["closed"]:
            return
        now, total_ = self.clock(), t["total"]
        since = now - t["last"]
        done = bool(total_) and t["completed"] >= total_
        stepped = bool(total_) and (t["completed"] - t["printed"]) >= self.step_share * total_
        if done or (stepped and since >= self.min_seconds) or (since >= self.max_seconds and t["completed"] != t["printed"]):
            self._line(t)
            t["closed"] = done

    def _line(self, t: dict[str, Any]) -> None:
        now = self.clock()
        done, total = t["completed"], t["total"]
        frac = f"{done:g}/{total:g} ({100 * done / total:.0f}%)" if total else f"{done:g}"
        self.stream.write(f"{t['description']}: {frac} {now - t['start']:.0f} s\n")
        self.stream.flush()
        t["last"], t["printed"] = now, done


def progress(*columns: Any, disable: bool = False, transient: bool = False, stream: TextIO | None = None,
             **kw: Any) -> Any:
    """A rich ``Progress`` over ``columns`` on stderr when it is a terminal, else a :class:`LineProgress`
    (``disable`` still silences both: the rich one with ``disable``, the line one by writing nowhere)."""
    out = stream if stream is not None else sys.stderr
    if not disable and not out.isatty():
        return LineProgress(out)
    from rich.console import Console
    from rich.progress import Progress

    return Progress(*columns, disable=disable, transient=transient, console=Console(file=out), **kw)
