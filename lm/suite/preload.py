"""What a local worker imports before its first run (torch, Lightning, MLflow and the run's own modules, about 6 s of
CPU), imported once in the fork server the suite's workers are forked from, so that each worker starts with them
(lm/suite/launchers/local.py), as a command's imports: without what only torchmetrics would use, and with the garbage
collector off (lm/process.py). The objects they made are frozen, in the fork server and so in each worker: a worker's
full collections walk only what its runs allocate."""
from lm import process

with process.heavy_imports():
    process.hide_unused()
    import torch  # noqa: F401
    # MLflow's SQLite store, which `import mlflow` leaves unloaded until a client first opens a store: imported here,
    # a worker's first opening of the suite's store is hundredths of a second, not half of one.
    import mlflow.store.tracking.sqlalchemy_store  # noqa: F401

    from lm.run import train  # noqa: F401
    process.show_unused()
