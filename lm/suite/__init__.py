"""Many runs: the suite of exercises, grid sweeps, and the launchers that run them (worker processes, submitit).
Imports one run and everything below it."""
