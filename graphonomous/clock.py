"""The one clock: every timestamp, decay, TTL, recency and relative date reads it.

Rules of this module:
- A graph's engine owns one `Clock` (``Graphonomous(clock=...)``); nothing in
  the package reads the wall clock for a timestamp except `SystemClock`
  (`tests/test_clock.py` fails on a `datetime.now` / `time.time` elsewhere).
  Ids (UUIDv7) keep the real time: they order creation, they do not date it.
- A clock gives wall time (`now`, UTC-aware) and elapsed time (`monotonic`,
  seconds on the same scale as `now`), plus `rate`: clock seconds per real
  second, so a timer polling in real seconds knows how long to sleep.
- `ManualClock` moves only when told (`advance`, `set`): a test or a benchmark
  runs a month of an always-on server in seconds, deterministically.
  `ScaledClock` runs from a start time at N× real speed, for a whole process
  (``GRAPHONOMOUS_CLOCK=2026-01-01T00:00:00Z+600x``); it is refused unless
  ``GRAPHONOMOUS_TEST_CLOCK=1`` says a test asked for it, so a stray
  variable never makes a production server decay a month in an hour.
"""

from __future__ import annotations

import math
import os
import re
import threading
import time
from collections.abc import Mapping
from datetime import datetime, timedelta, timezone
from typing import Final

from .model import ValidationError, format_time, parse_time

CLOCK_ENV_VAR: Final = "GRAPHONOMOUS_CLOCK"
# The switch that allows `CLOCK_ENV_VAR`: a simulated clock is a testing tool.
CLOCK_SWITCH_ENV_VAR: Final = "GRAPHONOMOUS_TEST_CLOCK"
# "<ISO 8601 start>" or "<ISO 8601 start>+<rate>x" (rate: clock seconds per real second).
_CLOCK_SPEC: Final = re.compile(r"^(?P<start>[^+x]+?(?:[+-]\d\d:\d\d)?)(?:\+(?P<rate>[\d.]+)x)?$")
# The fastest simulated clock a process accepts: a day per 8.6 real seconds; faster,
# and one consolidation cycle (tens of ms) would span many of its own intervals.
MAX_RATE: Final = 10_000.0


class Clock:
    """Wall time and elapsed time for one graph.  Subclasses override `now`/`monotonic`."""

    rate: float = 1.0

    def now(self) -> datetime:
        raise NotImplementedError

    def monotonic(self) -> float:
        raise NotImplementedError

    def iso(self) -> str:
        """`now` as the stored form, e.g. ``2026-01-02T03:04:05.678Z``."""
        return format_time(self.now())


class SystemClock(Clock):
    """The real clock (the default)."""

    def now(self) -> datetime:
        return datetime.now(timezone.utc)

    def monotonic(self) -> float:
        return time.monotonic()


class ManualClock(Clock):
    """A clock that moves only when told: ``clock.advance(days=2)``.

    >>> clock = ManualClock("2026-01-01T00:00:00Z")
    >>> clock.advance(hours=36).iso()
    '2026-01-02T12:00:00.000Z'
    >>> clock.monotonic()
    129600.0
    """

    rate = math.inf

    def __init__(self, start: str | datetime = "2026-01-01T00:00:00Z") -> None:
        self._start = _as_moment(start)
        self._elapsed = 0.0
        self._lock = threading.Lock()

    def now(self) -> datetime:
        with self._lock:
            return self._start + timedelta(seconds=self._elapsed)

    def monotonic(self) -> float:
        with self._lock:
            return self._elapsed

    def advance(
        self, seconds: float = 0.0, *, minutes: float = 0.0, hours: float = 0.0, days: float = 0.0
    ) -> ManualClock:
        """Move forward (never back: elapsed time only grows).  Returns self."""
        step = seconds + 60.0 * minutes + 3600.0 * hours + 86400.0 * days
        if not math.isfinite(step) or step < 0:
            raise ValidationError("seconds", f"a clock only moves forward; got {step!r}")
        with self._lock:
            self._elapsed += step
        return self

    def set(self, moment: str | datetime) -> ManualClock:
        """Move forward to `moment` (an earlier moment is refused)."""
        target = _as_moment(moment)
        return self.advance((target - self.now()).total_seconds())


class ScaledClock(Clock):
    """Starts at `start` and runs `rate` times faster than real time."""

    def __init__(self, start: str | datetime, rate: float = 1.0) -> None:
        if not (isinstance(rate, (int, float)) and 0 < rate <= MAX_RATE):
            raise ValidationError("rate", f"must be in (0, {MAX_RATE:g}]; got {rate!r}")
        self.rate = float(rate)
        self._start = _as_moment(start)
        self._origin = time.monotonic()

    def monotonic(self) -> float:
        return (time.monotonic() - self._origin) * self.rate

    def now(self) -> datetime:
        return self._start + timedelta(seconds=self.monotonic())


def _as_moment(value: str | datetime) -> datetime:
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=timezone.utc)
    return parse_time(value, "clock")


def clock_from_env(environ: Mapping[str, str] | None = None) -> Clock:
    """The process's clock: `SystemClock`, or the `CLOCK_ENV_VAR` clock when allowed.

    Raises `ValidationError` naming the variable for a malformed value or when
    `CLOCK_SWITCH_ENV_VAR` is not ``1``.

    >>> clock_from_env({}).rate
    1.0
    >>> env = {"GRAPHONOMOUS_CLOCK": "2026-01-01T00:00:00Z+600x", "GRAPHONOMOUS_TEST_CLOCK": "1"}
    >>> clock_from_env(env).rate
    600.0
    """
    env = os.environ if environ is None else environ
    spec = env.get(CLOCK_ENV_VAR, "").strip()
    if not spec:
        return SystemClock()
    if env.get(CLOCK_SWITCH_ENV_VAR) != "1":
        raise ValidationError(
            CLOCK_ENV_VAR,
            f"a simulated clock is for tests; set {CLOCK_SWITCH_ENV_VAR}=1 to allow it",
        )
    match = _CLOCK_SPEC.match(spec)
    if match is None:
        raise ValidationError(
            CLOCK_ENV_VAR, f"expected '<ISO 8601 start>' or '<start>+<rate>x'; got {spec!r}"
        )
    try:
        rate = float(match["rate"]) if match["rate"] else 1.0
    except ValueError as exc:
        raise ValidationError(CLOCK_ENV_VAR, f"bad rate in {spec!r}") from exc
    try:
        return ScaledClock(match["start"], rate)
    except ValidationError as exc:
        raise ValidationError(CLOCK_ENV_VAR, exc.message) from exc
