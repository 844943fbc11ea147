"""`graphonomous.lazy_import.lazy_module`: loads at first use, from any thread, and
forwards every read to the real module (monkeypatching it stays visible)."""

from __future__ import annotations

import sys
import threading

import pytest

from graphonomous.lazy_import import _LazyModule, lazy_module


def test_nothing_is_imported_before_an_attribute_is_read() -> None:
    name = "colorsys"  # a small stdlib module nothing here imports
    if name in sys.modules:
        pytest.skip(f"{name} already imported by another test")
    stand_in = lazy_module(name)
    assert name not in sys.modules
    assert stand_in.rgb_to_hsv(1.0, 0.0, 0.0) == (0.0, 1.0, 1.0)
    assert name in sys.modules
    assert lazy_module(name) is sys.modules[name]  # once imported: the module itself


def test_reads_follow_the_real_module(monkeypatch: pytest.MonkeyPatch) -> None:
    import json

    from graphonomous.learning import deliberation

    stand_in = _LazyModule("graphonomous.learning.deliberation")  # (imported: a stand-in anyway)
    monkeypatch.setattr(deliberation, "deliberate", json.dumps)
    assert stand_in.deliberate is json.dumps


def test_concurrent_first_reads_all_see_the_module() -> None:
    name = "wave"  # a stdlib module nothing here imports
    if name in sys.modules:
        pytest.skip(f"{name} already imported by another test")
    stand_in = lazy_module(name)
    found: list[object] = []
    errors: list[BaseException] = []

    def read() -> None:
        try:
            found.append(stand_in.open)
        except BaseException as exc:  # recorded, asserted below
            errors.append(exc)

    threads = [threading.Thread(target=read) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert len(found) == 8 and all(f is sys.modules[name].open for f in found)


def test_a_wrong_name_fails_at_first_use() -> None:
    stand_in = lazy_module("graphonomous.no_such_module")
    with pytest.raises(ModuleNotFoundError):
        stand_in.anything  # noqa: B018
