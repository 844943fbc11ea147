"""Conformance suite for the κ topology engine (tests only, not installed).

* :mod:`conformance.reference` — independent brute-force reference.
* :mod:`conformance.exhaustive` — the 1,926,351-object exhaustive run
  (``python -m conformance``).
* :mod:`conformance.parity` — canonical/reference parity and min-cut checks.
* :mod:`conformance.make_fixtures` — writes the language-neutral JSON fixtures.
"""
