"""Reading the MLflow store: the exercises' runs read back through MLflow's client only (reader.py: Reader, one
store; ExerciseRuns, one exercise's runs and the numbers its claims read)."""
