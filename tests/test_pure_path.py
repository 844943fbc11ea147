"""The pure-Python path is real: CI runs the whole suite once with NumPy absent."""

from __future__ import annotations

import importlib.util
import os

import pytest

from graphonomous.embed import numpy_available


@pytest.mark.skipif(
    not os.environ.get("GRAPHONOMOUS_EXPECT_NO_NUMPY"),
    reason="only in the CI run that uninstalls NumPy",
)
def test_numpy_is_genuinely_absent() -> None:
    assert importlib.util.find_spec("numpy") is None
    assert numpy_available() is False
