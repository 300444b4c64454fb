"""Tables of mean ± std over seeds or folds, in Markdown, CSV and LaTeX: thin renderers of
:class:`forestlab.report.model.TableModel` (what a table spec may say is documented there).

A cell whose algorithm chose its hyperparameters on the test set (selection ``test``, the thesis's own "keep the
best test result") is labelled *optimistic* in the header and the table's note, always.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from forestlab.report.model import TableModel, build_model, shrunk_note
from forestlab.results import ExperimentResults

__all__ = ["render_tables", "table_files", "to_latex", "to_markdown"]


def to_markdown(df: pd.DataFrame) -> str:
    cols = [str(c) for c in df.columns]
    lines = ["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    for _, row in df.iterrows():
        lines.append("| " + " | ".join(str(v) for v in row.tolist()) + " |")
    return "\n".join(lines) + "\n"


def _tex_escape(text: str) -> str:
    for a, b in (("\\", r"\textbackslash{}"), ("&", r"\&"), ("%", r"\%"), ("_", r"\_"), ("#", r"\#"),
                 ("±", r"$\pm$"), ("—", "--")):
        text = text.replace(a, b)
    return text


def to_latex(df: pd.DataFrame, caption: str) -> str:
    cols = [str(c) for c in df.columns]
    lines = [r"\begin{table}[ht]", r"\centering", rf"\caption{{{_tex_escape(caption)}}}",
             r"\begin{tabular}{l" + "r" * (len(cols) - 1) + "}", r"\hline",
             " & ".join(_tex_escape(c) for c in cols) + r" \\", r"\hline"]
    for _, row in df.iterrows():
        lines.append(" & ".join(_tex_escape(str(v)) for v in row.tolist()) + r" \\")
    lines += [r"\hline", r"\end{tabular}", r"\end{table}"]
    return "\n".join(lines) + "\n"


def table_files(model: TableModel) -> dict[str, str]:
    """The Markdown, CSV and LaTeX texts of one table, by file name."""
    display = model.display()
    md = (f"# {model.title}\n\nExperiment `{model.experiment}`{shrunk_note(model.shrunk)}; {model.note()}.\n\n"
          + to_markdown(display))
    return {f"{model.name}.md": md,
            f"{model.name}.csv": model.frame().to_csv(index=False, float_format="%.6g"),
            f"{model.name}.tex": to_latex(display, model.title)}


def render_tables(res: ExperimentResults, out_dir: Path) -> list[Path]:
    """Write every table of the experiment to ``out_dir/<name>.{md,csv,tex}``."""
    written: list[Path] = []
    for spec in res.tables():
        model = build_model(res.restricted_to(spec), spec, with_published=False)
        out_dir.mkdir(parents=True, exist_ok=True)
        for name, text in table_files(model).items():
            (out_dir / name).write_text(text)
            written.append(out_dir / name)
    return written
