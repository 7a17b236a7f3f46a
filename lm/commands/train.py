"""`make train`: one run from the command line, every check before any work.

    python -m lm.commands.train [hydra overrides ...] [--resume RUN_ID] [--cfg]
    python -m lm.commands.train -m model.n_head=1,2,4 model.n_layer=2,4 [seeds=3]    (a grid sweep: lm/commands/sweep.py)
"""
import sys

if __name__ == "__main__":  # the command line: checked (and --cfg or a sweep done) before the imports below
    from lm import process
    from lm.commands import cli
    process.before_imports(cli.train_before_imports)

# The heavy imports: torch, Lightning and MLflow take 5 s, which a mistake on the command line never waits for.
from lm.commands import cli, makeargs
from lm.model.data import prepare
from lm.run import train as one_run
from lm.settings import config
from lm.settings.errors import USER_ERRORS
from lm.tracking.store import Store


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    done = cli.train_before_imports(argv)  # --cfg, a sweep, or a mistake in the arguments
    if done is not None:
        return done
    flags = cli.parse_flags(argv)
    argv, resume_id = flags.overrides, flags.resume
    try:
        cfg = config.load(argv)
        corpus = prepare(cfg)
        store = Store(cfg.tracking.uri, cfg.tracking.checkpoint_dir)
        if resume_id is not None:
            # checked again through MLflow's client: the command line checked it without, where it could
            cli.check_resume(store.run_record(resume_id) if resume_id else None, resume_id, store.uri, cfg)
    except USER_ERRORS as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    run_id = resume_id or store.create_run(cfg.tracking.experiment, cfg.tracking.run_name or f"seed{cfg.seed}",
                                           {"config_hash": cfg.config_hash, "seed": cfg.seed})
    result = one_run.execute(cfg, corpus, store, run_id)
    if result["status"] == "KILLED":
        print(f"\n{result['reason']}; resume with: {makeargs.command('train', argv, RESUME=run_id)}", file=sys.stderr)
        return 130
    if result["status"] == "FAILED":
        print(f"error: run {run_id} failed: {result['reason']}", file=sys.stderr)
        return 1
    print(one_run.summary(cfg, run_id, store, result))
    return 0

if __name__ == "__main__":
    process.after_imports()  # the collector, off since before_imports
    process.finish(main())
