# Stubs for `jaxlib._hlo` (only what fcore's backend uses).

class HloSharding:
    @staticmethod
    def replicate() -> HloSharding: ...
    @staticmethod
    def from_proto(proto: OpSharding) -> HloSharding: ...
    def is_replicated(self) -> bool: ...
    def to_proto(self) -> OpSharding: ...

class OpSharding:
    class Type:
        REPLICATED: OpSharding.Type
        MAXIMAL: OpSharding.Type
        TUPLE: OpSharding.Type
        OTHER: OpSharding.Type
        MANUAL: OpSharding.Type
    def __init__(self) -> None: ...
    type: OpSharding.Type
    tile_assignment_dimensions: list[int]
    tile_assignment_devices: list[int]
    iota_reshape_dims: list[int]
    iota_transpose_perm: list[int]
    last_tile_dims: list[OpSharding.Type]
    replicate_on_last_tile_dim: bool
