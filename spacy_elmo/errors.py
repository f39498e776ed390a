"""The error type every user-facing mistake raises, so the CLI can print it without a traceback."""


class ElmoError(ValueError):
    """Bad input from the user (a file, an option, a config); the message names it and the fix."""
