"""Test-suite configuration: every jaxpr fcore produces is type-checked (verify-each), and
hypothesis draws the same examples on every run unless ``HYPOTHESIS_PROFILE=explore`` asks for
fresh ones (a CI run must not fail on an example no earlier run saw; exploration finds them)."""

from __future__ import annotations

import os
from collections.abc import Iterator

os.environ.setdefault("FCORE_VERIFY", "1")

import pytest  # noqa: E402
from hypothesis import settings  # noqa: E402

from fcore.config import verify_each  # noqa: E402

settings.register_profile("deterministic", derandomize=True, print_blob=True)
settings.register_profile("explore", derandomize=False, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "deterministic"))


@pytest.fixture(autouse=True)
def _verify_each() -> Iterator[None]:
    """Run every test with the verifier on, as MLIR's verify-each does."""
    with verify_each(True):
        yield
