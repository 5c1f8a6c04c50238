"""Test-suite configuration: every jaxpr fcore produces is type-checked (verify-each)."""

from __future__ import annotations

import os
from collections.abc import Iterator

os.environ.setdefault("FCORE_VERIFY", "1")

import pytest  # noqa: E402

from fcore.config import verify_each  # noqa: E402


@pytest.fixture(autouse=True)
def _verify_each() -> Iterator[None]:
    """Run every test with the verifier on, as MLIR's verify-each does."""
    with verify_each(True):
        yield
