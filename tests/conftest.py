"""Hypothesis profiles: derandomized in CI, random on a developer's machine.

CI sets ``CI``; there every property test draws the same examples on every run, so a
submission never fails by chance. Locally the examples are random (and the failing ones
are kept in the example database), which is how new failures are found. No profile has a
deadline: a test's verdict never depends on how busy the machine is.
"""

import os

from hypothesis import HealthCheck, settings

settings.register_profile("ci", derandomize=True, database=None, deadline=None,
                          print_blob=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE",
                                     "ci" if os.environ.get("CI") else "dev"))
