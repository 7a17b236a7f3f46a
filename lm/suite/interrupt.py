"""The suite's Ctrl-C while it holds the store: counted, for the scheduler to act on at its next step."""
import signal

STOPPING = "stopping: the runs in progress finish their step and are marked KILLED (Ctrl-C again to quit now)"


class CtrlC:
    """The suite's Ctrl-C, while it holds the store: the first is counted, and the suite acts on it at its next
    step; a second raises KeyboardInterrupt, to quit at once. Python's own handler raises KeyboardInterrupt wherever
    the main thread is, and one raised inside a finalizer or a weakref callback (the database's connections have
    them) is printed and dropped: the suite would go on as if nothing had happened."""

    def __init__(self):
        self.count = 0

    def __enter__(self) -> "CtrlC":
        self._old = signal.signal(signal.SIGINT, self._handle)
        return self

    def __exit__(self, *exc) -> None:
        signal.signal(signal.SIGINT, self._old)

    def _handle(self, signum, frame) -> None:
        self.count += 1
        if self.count > 1:
            raise KeyboardInterrupt
