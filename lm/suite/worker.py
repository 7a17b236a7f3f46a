"""What a launcher runs in a worker: one run, start to finish (run_job). A worker trains many runs, one after
another, so it keeps what they share: each corpus read once and each store opened once."""
import sys
import time

from lm.run import devices
from lm.settings.config import RunConfig
from lm.suite.launchers.local import worker_slot

# This worker's own, by corpus (its sha256: two texts of your own are two corpora) and by store (its URI and
# checkpoint folder). A store opened again in the same process costs milliseconds, as MLflow keeps its database
# engine per URI; only the first opening of a new database takes seconds.
_corpora: dict = {}
_stores: dict = {}


def run_job(cfg: RunConfig, run_id: str, init_run: str | None) -> dict:
    """In a worker: one run, start to finish."""
    from lm.model.data import prepare
    from lm.run import train
    from lm.tracking.store import Store

    devices.pin_gpu(worker_slot())  # with several GPUs, this worker's own; before anything starts CUDA
    key = cfg.data.sha256
    if key not in _corpora:
        _corpora[key] = prepare(cfg)
    where = (cfg.tracking.uri, cfg.tracking.checkpoint_dir)
    if where not in _stores:
        _stores[where] = Store(*where)
    cfg.runtime.progress_position = worker_slot()
    cfg.runtime.progress = cfg.runtime.progress and sys.stdout.isatty()
    t = time.time()
    result = train.execute(cfg, _corpora[key], _stores[where], run_id, init_run)
    keep = ("status", "reason", "signal", "val_loss", "ms_per_step")
    return {**{k: result[k] for k in keep if k in result}, "seconds": time.time() - t}
