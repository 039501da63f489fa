"""The one exception type the CLI turns into a clean error message."""


class IrwError(Exception):
    """A user-facing error: bad input, unknown name, invalid option.

    The message says what was wrong, where, and (where possible) what is valid.
    """
