"""Reports from the store: tables, figures, and the comparison with the published numbers."""

from forestlab.report.compare import compare_experiment
from forestlab.report.figures import render_figures
from forestlab.report.tables import render_tables

__all__ = ["compare_experiment", "render_figures", "render_tables"]
