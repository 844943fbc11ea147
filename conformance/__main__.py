"""``python -m conformance``: exhaustive κ verification plus parity checks.

Progress goes to stderr; stdout gets exactly one line,
``<objects> objects, <counterexamples> counterexamples``.  Exit code 1 when
any counterexample (exhaustive or parity) was found.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TypeVar

from conformance import exhaustive, parity

T = TypeVar("T")
R = TypeVar("R")
# Counterexamples printed in full; the rest are only counted.
SHOWN = 10


def _parallel(function: Callable[[T], R], items: Sequence[T], workers: int) -> Iterator[R]:
    """Map over items in ``workers`` processes (in-process when workers == 1)."""
    if workers <= 1:
        yield from map(function, items)
        return
    with multiprocessing.get_context("fork").Pool(workers) as pool:
        yield from pool.imap_unordered(function, items, chunksize=1)


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def run_exhaustive(quick: bool, workers: int) -> tuple[int, int, list[str]]:
    """Run the exhaustive enumeration; return (objects, counterexamples, examples)."""
    digraph_sizes = exhaustive.QUICK_DIGRAPH_SIZES if quick else exhaustive.DIGRAPH_SIZES
    map_sizes = exhaustive.QUICK_MAP_SIZES if quick else exhaustive.MAP_SIZES
    tasks = exhaustive.make_tasks(digraph_sizes, map_sizes)
    total = sum(t.stop - t.start for t in tasks)
    _log(f"exhaustive: {total:,} objects in {len(tasks)} tasks on {workers} worker(s)")
    started = last = time.monotonic()
    checked = failures = 0
    examples: list[str] = []
    kappas: dict[str, Counter[int]] = {"digraph": Counter(), "map": Counter()}
    kappa_zero: Counter[tuple[str, int]] = Counter()
    strong: Counter[tuple[str, int]] = Counter()
    for result in _parallel(exhaustive.run_task, tasks, workers):
        checked += result.checked
        failures += result.failures
        examples.extend(result.examples)
        kappas[result.task.kind].update(result.kappa_counts)
        kappa_zero[(result.task.kind, result.task.n)] += result.kappa_counts[0]
        strong[(result.task.kind, result.task.n)] += result.strongly_connected
        now = time.monotonic()
        if now - last >= 2.0 or checked == total:
            last = now
            elapsed = now - started
            _log(f"  {checked:>9,}/{total:,} objects, {failures} counterexamples, {elapsed:.1f}s")
    for kind, counts in kappas.items():
        _log(f"  κ histogram ({kind}s): {dict(sorted(counts.items()))}")
    # The per-object verdicts must also add up to the known totals.
    for kind, n in sorted(kappa_zero.keys() | strong.keys()):
        census = exhaustive.census_problems(kind, n, kappa_zero[(kind, n)], strong[(kind, n)])
        failures += len(census)
        examples.extend(census)
    _log(f"  census (acyclic / strongly connected per size): {len(kappa_zero)} sizes checked")
    return checked, failures, examples


def run_parity(quick: bool, workers: int) -> tuple[int, int, list[str]]:
    """Run the parity batches; return (checks, mismatches, examples)."""
    batches = parity.make_batches(quick=quick)
    _log(f"parity: {len(batches)} batches")
    started = time.monotonic()
    totals: Counter[str] = Counter()
    mismatches = 0
    examples: list[str] = []
    for outcome in _parallel(parity.run_batch, batches, workers):
        totals.update(outcome.counts)
        mismatches += len(outcome.problems)
        examples.extend(outcome.problems[:SHOWN])
    summary = ", ".join(f"{count:,} {what}" for what, count in sorted(totals.items()))
    _log(f"  {summary}; {mismatches} mismatches, {time.monotonic() - started:.1f}s")
    return sum(totals.values()), mismatches, examples


def _show(title: str, examples: Iterable[str]) -> None:
    for line in list(examples)[:SHOWN]:
        _log(f"COUNTEREXAMPLE ({title}): {line}")


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point; returns the process exit code."""
    parser = argparse.ArgumentParser(prog="python -m conformance", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="digraphs n ≤ 4, maps n ≤ 6")
    parser.add_argument(
        "--workers", type=int, default=min(2, os.cpu_count() or 1), help="processes (default 2)"
    )
    parser.add_argument("--no-parity", action="store_true", help="skip the parity checks")
    args = parser.parse_args(argv)

    started = time.monotonic()
    objects, failures, examples = run_exhaustive(args.quick, args.workers)
    _show("exhaustive", examples)
    if not args.no_parity:
        _, mismatches, parity_examples = run_parity(args.quick, args.workers)
        _show("parity", parity_examples)
        failures += mismatches
    _log(f"total time {time.monotonic() - started:.1f}s")
    print(f"{objects} objects, {failures} counterexamples")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
