"""``fcore.extend`` as ``jax.extend``: the pieces people use to write their own primitives and
interpreters (docs/adding_a_primitive.md, docs/embedding.md). As in JAX, this surface follows
fcore's internals more closely than the rest of the API."""

from fcore.extend import core as core
from fcore.extend import source_info_util as source_info_util
