"""``fcore.ad``: the markers ``VJP.with_refs`` takes and returns, as ``jax.ad``'s."""

from fcore.api.vjp_object import DidntWant as DidntWant
from fcore.api.vjp_object import DontWant as DontWant
from fcore.api.vjp_object import GradRef as GradRef
from fcore.api.vjp_object import GradValue as GradValue

__all__ = ["DidntWant", "DontWant", "GradRef", "GradValue"]
