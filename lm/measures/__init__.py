"""What a trained model shows: the end-of-run measurements (probes, samples, the MLflow model, and the head
statistics and knock-out of lm.heads and lm.knockout). Imports tracking, the head statistics, knock-out, the model
and the spec."""
