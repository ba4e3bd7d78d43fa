"""Bounding a replay's work in wall-clock time, and stopping a replay from another thread.

A ``Budget`` (``ReplayOptions.budget``) gives every unit of the engine's work a time limit: each
scheduling cycle, and the phases around them (building the scheduler: its profiles, the cluster).
A cycle that runs past the limit ends as result ``Error`` ("the cycle was stopped after 10 s
(SCHEDVIZ_CYCLE_SECONDS)") and the replay goes on with the next pod; a phase that runs past its own
limit (``setup_seconds``) fails the replay (``WorkLimitExceeded``). ``Budget.stop`` (or the ``poll`` function, which a watchdog thread
calls every ``poll_seconds``) ends the whole replay at once: ``ReplayStopped`` comes out of
``Replay.cycles()``.

How a cycle is stopped. Plugins loop in Python (a Filter over 10,000 tolerations, a CEL program, a
preemption dry run over a node with thousands of pods): checking a flag between stages is not
enough. A watchdog thread raises ``Interrupted`` inside the replaying thread
(``PyThreadState_SetAsyncExc``), but only while that thread is inside an *interruptible region*:

- the call of a plugin at PreFilter (and its AddPod extension), Filter, PreScore, Score and
  NormalizeScore (runtime/framework.py), and DefaultPreemption's search for victims (its dry runs:
  pods taken off a node and put back); these compute and change nothing that outlives the cycle;
- never PostFilter as such, Reserve, Permit, the binding cycle, evictions, nominations, or the
  engine's own bookkeeping between plugins: whatever changes lasting state runs to its end.

Inside a region, a few steps must not be cut in half: placing or removing a pod on the cluster
(``ClusterState.add_pod``/``remove_pod``) and the catch-up of incremental caches that follow
``cluster.changes``. They run ``uninterruptible()``: an interrupt due meanwhile is held back (taken
back from the interpreter) and raised when the step ends. Leaving a region does the same, so an
interrupt is never delivered outside one. The exception is a ``BaseException``: plugins' ``except
Exception`` clauses do not swallow it.

The engine catches ``Interrupted`` where the cycle ends (``Replay.schedule_one``) and puts things
back as they were before the region the cycle was stopped in: the ``restoring`` callbacks
registered there (DefaultPreemption's, which also restores the order of a node's pods), then every
pod placement changed since the region began (from ``cluster.changes``). An interrupted cycle
therefore looks like a cycle whose running plugin failed with an Error at that moment: cluster
(placements, each node's pods in order), scheduling queue, evictions, waiting pods, nominations of
other pods and the next start node are as before the cycle; what plugins that completed earlier in
the cycle keep in their own state stays, as after any Error (Coscheduling's permitted groups); the
pod's record is Error with the stopped stage and the reason, and the pod is handled as any Error
(its nomination cleared, not retried).

The regions are checked cooperatively too (entering one past the deadline raises at once), so the
limit holds where ``ctypes.pythonapi`` is missing, just less promptly. Work inside C code (a numpy
operation) is not interrupted until it returns.

One replaying thread at a time per Budget; the engine module has no Django import (the web app's
poll function reads the database, in the watchdog thread).
"""

from __future__ import annotations

import ctypes
import logging
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from typing import Any

from .errors import SchedVizError

log = logging.getLogger(__name__)

TIME = "time"
STOP = "stop"
IDLE_SECONDS = 30.0  # the watchdog thread ends after this long without a unit of work


class Interrupted(BaseException):
    """Raised inside the replaying thread when its unit of work must end (see the module docstring).

    Never caught by plugins; the engine catches it at the cycle's (or phase's) boundary."""


class ReplayStopped(Exception):
    """The replay was stopped (``Budget.stop`` or the budget's poll): no further cycle runs."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class WorkLimitExceeded(SchedVizError):
    """A phase of the replay outside its cycles (building the scheduler) ran past the limit."""


def _async_exc_api() -> tuple[Callable[[int, Any], int], Callable[[int, None], int]] | None:
    try:
        api = ctypes.pythonapi
    except AttributeError:  # pragma: no cover - not CPython
        return None
    post = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_ulong, ctypes.py_object)(("PyThreadState_SetAsyncExc", api))
    # the same function with NULL: takes back an exception not raised yet
    clear = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p)(("PyThreadState_SetAsyncExc", api))
    return post, clear


_API = _async_exc_api()
_tls = threading.local()
_NULL = nullcontext()


def seconds_text(seconds: float) -> str:
    return f"{seconds:g} s"


class Budget:
    """The time limit of each unit of a replay's work, and the way to stop the replay from outside.

    ``cycle_seconds``: the limit of each cycle (None or 0: none). ``setting``: what sets it, named in
    the messages ("SCHEDVIZ_CYCLE_SECONDS", "--cycle-timeout"). ``setup_seconds`` and
    ``setup_setting``: the same for each phase (building the scheduler, reading the input), by default
    the cycle's. ``poll``: called every ``poll_seconds`` in the watchdog thread; a non-empty answer
    stops the replay with that reason.
    ``on_thread_exit``: called in the watchdog thread when it ends (e.g. to close its database
    connection). Close the budget (``close()`` or ``with``) to end the watchdog thread.
    """

    def __init__(
        self,
        cycle_seconds: float | None = None,
        *,
        setting: str = "",
        setup_seconds: float | None = None,
        setup_setting: str | None = None,
        poll: Callable[[], str | None] | None = None,
        poll_seconds: float = 0.5,
        on_thread_exit: Callable[[], None] | None = None,
    ) -> None:
        self.cycle_seconds = float(cycle_seconds) if cycle_seconds and cycle_seconds > 0 else None
        self.setting = setting
        if setup_seconds is None and setup_setting is None:
            self.setup_seconds, self.setup_setting = self.cycle_seconds, setting
        else:
            self.setup_seconds = float(setup_seconds) if setup_seconds and setup_seconds > 0 else None
            self.setup_setting = setting if setup_setting is None else setup_setting
        self._poll = poll
        self._poll_seconds = max(0.01, float(poll_seconds))
        self._on_thread_exit = on_thread_exit
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)
        self._stopped: str | None = None
        self._closed = False
        self._watchdog: threading.Thread | None = None
        self._wake_at = 0.0
        # the unit of work under way (a cycle or a phase); written by the replaying thread
        self._active = False
        self._tid = 0
        self._deadline: float | None = None
        self.allow = 0  # depth of interruptible regions
        self.mask = 0  # depth of uninterruptible steps inside them
        self._posted = False  # an Interrupted was raised (or sent) for this unit
        self._deferred = False  # ... and taken back, to be raised when the step ends
        self.cause = ""  # TIME or STOP, once posted
        # where it happened: the outermost region (point, plugin, start) and the innermost one
        self._outer: tuple[str, str, float] = ("", "", 0.0)
        self.stopped_in: tuple[str, str, float] | None = None
        self.innermost: tuple[str, str] | None = None
        # what the engine restores: cluster.changes and its length when the outermost region began
        self.journal: list[Any] | None = None
        self.mark = 0
        self.undo: list[Callable[[], None]] = []

    # ----- outside ----------------------------------------------------------------------------
    @property
    def stopped(self) -> str | None:
        """Why the replay was stopped, or None."""
        return self._stopped

    def stop(self, reason: str) -> None:
        """Stop the replay (any thread): the cycle under way is interrupted, no other one starts."""
        with self._lock:
            if self._stopped is None:
                self._stopped = reason or "stopped"
            self._post_if_due(time.monotonic())
            self._cond.notify_all()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._cond.notify_all()
        t = self._watchdog
        if t is not None and t is not threading.current_thread():
            t.join(timeout=5)

    def __enter__(self) -> Budget:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def limit_message(self, what: str, setup: bool = False) -> str:
        """"the cycle was stopped after 10 s (SCHEDVIZ_CYCLE_SECONDS)"."""
        seconds, setting = (self.setup_seconds, self.setup_setting) if setup else (self.cycle_seconds, self.setting)
        limit = seconds_text(seconds) if seconds else "its time limit"
        return f"{what} was stopped after {limit}" + (f" ({setting})" if setting else "")

    # ----- units of work (the replaying thread) ----------------------------------------------
    def begin(self, journal: list[Any] | None = None, setup: bool = False) -> None:
        """A unit of work (a cycle, or a phase when ``setup``) starts in this thread: its deadline
        runs from now. Raises ReplayStopped when the replay was stopped."""
        if self._stopped is not None:
            raise ReplayStopped(self._stopped)
        now = time.monotonic()
        with self._lock:
            self._active = True
            self._tid = threading.get_ident()
            limit = self.setup_seconds if setup else self.cycle_seconds
            self._deadline = now + limit if limit else None
            self.allow = self.mask = 0
            self._posted = self._deferred = False
            self.cause = ""
            self.stopped_in = self.innermost = None
            self.journal = journal
            self.mark = len(journal) if journal is not None else 0
            self.undo = []
            if self._deadline is not None and self._deadline < self._wake_at:
                self._cond.notify_all()
            self._ensure_watchdog()
        self._previous = getattr(_tls, "budget", None)
        _tls.budget = self

    def end(self) -> None:
        """The unit of work ends (normally or not): nothing may interrupt this thread any more."""
        with self._lock:
            self._disarm()
        _tls.budget = getattr(self, "_previous", None)

    def _disarm(self) -> None:
        """With the lock held: no more interrupts for this unit; one sent and not raised yet is taken back."""
        self._active = False
        self.allow = self.mask = 0
        if self._posted and _API is not None and self._tid:
            _API[1](self._tid, None)

    def caught(self) -> None:
        """The engine caught Interrupted: nothing else may be raised while it restores the state."""
        with self._lock:
            self._disarm()
            self._deferred = False

    @contextmanager
    def phase(self, what: str, journal: list[Any] | None = None) -> Iterator[None]:
        """Work outside the cycles, interruptible as a whole (its results are thrown away when it
        is stopped): WorkLimitExceeded past the limit, ReplayStopped when the replay is stopped."""
        self.begin(journal, setup=True)
        try:
            with _Region(self, "", what):
                yield
        except Interrupted:
            self.caught()
            if self.cause == STOP or self._stopped is not None:
                raise ReplayStopped(self._stopped or "stopped") from None
            raise WorkLimitExceeded(self.limit_message(what, setup=True)) from None
        finally:
            self.end()

    # ----- regions and steps ---------------------------------------------------------------
    def _due(self, now: float) -> str:
        if self._stopped is not None:
            return STOP
        if self._deadline is not None and now >= self._deadline:
            return TIME
        return ""

    def _post_if_due(self, now: float) -> None:
        """With the lock held: send Interrupted to the replaying thread if it is due and allowed."""
        if not self._active or self._posted or self.allow <= 0 or self.mask > 0:
            return
        cause = self._due(now)
        if not cause or _API is None or not self._tid:
            return
        self._posted = True
        self.cause = cause
        _API[0](self._tid, Interrupted)

    def _enter_region(self, point: str, plugin: str) -> None:
        if not self._posted and (
            self._stopped is not None or (self._deadline is not None and time.monotonic() >= self._deadline)
        ):
            # due already: raised before the region starts
            self._posted = True
            self.cause = STOP if self._stopped is not None else TIME
            self.innermost = (point, plugin)
            if self.allow == 0:
                self.stopped_in = (point, plugin, time.perf_counter())
            raise Interrupted()
        if self.allow == 0:
            self._outer = (point, plugin, time.perf_counter())
            if self.journal is not None:
                self.mark = len(self.journal)
            if self.undo:
                self.undo = []
        self.allow += 1

    def _leave_region(self, point: str, plugin: str, exc_type: type[BaseException] | None) -> None:
        if exc_type is not None and issubclass(exc_type, Interrupted):
            if self.innermost is None:
                self.innermost = (point, plugin)
            with self._lock:
                self.allow = max(0, self.allow - 1)
                if self.allow == 0:
                    self.stopped_in = self._outer
            return
        with self._lock:
            self.allow = max(0, self.allow - 1)
            if not self._posted or self._deferred or self.allow:
                return  # the common case
            if _API is not None:
                _API[1](self._tid, None)  # sent while the region ran, not raised yet: taken back
        if exc_type is None and not _unwinding():
            # ... and raised here, where the region ends
            if self.innermost is None:
                self.innermost = (point, plugin)
            self.stopped_in = self._outer
            raise Interrupted()

    def _enter_step(self) -> None:
        with self._lock:
            self.mask += 1
            if self._posted and not self._deferred and _API is not None and not _unwinding():
                _API[1](self._tid, None)  # sent, not raised yet: held back until the step ends
                self._deferred = True

    def _leave_step(self) -> None:
        self.mask = max(0, self.mask - 1)
        if self.mask == 0 and self._deferred:
            self._deferred = False
            if not _unwinding():
                raise Interrupted()

    # ----- the watchdog ----------------------------------------------------------------------
    def _ensure_watchdog(self) -> None:
        """With the lock held: start the watchdog thread unless it runs (it ends after a while idle)."""
        if self._watchdog is not None or self._closed or _API is None:
            return
        if self.cycle_seconds is None and self.setup_seconds is None and self._poll is None:
            return
        t = threading.Thread(target=self._watch, name="schedviz-budget", daemon=True)
        self._watchdog = t
        t.start()

    def _watch(self) -> None:
        next_poll = time.monotonic() + self._poll_seconds  # a replay shorter than that is never polled
        idle_since: float | None = None
        try:
            while True:
                with self._lock:
                    if self._closed:
                        return
                    now = time.monotonic()
                    if self._active:
                        idle_since = None
                    elif idle_since is None:
                        idle_since = now
                    elif now - idle_since > IDLE_SECONDS:
                        self._watchdog = None  # begin() starts another one
                        return
                    wait = 1.0
                    if self._poll is not None and self._stopped is None:
                        wait = min(wait, next_poll - now)
                    if self._active and not self._posted and self._deadline is not None:
                        wait = min(wait, self._deadline - now)
                    if wait > 0:
                        self._wake_at = now + wait
                        self._cond.wait(wait)
                        self._wake_at = 0.0
                    if self._closed:
                        return
                now = time.monotonic()
                if self._poll is not None and self._stopped is None and now >= next_poll:
                    next_poll = now + self._poll_seconds
                    reason = None
                    try:
                        reason = self._poll()
                    except Exception:  # a failing poll must not stop the replay
                        log.warning("replay budget: the stop poll failed", exc_info=True)
                    if reason:
                        self.stop(reason)
                with self._lock:
                    self._post_if_due(time.monotonic())
        finally:
            if self._on_thread_exit is not None:
                try:
                    self._on_thread_exit()
                except Exception:
                    log.warning("replay budget: thread exit hook failed", exc_info=True)


def _unwinding() -> bool:
    """Whether this thread is running a ``finally`` (or ``except``) for an Interrupted."""
    return isinstance(sys.exc_info()[1], Interrupted)


class _Region:
    __slots__ = ("budget", "plugin", "point")

    def __init__(self, budget: Budget, point: str, plugin: str) -> None:
        self.budget = budget
        self.point = point
        self.plugin = plugin

    def __enter__(self) -> None:
        self.budget._enter_region(self.point, self.plugin)

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: object) -> None:
        self.budget._leave_region(self.point, self.plugin, exc_type)


class _Step:
    __slots__ = ("budget",)

    def __init__(self, budget: Budget) -> None:
        self.budget = budget

    def __enter__(self) -> None:
        self.budget._enter_step()

    def __exit__(self, exc_type: object, exc: BaseException | None, tb: object) -> None:
        self.budget._leave_step()


def active() -> Budget | None:
    """The budget of the unit of work this thread runs, if any."""
    b: Budget | None = getattr(_tls, "budget", None)
    return b if b is not None and b._active else None


def interruptible(point: str, plugin: str) -> Any:
    """A region the budget may interrupt (a context manager; nothing without a unit under way)."""
    b: Budget | None = getattr(_tls, "budget", None)
    if b is None or not b._active:
        return _NULL
    return _Region(b, point, plugin)


def uninterruptible() -> Any:
    """A step that must not be cut in half (a context manager; nothing outside a region)."""
    b: Budget | None = getattr(_tls, "budget", None)
    if b is None or b.allow == 0:
        return _NULL
    return _Step(b)


@contextmanager
def restoring(undo: Callable[[], None]) -> Iterator[None]:
    """Run ``undo`` when the block ends, and again if the cycle is interrupted before it has: it
    must be idempotent (put back what the block changed, as far as it is still changed)."""
    b: Budget | None = getattr(_tls, "budget", None)
    if b is None or b.allow == 0:
        try:
            yield
        finally:
            undo()
        return
    b.undo.append(undo)
    try:
        yield
    finally:
        undo()
        if undo in b.undo:
            b.undo.remove(undo)
