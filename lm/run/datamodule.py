"""A corpus as Lightning's data module: random training windows from the run's step on, and the fixed validation
batches."""
import pytorch_lightning as pl
from torch.utils.data import DataLoader

from lm.model.data import Corpus, TrainBatches, val_batches


class CorpusDataModule(pl.LightningDataModule):
    def __init__(self, corpus: Corpus, batch_size: int, block_size: int, seed: int,
                 n_val_batches: int, val_batch_size: int):
        super().__init__()
        self.corpus, self.batch_size, self.block_size, self.seed = corpus, batch_size, block_size, seed
        self.val = val_batches(corpus, n_val_batches, val_batch_size, block_size)

    def train_dataloader(self):
        # Called after a checkpoint is restored, so a resumed run picks up at its own step.
        start = self.trainer.global_step if self.trainer else 0
        return DataLoader(TrainBatches(self.corpus, self.batch_size, self.block_size, self.seed, start),
                          batch_size=None)

    def val_dataloader(self):
        return DataLoader(self.val, batch_size=None)
