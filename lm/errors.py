class ConfigError(ValueError):
    """A configuration that cannot run; the message is one line that names the key."""
