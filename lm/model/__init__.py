"""The model and its data: the GPT, the corpora (found or downloaded: download) and their batches, checkpoints,
sampling. Imports the spec only."""
