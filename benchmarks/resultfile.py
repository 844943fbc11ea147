"""Provenance of a benchmark's result file: what produced it, where, when.

The convention (``benchmarks/RESULTS.md`` is generated from these files by
``scripts/gen_results.py``; ``tests/test_results_file.py`` checks it):

* A result is a JSON object under ``benchmarks/results/`` (the folder is
  gitignored for scratch output; a result meant to be quoted is force-added,
  ``git add -f``).
* It carries a top-level ``"provenance"`` object, written by :func:`stamp`
  when a benchmark writes its ``--json`` file:

  - ``script``: the benchmark, relative to the repository root;
  - ``command``: the exact command line, from the repository root;
  - ``commit``: ``git rev-parse HEAD`` of the code measured (this checkout, or
    the one a benchmark's ``--checkout`` names; then ``bench_commit`` is this
    checkout's, whose script measured it);
  - ``uncommitted``: the tracked files of the measured code that differed from
    that commit (``[]`` = a clean tree), so a figure of work in progress says so;
  - ``machine``: ``cores`` (``os.cpu_count()``), ``python`` (version),
    ``numpy`` (whether the package's NumPy paths were on:
    ``graphonomous.embed.numpy_available``);
  - ``date``: UTC, ISO 8601, to the second.

* A result written before this convention has a sidecar instead,
  ``NAME.provenance.json`` beside ``NAME.json``: the same fields, each one
  established after the fact or ``null`` when unknown (never guessed), an
  ``established`` note saying how, and the ``sha256`` of the file it
  describes, so a result re-measured without its block no longer matches its
  sidecar (:func:`read_provenance` refuses it).

A benchmark whose output is a list is wrapped as ``{"provenance": …, "rows":
[…]}``.  Standard library only (the package's NumPy probe is read at write
time, after the benchmark imported the package).
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import platform
import shlex
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

ROOT: Final = Path(__file__).resolve().parent.parent
# Where quotable results live, relative to the root (RESULTS.md cites these paths).
RESULTS_DIR: Final = "benchmarks/results"
# The block's key: first in a stamped file, so a reader sees where a figure came from.
KEY: Final = "provenance"
# NAME.json's sidecar is NAME.provenance.json: sorted next to it, and never a result itself.
SIDECAR_SUFFIX: Final = ".provenance.json"
# Every block names these (a value may be null: unknown, never guessed).
FIELDS: Final = ("script", "command", "commit", "machine", "date")
# What a figure depends on besides the code: parallelism, interpreter, the NumPy paths.
MACHINE_FIELDS: Final = ("cores", "python", "numpy")
# `git` answers in milliseconds; a hung one (a locked index on a network drive) must
# not hold a finished benchmark's output hostage.
GIT_TIMEOUT_S: Final = 10.0


class ProvenanceError(ValueError):
    """A result file whose provenance is missing, incomplete or stale."""


def _git(cwd: Path, *args: str) -> str | None:
    """The stdout of ``git ARGS`` run in `cwd`, or None without git (or a repository)."""
    try:
        done = subprocess.run(
            ["git", *args],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def _numpy_on() -> bool | None:
    """Whether the package runs its NumPy paths in this process (None: not importable)."""
    try:
        from graphonomous.embed import numpy_available
    except ImportError:
        return None
    return numpy_available()


def machine() -> dict[str, Any]:
    """The machine facts a figure depends on: cores, Python version, NumPy on or off."""
    return {
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "numpy": _numpy_on(),
    }


def _head(checkout: Path) -> str | None:
    """The commit `checkout` is at, or None outside a git repository."""
    head = _git(checkout, "rev-parse", "HEAD")
    return head.strip() if head else None


def _uncommitted(checkout: Path) -> list[str] | None:
    """The tracked files of `checkout` that differ from its commit, sorted."""
    status = _git(checkout, "status", "--porcelain", "--untracked-files=no")
    return None if status is None else sorted(line[3:] for line in status.splitlines())


def provenance(
    script: str, argv: Sequence[str] | None = None, checkout: Path | None = None
) -> dict[str, Any]:
    """The provenance block of a run of `script` (its ``__file__``) with `argv`.

    `argv` is what the script's parser read (None: ``sys.argv[1:]``).  The
    command is ``python <script relative to the root> <argv…>``, shell-quoted.
    `checkout` is the code under test when it is not this checkout.
    """
    path = Path(script).resolve()
    rel = path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else path.name
    args = list(sys.argv[1:] if argv is None else argv)
    measured = ROOT if checkout is None else Path(checkout).resolve()
    block: dict[str, Any] = {
        "script": rel,
        "command": shlex.join(["python", rel, *args]),
        "commit": _head(measured),
        "uncommitted": _uncommitted(measured),
        "machine": machine(),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    if measured != ROOT:
        block["bench_commit"] = _head(ROOT)
    return block


def stamp(
    report: Any, script: str, argv: Sequence[str] | None = None, checkout: Path | None = None
) -> dict[str, Any]:
    """`report` with its provenance block first (a list becomes ``rows``)."""
    body = dict(report) if isinstance(report, dict) else {"rows": report}
    body.pop(KEY, None)
    return {KEY: provenance(script, argv, checkout), **body}


def sidecar_of(path: Path) -> Path:
    """Where the provenance of a result written before the convention lives."""
    return path.with_name(path.name.removesuffix(".json") + SIDECAR_SUFFIX)


def _check_fields(block: Any, where: str) -> dict[str, Any]:
    """`block` when it has every field of the convention (values may be null)."""
    if not isinstance(block, dict):
        raise ProvenanceError(f"{where}: provenance must be an object")
    missing = [name for name in FIELDS if name not in block]
    machine_block = block.get("machine")
    if not isinstance(machine_block, dict):
        missing.append("machine (an object)")
    else:
        missing += [f"machine.{n}" for n in MACHINE_FIELDS if n not in machine_block]
    if missing:
        raise ProvenanceError(f"{where}: provenance lacks {', '.join(missing)}")
    return block


def read_provenance(path: Path) -> tuple[dict[str, Any], Any]:
    """The provenance block and the parsed content of the result file `path`.

    The block is the file's own ``provenance`` object or its sidecar's (whose
    ``sha256`` must be the file's).  Raises `ProvenanceError` naming the file
    and the missing field, for a file with neither or with both.
    """
    raw = path.read_bytes()
    data = json.loads(raw)
    sidecar = sidecar_of(path)
    own = data.get(KEY) if isinstance(data, dict) else None
    if own is not None:
        if sidecar.exists():
            raise ProvenanceError(f"{path.name} carries its provenance: delete {sidecar.name}")
        return _check_fields(own, path.name), data
    if not sidecar.exists():
        raise ProvenanceError(f"{path.name}: no provenance block and no {sidecar.name}")
    block = _check_fields(json.loads(sidecar.read_text(encoding="utf-8")), sidecar.name)
    if block.get("sha256") != hashlib.sha256(raw).hexdigest():
        raise ProvenanceError(
            f"{sidecar.name} describes another version of {path.name} (sha256 differs): "
            "re-run the benchmark with --json to write its provenance"
        )
    return block, data
