"""MLflow: the store, runs created and logged in bulk, the datasets, the environment tags, the parent runs'
aggregates and saved views. Imports the model and the spec."""
