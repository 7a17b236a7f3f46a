"""What a trained model shows: the end-of-run measurements (probes, samples, head statistics, knock-out, the MLflow
model) and the tables they fill. Imports tracking, the model and the spec."""
