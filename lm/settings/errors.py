"""The errors a user's input can cause: each message is one line that says what is wrong and what to do. They live
here, apart from the code that raises them, so that a command can catch them before it imports torch or MLflow."""


class ConfigError(ValueError):
    """A configuration that cannot run; the message is one line that names the key."""


class DataError(RuntimeError):
    """A data file that is missing, unreachable or not the pinned one; the message says what to do."""


class TrackingError(RuntimeError):
    """A tracking store that cannot be reached or written; the message says what to do."""


class CheckpointError(ValueError):
    pass


USER_ERRORS = (ConfigError, DataError, TrackingError, CheckpointError)
