"""The head statistics: what each attention head does, measured from its weights. Their table (`table`: one entry
per statistic, without torch, which computing, logging, the report and the claims all read), its computing
(`measure`) and the table read back as a run's metrics (`summary`). Imports the model and the spec."""
