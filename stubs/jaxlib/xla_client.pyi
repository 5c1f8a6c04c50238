# Stubs for `jaxlib.xla_client` (only what fcore's backend uses).  Most names
# are re-exported aliases of `jaxlib._jax` / `jaxlib._hlo` classes.

from collections.abc import Mapping

from jaxlib._hlo import HloSharding as HloSharding
from jaxlib._hlo import OpSharding as OpSharding
from jaxlib._jax import DeviceAssignment as DeviceAssignment
from jaxlib._jax import GSPMDSharding as GSPMDSharding
from jaxlib._jax import Array as Array
from jaxlib._jax import ArrayImpl as ArrayImpl
from jaxlib._jax import Client as Client
from jaxlib._jax import CompileOptions as CompileOptions
from jaxlib._jax import Device as Device
from jaxlib._jax import DeviceList as DeviceList
from jaxlib._jax import HostBufferSemantics as HostBufferSemantics
from jaxlib._jax import JaxRuntimeError as _JaxRuntimeError
from jaxlib._jax import LoadedExecutable as LoadedExecutable
from jaxlib._jax import Sharding as Sharding
from jaxlib._jax import SingleDeviceSharding as SingleDeviceSharding
from jaxlib._jax import array_result_handler as array_result_handler
from jaxlib._jax import batched_device_put as batched_device_put

XlaRuntimeError = _JaxRuntimeError

_NameValueMapping = Mapping[str, str | int | list[int] | float | bool]

# Internal "jaxlib_extension_version" that jax itself gates features on.
_version: int

def make_cpu_client(
    asynchronous: bool = True,
    distributed_client: object | None = None,
    node_id: int = 0,
    num_nodes: int = 1,
    collectives: object | None = None,
    num_devices: int | None = None,
    get_local_topology_timeout_minutes: int | None = None,
    get_global_topology_timeout_minutes: int | None = None,
    transfer_server_factory: object | None = None,
) -> Client: ...
def make_c_api_client(
    plugin_name: str,
    options: _NameValueMapping | None = None,
    distributed_client: object | None = None,
    transfer_server_factory: object | None = None,
    force_dcn_cross_host_transfers: bool = False,
    sort_devices_by_process_index: bool = True,
) -> Client: ...
def load_pjrt_plugin_dynamically(plugin_name: str, library_path: str) -> object: ...
def pjrt_plugin_loaded(plugin_name: str) -> bool: ...
def pjrt_plugin_initialized(plugin_name: str) -> bool: ...
def initialize_pjrt_plugin(plugin_name: str) -> None: ...
def generate_pjrt_gpu_plugin_options() -> _NameValueMapping: ...

def register_custom_call_target(
    name: str, fn: object, platform: str = ..., api_version: int = ..., traits: object = ...
) -> None: ...
def register_custom_type(type_name: str, type_id: object, platform: str = ...) -> None: ...
def register_custom_call_as_batch_partitionable(target_name: str, c_api: object | None = None) -> None: ...
