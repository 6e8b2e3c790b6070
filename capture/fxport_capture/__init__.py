"""fxport's capture front door.

Turns a PyTorch model into the ``.pt2`` program fxport compiles: it runs
``torch.export.export`` with the capture-only workarounds of the catalog
(the ``DYN-*`` rows and friends) applied as reversible patches for that one
export, saves the program with ``torch.export.save``, writes the example
inputs and the eager outputs beside it, and reports which capture steps
fired. Run it as ``fxport capture`` (or ``python -m fxport_capture``).
"""

__all__ = ["capture", "CaptureError"]

from .errors import CaptureError


def capture(*args, **kwargs):
    """See driver.capture (imported on first use: torch loads slowly)."""
    from .driver import capture as run

    return run(*args, **kwargs)
