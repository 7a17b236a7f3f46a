"""The analysis of the runs, above lm, in rooms named for what they hold:

    verdicts/        the verdict engine: numbers in, verdicts out (no MLflow, no figures)
    store_reading/   the runs read back from the MLflow store, through MLflow's client only
    report/          `make report`: the document, its sections and figures (python -m analysis.report)
    runs.py          the notebook API, the runs as pandas tables, and `make export` (python -m analysis.runs)
    planning.py      the seeds an open claim needs: its test's power at its next look's level, decide's plan
    decide.py        `make decide`: seeds added in rounds to what the table leaves undecided
    options.py       the options of make report, make export and make decide, and the store's checks, made
                     before any heavy import
    scale_timing.py  the report's rows of `make bench`'s scale table
"""
