"""What a check raises when the thing it checks does not exist in this JAX."""


class CannotCheck(Exception):
    """Raised by a check whose subject does not exist in this JAX (no YNN fusion, no profiler
    events API): the claim neither holds nor drifts here. The message is the reason."""
