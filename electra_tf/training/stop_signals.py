"""Ctrl-C (SIGINT) and SIGTERM (a preemption notice) as a request to save and stop at the next step boundary.

The handler only records the request (and says so with one raw `os.write`): a handler that printed or saved could
land inside the main thread's own `print` ("reentrant call") or save. A second Ctrl-C raises `KeyboardInterrupt`.

Example:
>>> import signal
>>> with StopSignals() as stop:
...     signal.raise_signal(signal.SIGTERM)
>>> stop.requested_by
'SIGTERM'
>>> signal.getsignal(signal.SIGTERM) is signal.SIG_DFL  # the previous handlers are back
True
"""

import os
import signal
import sys

_NOTICES = {
    "SIGINT": "\nCtrl-C: saving at the end of this step, then stopping (Ctrl-C again stops at once)\n",
    "SIGTERM": "\nSIGTERM: saving at the end of this step, then stopping\n",
}


class StopSignals:
    """While the `with` block runs, SIGINT and SIGTERM set `requested_by` (the signal's name) instead of
    stopping the process; a second SIGINT raises `KeyboardInterrupt`."""

    SIGNALS = (signal.SIGTERM, signal.SIGINT)

    def __init__(self):
        self.requested_by = None
        self._previous = {}

    @property
    def requested(self):
        return self.requested_by is not None

    def __enter__(self):
        self._previous = {number: signal.signal(number, self._record) for number in self.SIGNALS}
        return self

    def __exit__(self, *exc_info):
        for number, handler in self._previous.items():
            signal.signal(number, handler)
        self._previous = {}
        return False

    def _record(self, signum, frame):
        del frame
        if self.requested and signum == signal.SIGINT:
            raise KeyboardInterrupt  # the second Ctrl-C: stop now
        self.requested_by = signal.Signals(signum).name
        try:  # a raw write to file descriptor 2: no Python buffer (or its lock) involved
            os.write(sys.__stderr__.fileno(), _NOTICES[self.requested_by].encode())
        except (AttributeError, OSError, ValueError):
            pass  # no usable stderr: the stop message at the step boundary still says it
