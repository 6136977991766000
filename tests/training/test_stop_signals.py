"""Ctrl-C and SIGTERM during training: recorded by the handler, acted on at a step boundary."""

import contextlib
import io
import signal

import pytest

from electra_tf.training.stop_signals import StopSignals


class _SignalsWhileWriting(io.RawIOBase):
    """A stdout whose raw writes raise `number` once, as a Ctrl-C lands while the main thread prints."""

    def __init__(self, number):
        super().__init__()
        self.number, self.written = number, bytearray()

    def writable(self):
        return True

    def write(self, data):
        if self.number is not None:
            number, self.number = self.number, None
            signal.raise_signal(number)  # the handler runs now, inside the buffered writer's flush
        self.written += data
        return len(data)


def test_a_ctrl_c_while_the_main_thread_prints_is_recorded_and_the_print_completes():
    # The race of `make test` (exit 1 instead of 75): the handler printed its notice to stdout while the
    # main thread was inside its own print of "step 8: ..." ("reentrant call inside <_io.BufferedWriter>").
    raw = _SignalsWhileWriting(signal.SIGINT)
    stdout = io.TextIOWrapper(io.BufferedWriter(raw), line_buffering=True)
    with contextlib.redirect_stdout(stdout), StopSignals() as stop:
        print("step 8: loss: 1.0")
    assert stop.requested_by == "SIGINT" and raw.written == b"step 8: loss: 1.0\n"


def test_a_second_ctrl_c_stops_at_once_and_the_handlers_are_restored():
    before = signal.getsignal(signal.SIGINT)
    with pytest.raises(KeyboardInterrupt), StopSignals() as stop:
        signal.raise_signal(signal.SIGTERM)
        assert stop.requested_by == "SIGTERM"
        signal.raise_signal(signal.SIGINT)
    assert signal.getsignal(signal.SIGINT) is before and signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
