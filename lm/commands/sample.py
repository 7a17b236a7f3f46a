"""`make sample`: text from a trained run, or from a checkpoint file."""
import sys

if __name__ == "__main__":  # `make sample`: the options and the run checked before torch and MLflow load (lm/commands/cli.py)
    from lm import process
    from lm.commands import cli
    process.before_imports(cli.sample_before_imports)

import tempfile
from pathlib import Path

from lm.commands import cli
from lm.model import checkpoint, threads
from lm.model.sample import generate
from lm.tracking.store import Store, TrackingError


def main(argv: list[str] | None = None) -> int:
    """`make sample`: text from a trained run, or from a checkpoint file.

        python -m lm.commands.sample [run=RUN_ID | checkpoint=PATH] [prompt=TEXT] [temperature=0.8] [length=400] [seed=1]

    Without run= or checkpoint=, the newest finished run of `make train` (experiment 'train'). In the prompt,
    \\n is a newline, \\t a tab and \\\\ a backslash."""
    try:
        opts = cli.sample_options(sys.argv[1:] if argv is None else argv)
        with tempfile.TemporaryDirectory() as tmp:
            path = opts.checkpoint
            if not path:
                store = Store()
                run = opts.run or _newest_trained(store)
                try:
                    path = store.client.download_artifacts(run, "model.pt", tmp)
                except Exception:
                    raise ValueError(f"run {run!r} has no model.pt in {store.shown}") from None
            model, meta = checkpoint.load(Path(path))
        stoi = {c: i for i, c in enumerate(meta["chars"])}
        bad = sorted(set(opts.prompt) - stoi.keys())
        if bad:
            raise ValueError(f"prompt characters {''.join(bad)!r} are not in the model's "
                             f"{len(stoi)}-character vocabulary")
    except (ValueError, TrackingError, checkpoint.CheckpointError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    bos = meta["bos"]
    prompt = ([bos] if bos is not None else []) + [stoi[c] for c in opts.prompt]
    threads.use(opts.threads or 1, "sample")
    ids = generate(model, prompt, opts.length, opts.temperature, opts.seed, stop=bos)
    print(opts.prompt + "".join("\n" if i == bos else meta["chars"][i] for i in ids))
    return 0

def _newest_trained(store) -> str:
    exp = store.client.get_experiment_by_name("train")
    runs = store.client.search_runs([exp.experiment_id], "attributes.status = 'FINISHED'",
                                    order_by=["attributes.end_time DESC"], max_results=1) if exp else []
    if not runs:
        raise ValueError(f"no finished `make train` run in {store.shown}; train one, or give run=RUN_ID")
    return runs[0].info.run_id

if __name__ == "__main__":
    process.after_imports()  # the collector, off since before_imports
    process.finish(main())
