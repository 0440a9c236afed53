"""Validation errors with field paths, e.g. ``costs.utilisation: must be between 0 and 1``.

Pure: the CLI turns these into exit status 2, the API into a 400 with the same paths.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True)
class FieldError:
    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


class CostValidationError(ValueError):
    """One or more invalid inputs; ``errors`` lists every problem found, not just the first."""

    def __init__(self, errors: list[FieldError] | tuple[FieldError, ...]):
        self.errors = tuple(errors)
        super().__init__("; ".join(str(e) for e in self.errors))

    def to_dict(self) -> dict:
        return {"errors": [{"path": e.path, "message": e.message} for e in self.errors]}


def fail(path: str, message: str) -> CostValidationError:
    return CostValidationError([FieldError(path=path, message=message)])
