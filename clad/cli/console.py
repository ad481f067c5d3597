"""What every command shares: exit statuses, SIGTERM handled like Ctrl-C, a console that writes no
control characters, and the parser pieces (a subcommand whose arguments are declared when it is
used, positive numbers). Imports nothing heavy: the whole parser is built from these modules."""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from contextlib import contextmanager
from types import SimpleNamespace


#: exit status when one or more runs failed (the others finished and are kept)
EXIT_RUNS_FAILED = 1
#: exit status for a bad spec or command line
EXIT_USAGE = 2
#: exit status when the results could not be written (disk full, database unwritable)
EXIT_WRITE_FAILED = 111
#: exit status after Ctrl-C (SIGINT) and after SIGTERM (128 + the signal's number, as a shell reports it)
EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 143


class Terminated(KeyboardInterrupt):
    """Raised in the main thread on SIGTERM, so that it stops a run exactly as Ctrl-C does."""


@contextmanager
def sigterm_as_interrupt():
    """While the block runs, SIGTERM raises :class:`Terminated` (once: a second SIGTERM during the
    clean-up is ignored; SIGKILL still ends everything, workers included). Yields a record whose
    ``received`` tells whether SIGTERM came."""
    record = SimpleNamespace(received=False)
    if threading.current_thread() is not threading.main_thread():
        yield record
        return

    def handler(signum, frame):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        record.received = True
        raise Terminated()

    old = signal.signal(signal.SIGTERM, handler)
    try:
        yield record
    finally:
        signal.signal(signal.SIGTERM, old)


#: control characters never written to the console as they are (escape sequences could clear the
#: screen, move the cursor or fake a line): every C0 and C1 control but newline, tab and carriage return
_CONTROL = {
    c: f"\\x{c:02x}"
    for c in [*range(0x00, 0x20), 0x7F, *range(0x80, 0xA0)]
    if chr(c) not in "\n\t\r"
}


def terminal_safe(text: str) -> str:
    r"""``text`` with its control characters written as escapes (``\x1b``): labels, concept names and
    messages that come from files and plug-ins reach the console as text, never as commands.

    >>> terminal_safe("ok\x1b[2J done")
    'ok\\x1b[2J done'
    """
    return text.translate(_CONTROL) if isinstance(text, str) else text


class _SafeStream:
    """A console stream whose writes go through :func:`terminal_safe`; everything else is the stream's."""

    def __init__(self, stream):
        self._stream = stream

    def write(self, text):
        return self._stream.write(terminal_safe(text))

    def __getattr__(self, name):
        return getattr(self._stream, name)


@contextmanager
def safe_console():
    """While the block runs, ``sys.stdout`` and ``sys.stderr`` write through :func:`terminal_safe`."""
    before = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = _SafeStream(sys.stdout), _SafeStream(sys.stderr)
    try:
        yield
    finally:
        sys.stdout, sys.stderr = before


class CommandParser(argparse.ArgumentParser):
    """A subcommand's parser whose arguments may be declared when it is first used (``arguments``, a
    function of the parser): a command whose choices or defaults come from the library (``clad
    validate``'s base metrics) then imports it only when that command is parsed, never for another.

    >>> p = CommandParser(prog="x", arguments=lambda p: p.add_argument("--n", type=int))
    >>> p.parse_args(["--n", "3"]).n
    3
    """

    def __init__(self, *args, arguments=None, **kwargs):
        super().__init__(*args, **kwargs)
        self._arguments = arguments

    def parse_known_args(self, args=None, namespace=None):
        if self._arguments is not None:
            declare, self._arguments = self._arguments, None
            declare(self)
        return super().parse_known_args(args, namespace)


def positive_int(text: str) -> int:
    """An argument that is an integer >= 1.

    >>> positive_int("3")
    3
    """
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer >= 1")
    return value


def positive_float(text: str) -> float:
    """An argument that is a positive, finite number of seconds.

    >>> positive_float("0.5")
    0.5
    """
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive number of seconds")
    return value
