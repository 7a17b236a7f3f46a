"""MLflow: the store, runs created and logged in bulk, the datasets, the environment tags, the parent runs'
aggregates and saved views; and the store seen without MLflow (store_check), which a command reads before its heavy
imports. Imports the model and the spec."""
