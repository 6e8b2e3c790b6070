"""The one error type the front door reports (one clear line, no traceback)."""


class CaptureError(Exception):
    """A model could not be captured; the message says why, in user words."""
