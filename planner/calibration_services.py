"""Old path of planner.calibration.services, kept for planner/api/views.py (edited elsewhere now)."""

from .calibration.services import active_calibrations

__all__ = ["active_calibrations"]
