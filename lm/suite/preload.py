"""What a local worker imports before its first run (torch, Lightning, MLflow and the run's own modules, about 6 s of
CPU), imported once in the fork server the suite's workers are forked from, so that each worker starts with them
(lm/suite/launchers/local.py), as a command's imports: without what only torchmetrics would use (lm/process.py)."""
from lm import process

process.hide_unused()
import torch  # noqa: E402,F401

from lm.run import train  # noqa: E402,F401

process.show_unused()
