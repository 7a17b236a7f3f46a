"""Where a suite's runs execute: worker processes on this machine (local), or one job per run through submitit, on
SLURM or locally (submitit)."""
