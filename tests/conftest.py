"""Test configuration: Hypothesis runs derandomized in CI and under ``make test``.

The ``ci`` profile (chosen when ``CI`` is set, which the Makefile's ``unit`` target does)
draws the same examples on every run, so a failure is reproducible and a green run means the
same thing each time; the ``dev`` profile (a plain ``pytest`` run) explores new examples.
Cases that matter are pinned with ``@example`` in the tests themselves.
"""

from __future__ import annotations

import os

import matplotlib
from hypothesis import HealthCheck, settings

matplotlib.use("Agg")

settings.register_profile(
    "ci",
    derandomize=True,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("ci" if os.environ.get("CI") else "dev")
