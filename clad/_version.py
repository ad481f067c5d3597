"""clad's version (one place, read by the package, results and the command line)."""

__version__ = "0.1.0"
