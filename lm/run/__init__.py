"""One run, start to finish: the Lightning module, its callbacks, the devices, and train.execute. Imports the
measures and everything below them."""
