"""The report: `make report`'s document, its parts and its figures, read from the store and judged by the verdict
engine (analysis.verdicts).

    frame.py         the document's frame and `main`: the overview, perplexity, the claims table, the comparisons,
                     the failures, the head statistics, then each exercise's section; written and logged back
    sections/        an exercise's section as the `report:` block of its YAML declares it
    kinds.py         the generic kinds a `report:` block chooses from (curves, final, sweep, heads, ...)
    knockout.py      which heads matter, attention_view.py the attention explorer, environments.py where the runs ran
    verdict_text.py  what a verdict says in words: its interval, label and notes, the claims table as a frame
    numbers.py       how a number, a claim's own numbers, a mean ± std and a difference's interval are written
    parent_runs.py   the verdicts and figures onto each exercise's parent run
    document.py      the document, as Markdown and self-contained HTML
    painter.py       the figures as work for worker processes; figures.py the drawings (matplotlib, seaborn)

`python -m analysis.report` (this package's __main__) checks its options and the store before it imports pandas and
MLflow; this module imports nothing, so that check stays fast.
"""


def main(argv: list[str] | None = None) -> int:
    """`make report` from Python: frame.main, imported only when called (this package is imported first by
    `python -m analysis.report`, before its options are checked)."""
    from analysis.report.frame import main as write

    return write(argv)
