"""Calibration: a team's measured runs (files and forms), what they imply, and the calibrated estimates.

Modules: ``formats`` (detect and read run files: ``fields``, ``bench_files``, ``csv_files``), ``fit``
(what a run implies for the engines), ``models`` (MeasuredRun, Calibration; registered with the
planner app through planner.models), ``services`` (storing, fitting, activating), ``forms`` and ``views``
(the web pages). Nothing is imported here: importing a pure module does not load Django models.
"""
