"""Spectral metrics without NumPy: the doctests, and closed-form spectra of named graphs."""

from __future__ import annotations

import doctest
import math

from graphonomous.algorithms import dag, spectral
from graphonomous.algorithms.spectral import algebraic_connectivity, symmetric_eigenvalues


def test_docstring_examples() -> None:
    for module in (spectral, dag):
        result = doctest.testmod(module)
        assert result.attempted >= 3 and result.failed == 0, module.__name__


def test_cycle_graph_spectrum_in_closed_form() -> None:
    # Normalized Laplacian of the n-cycle: 1 - cos(2πk/n), k = 0..n-1 (each nonzero twice).
    n = 11
    graph = {str(i): {str((i + 1) % n): 1.0} for i in range(n)}
    (component,) = algebraic_connectivity(graph)
    assert abs(component["algebraic_connectivity"] - (1 - math.cos(2 * math.pi / n))) < 1e-12


def test_complete_graph_spectrum_in_closed_form() -> None:
    # K_n: eigenvalue 0 once and n/(n-1) with multiplicity n-1 (fully degenerate).
    n = 9
    rows = [[1.0 if i == j else -1.0 / (n - 1) for j in range(n)] for i in range(n)]
    values = symmetric_eigenvalues(rows)
    assert abs(values[0]) < 1e-12
    assert all(abs(v - n / (n - 1)) < 1e-12 for v in values[1:])
