"""`python -m analysis.report`: the options and the store checked before pandas and MLflow are imported
(analysis/options.py), then the report written (analysis/report/frame.py)."""
if __name__ == "__main__":
    from analysis import options
    from lm import process
    process.before_imports(options.report_before_imports)

from analysis.report.frame import main  # noqa: E402

if __name__ == "__main__":
    process.after_imports()  # the collector, off since before_imports
    process.finish(main())
