"""The model and its data: the GPT, the corpora and their batches, checkpoints, sampling. Imports the spec only."""
