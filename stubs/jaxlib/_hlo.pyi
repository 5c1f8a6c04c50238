# Stubs for `jaxlib._hlo` (only what fcore's backend uses).

class HloSharding:
    @staticmethod
    def replicate() -> HloSharding: ...
