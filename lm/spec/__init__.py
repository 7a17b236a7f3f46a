"""The spec: what a run is, without torch, Lightning, MLflow or pandas. Settings and their schemas, the errors a
user's input can cause, the exercises, the corpus file and the store seen from outside, and the faults the
reliability tests inject. Every layer may import it; it imports no other."""
