"""What can go wrong in pretraining, in one place; every message names the file, section or key and the fix."""

from ..errors import ElmoError


class ConfigError(ElmoError):
    """A pretraining config that cannot be used; the message names the section and key."""
