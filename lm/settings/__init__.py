"""The spec: what a run is, without torch, Lightning, MLflow or pandas, and without the network, a database or
another process. Settings and their schemas, the errors a user's input can cause, the exercises, the end-of-run
measurements' table, a corpus file's hash and text. Every layer may import it; it imports no other."""
