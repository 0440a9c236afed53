"""GPU Planner sizing engine: pure Python + numpy, no Django (see docs/SIZING.md).

Public interface:
    parse_workload_spec(data) -> WorkloadSpec      (raises SpecValidationError)
    size_workload(*, spec, accelerators) -> SizingResult   (.to_dict() is JSON-serialisable)
    ENGINE_VERSION
"""

from .errors import FieldError, SpecValidationError
from .hardware import AcceleratorSpec
from .result import Configuration, SizingResult
from .sizing import ENGINE_VERSION, size_workload
from .spec import WorkloadSpec, parse_workload_spec

__all__ = [
    "ENGINE_VERSION",
    "AcceleratorSpec",
    "Configuration",
    "FieldError",
    "SizingResult",
    "SpecValidationError",
    "WorkloadSpec",
    "parse_workload_spec",
    "size_workload",
]
