"""Head knock-out: how much the validation loss rises when one head, one block's attention or one MLP is replaced.
What a knock-out table holds (`table`, without torch: the report reads it), its measuring (`measure`) and the table
read back as a run's metrics and a head table (`summary`). Imports the model and the spec."""
