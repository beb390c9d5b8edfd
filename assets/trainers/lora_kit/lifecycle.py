"""How the trainer stops and writes: SIGTERM sets a flag the loops check between steps (so a stop is prompt
and never leaves a torn file), and every output file is written to a temporary name next to it and renamed."""

import os
import signal
import tempfile

EXIT_STOPPED = 128 + signal.SIGTERM


def _file_mode():
    # mkstemp makes 0600 files; outputs get the mode a plain open() would give them (0666 less the umask).
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


FILE_MODE = _file_mode()


class Stopped(Exception):
    """SIGTERM arrived; the trainer unwinds and exits EXIT_STOPPED without writing its outputs."""


class StopFlag:
    def __init__(self):
        self.asked = False

    def install(self):
        signal.signal(signal.SIGTERM, self._on_term)
        return self

    def _on_term(self, signum, frame):
        self.asked = True

    def check(self):
        if self.asked:
            raise Stopped()


def _stage(folder, name, data):
    """Writes bytes to a hidden temporary file in `folder`; returns its path."""
    fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=folder)
    try:
        os.fchmod(fd, FILE_MODE)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
    except BaseException:
        _discard(tmp)
        raise
    return tmp


def _discard(path):
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def write_atomically(path, data):
    """Writes bytes to a temporary file next to `path`, then renames it over `path`."""
    tmp = _stage(os.path.dirname(path) or ".", os.path.basename(path), data)
    try:
        os.replace(tmp, path)
    except BaseException:
        _discard(tmp)
        raise


def commit_files(folder, files):
    """Writes {name: bytes} into `folder` as one step: all temporaries first, then the renames with SIGTERM held
    back, so a stop lands before the first file appears or after the last."""
    os.makedirs(folder, exist_ok=True)
    staged = []
    try:
        for name, data in sorted(files.items()):
            staged.append((_stage(folder, name, data), os.path.join(folder, name)))
        blocked = hasattr(signal, "pthread_sigmask")
        if blocked:
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
        try:
            for tmp, final in staged:
                os.replace(tmp, final)
            staged = []
        finally:
            if blocked:
                signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
    finally:
        for tmp, _ in staged:
            _discard(tmp)


def remove_stale_temporaries(folder):
    """Temporaries a killed earlier attempt left behind (.<name>.<random>.tmp) must not end up in the artifact."""
    if not os.path.isdir(folder):
        return
    for name in os.listdir(folder):
        if name.startswith(".") and name.endswith(".tmp") and os.path.isfile(os.path.join(folder, name)):
            _discard(os.path.join(folder, name))
