"""Interoperability with JAX: JAX's jaxprs in (``from_jax``), JAX-traceable callables out
(``to_jax_callable``), losslessly for the primitives both have (docs/interop.md).

``jax`` is an optional (test) dependency and ``src/fcore`` never imports it at module level
(docs/design.md): ``from_jax`` reads JAX's jaxpr objects by duck typing, and
``to_jax_callable`` (like the custom-derivative rules of an imported jaxpr) loads ``jax``
with ``importlib.import_module`` when it runs, so importing ``fcore.interop`` never loads JAX.
"""

from fcore.interop import _jax_calls, _jax_random  # noqa: F401  (fill the translation table)
from fcore.interop._from_jax import from_jax as from_jax
from fcore.interop._to_jax import JaxRule as JaxRule, to_jax_callable as to_jax_callable

__all__ = ["from_jax", "to_jax_callable", "JaxRule"]
