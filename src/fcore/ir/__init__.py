"""fcore's intermediate representation: dtypes, abstract values, jaxprs."""

from fcore.ir.parser import parse_jaxpr as parse_jaxpr
from fcore.ir.serialize import SerializationError as SerializationError
from fcore.ir.serialize import deserialize as deserialize, serialize as serialize

__all__ = ["parse_jaxpr", "serialize", "deserialize", "SerializationError"]
