#!/usr/bin/env python3
"""GPU Share's warm launcher: torch's elastic launcher kept ready, so a relaunch skips Python's cold start.

Usage: python warm_launcher.py <fifo path>     (the agent starts it in a pty ahead of any launch)

Why it exists: after a member dies the survivors relaunch, and most of that time went to starting Python and
importing torch twice — once for torchrun, once more in every rank it spawns. This process imports torch and
torch.distributed.run (which does not initialise CUDA), makes the FIFO at <fifo path> and waits on it. The agent
writes one line there: the path of a JSON request {"argv": [...], "env": {...}, "cwd": "..."} (the arguments
after torchrun_shim.py, the launch's whole environment, its folder). The process then becomes that generation's
launcher — same pty, same process group, same signals as a cold `python torchrun_shim.py ...` — by running the
shim's own main(), so the shim's address patch applies unchanged.

Ranks start warm too: torch's launcher runs a function entrypoint with start_method "fork" (torch's own
mechanism), and the function runs the training script with runpy in the forked child, which already holds torch.
Only a plain `python -u script.py` launch of a CPU run (CUDA_VISIBLE_DEVICES="", as the agent sets it) is changed
this way; a GPU run (torch 2.x's launcher initialises CUDA before it starts the ranks, and a forked child cannot
use CUDA then: seen on an H200 with torch 2.11), a module (-m), --no_python or --run_path launch keeps torch's
own entrypoint and subprocess ranks. What stays as in torchrun: --redirects/--tee logs, max_restarts, the exit code of a
failing rank (sys.exit(n) included), SIGTERM to the launcher reaching every rank. What the child gets back as a
cold interpreter would have it: default signal handlers, the script's folder first on sys.path, sys.argv.

The agent falls back to the cold path when this process is not waiting (still importing, exited) — it opens the
FIFO without blocking and a missing reader fails at once. Only the standard library and torch are used.
"""

import json
import os
import signal
import sys

PREFIX = "gpu-share warm launcher:"
# A request holds argv, env and a folder; anything this large is not one.
REQUEST_LIMIT_BYTES = 4 << 20


def exit_when_orphaned(parent, done):
    """While the standby waits, its agent may die without a hangup reaching it (plain pipes, no pty): a
    standby whose parent changed ends itself instead of idling forever. Runs in a thread until `done` is set."""
    while not done.wait(1.0):
        if os.getppid() != parent:
            os._exit(0)


def request_path_of(fifo):
    """Where the agent puts the launch request: beside the FIFO, renamed into place whole."""
    return fifo + ".request.json"


def wait_for_request(fifo):
    """Blocks until the launch request is there; returns its path. Called with the FIFO already open for
    reading, so a request written while torch was still importing is found at once."""
    import threading

    done = threading.Event()
    watchdog = threading.Thread(target=exit_when_orphaned, args=(os.getppid(), done), daemon=True)
    watchdog.start()
    try:
        return await_request_file(fifo)
    finally:
        # Joined before the launch: ranks are forked from this process, best with no other thread about.
        done.set()
        watchdog.join()


def await_request_file(fifo):
    """The agent renames the request into place, then writes a line to the FIFO if anyone reads it (else it
    leaves the request for us). The FIFO is open (non-blocking) before the first look for the file, so a
    request can never be missed: either the look finds it or the line wakes us up."""
    import select

    path = request_path_of(fifo)
    fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        while True:
            if os.path.exists(path):
                return path
            readable, _, _ = select.select([fd], [], [], 1.0)
            if readable and not os.read(fd, 4096):
                # The writer closed after its line: reopen, or select would report the hang-up for ever.
                os.close(fd)
                fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    finally:
        os.close(fd)


def read_request(path):
    """Reads and deletes the request file; returns (argv, env, cwd) or raises ValueError naming what is wrong."""
    try:
        with open(path, "rb") as source:
            data = source.read(REQUEST_LIMIT_BYTES + 1)
    finally:
        try:
            os.unlink(path)
        except OSError:
            pass
    if len(data) > REQUEST_LIMIT_BYTES:
        raise ValueError(f"request {path} is over {REQUEST_LIMIT_BYTES} bytes")
    request = json.loads(data.decode("utf-8"))
    argv, env, cwd = request.get("argv"), request.get("env"), request.get("cwd")
    if not isinstance(argv, list) or not all(isinstance(a, str) for a in argv):
        raise ValueError(f"request {path}: argv must be a list of strings")
    if not isinstance(env, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in env.items()):
        raise ValueError(f"request {path}: env must map strings to strings")
    if not isinstance(cwd, str) or not cwd:
        raise ValueError(f"request {path}: cwd must be a folder")
    return argv, env, cwd


def reset_child_signals():
    """A forked rank inherits the launcher's Python signal handlers (torch's raise SignalException); a cold
    interpreter has the defaults, which the trainer may then replace with its own."""
    for name in ("SIGTERM", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)


def rank_store_to_wait_for(environ):
    """(MASTER_ADDR, MASTER_PORT) of the process group's store when another rank hosts it, else None. Under
    torch's c10d rendezvous rank 0 starts that store in init_process_group (TORCHELASTIC_USE_AGENT_STORE is
    "False"); every other rank connects to it."""
    if environ.get("TORCHELASTIC_USE_AGENT_STORE") == "True" or environ.get("RANK", "0") == "0":
        return None
    host, port = environ.get("MASTER_ADDR", ""), environ.get("MASTER_PORT", "")
    if not host or not port.isdigit():
        return None
    return host.strip("[]"), int(port)


def wait_for_rank_store(environ, timeout_s=None):
    """A forked rank starts in milliseconds, often before rank 0 (on another machine, or a moment later here)
    listens; torch 1.13's store client, refused, tries again only after 1 s, which was most of a relaunch
    (start to first step 1.2-1.3 s). So a rank that is not rank 0 waits here, polling, until rank 0's store
    accepts. Says on stderr how long it waited; one that never answers is left to torch, as before."""
    store = rank_store_to_wait_for(environ)
    if store is None:
        return None
    timeout_s = STORE_WAIT_S if timeout_s is None else timeout_s
    waited = wait_for_store(store, timeout_s=timeout_s, poll_s=0.01)
    state = f"listening after {waited:.2f} s" if waited is not None else f"not answering after {timeout_s:.0f} s"
    sys.stderr.write(f"{PREFIX} rank {environ.get('RANK')}: process group store {store[0]}:{store[1]} {state}\n")
    return waited


def run_script_forked(script, *script_args):
    """The ranks' entrypoint: runs `script` as __main__ in this forked child, as `python -u script` would."""
    import runpy

    reset_child_signals()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.reconfigure(line_buffering=True, write_through=True)
        except (AttributeError, ValueError):
            pass
    wait_for_rank_store(os.environ)
    sys.argv = [script, *script_args]
    sys.path[0] = os.path.dirname(os.path.abspath(script))
    try:
        runpy.run_path(script, run_name="__main__")
    except SystemExit as done:
        # torch's launcher waits for a return value from a function entrypoint; a clean exit returns one.
        if done.code is None or done.code == 0:
            return None
        raise
    return None


def fork_ranks(torchrun):
    """Makes torch's launcher fork ranks that run the script in-process, where its argv allows it."""
    real = torchrun.config_from_args

    def config_from_args(args):
        config, cmd, cmd_args = real(args)
        plain_script = isinstance(cmd, str) and cmd_args[:1] == ["-u"] and cmd_args[1:2] != ["-m"]
        if not plain_script:
            sys.stderr.write(f"{PREFIX} ranks start cold (not a plain python script launch)\n")
            return config, cmd, cmd_args
        if os.environ.get("CUDA_VISIBLE_DEVICES") != "":
            # A GPU run: torch's launcher may touch CUDA before it starts the ranks (torch 2.x does), and a forked
            # child can never initialise CUDA after that. The agent hides every GPU from a CPU run ("").
            sys.stderr.write(f"{PREFIX} ranks start as torch's own subprocesses (GPUs visible: forked ranks could not use CUDA)\n")
            return config, cmd, cmd_args
        config.start_method = "fork"
        sys.stderr.write(f"{PREFIX} ranks forked from the warm launcher (start method fork)\n")
        sys.stderr.flush()
        return config, run_script_forked, cmd_args[1:]

    torchrun.config_from_args = config_from_args


# How often a node waiting in torch's c10d rendezvous reads the shared state again. torch polls every 1 s, keeps
# what it read for 1 s (the state holder's cache_duration) and skews a first join by up to 0.3 s: once Python
# starts warm, that was most of a relaunch. Each poll is one small read of the rendezvous store.
RENDEZVOUS_POLL_S = 0.05


def quicken_rendezvous():
    """Caps the waits of torch's dynamic rendezvous at RENDEZVOUS_POLL_S: dynamic_rendezvous._delay (the 1 s poll
    while other nodes are awaited, the first-join skew) and _BackendRendezvousStateHolder's cache_duration (how
    long a read state is reused). Returns a note for stderr, or None when this torch has neither."""
    try:
        import torch.distributed.elastic.rendezvous.dynamic_rendezvous as dyn
    except ImportError:
        return None
    patched = []
    real_delay = getattr(dyn, "_delay", None)
    if real_delay is not None:

        def capped_delay(seconds):
            if isinstance(seconds, tuple):
                return real_delay(tuple(min(s, RENDEZVOUS_POLL_S) for s in seconds))
            return real_delay(min(seconds, RENDEZVOUS_POLL_S))

        dyn._delay = capped_delay
        patched.append("_delay")
    holder = getattr(dyn, "_BackendRendezvousStateHolder", None)
    if holder is not None:
        real_init = holder.__init__

        def init_with_short_cache(self, backend, settings, cache_duration=1):
            real_init(self, backend, settings, min(cache_duration, RENDEZVOUS_POLL_S))

        holder.__init__ = init_with_short_cache
        patched.append("_BackendRendezvousStateHolder cache_duration")
    if not patched:
        return None
    return f"rendezvous polls every {RENDEZVOUS_POLL_S} s, torch's are 1 s ({', '.join(patched)})"


# How often torch's launcher reads its ranks' log files to copy them to its own output (--redirects/--tee, which
# the agent passes on torch 1.13): torch's 0.1 s held each progress line back by up to that, the relaunch's first
# one included. One read of an idle file per poll.
TAIL_POLL_S = 0.02


def quicken_log_tail():
    """Caps torch's TailLog poll at TAIL_POLL_S. Returns a note for stderr, or None when this torch has none."""
    try:
        from torch.distributed.elastic.multiprocessing import tail_log
    except ImportError:
        return None
    tail = getattr(tail_log, "TailLog", None)
    if tail is None:
        return None
    real_init = tail.__init__

    def init_with_short_poll(self, *args, **kwargs):
        # The poll is kept in _interval_sec (torch 1.13 to 2.x; the arguments' order changed in between).
        real_init(self, *args, **kwargs)
        if isinstance(getattr(self, "_interval_sec", None), (int, float)):
            self._interval_sec = min(self._interval_sec, TAIL_POLL_S)

    tail.__init__ = init_with_short_poll
    return f"rank output copied every {TAIL_POLL_S} s, torch's is 0.1 s (TailLog)"


# A node that is not the store's host waits at most this long for the store to listen before torch connects.
STORE_WAIT_S = 10.0


def store_to_wait_for(argv):
    """(host, port) of the rendezvous store when this launch's --rdzv_conf says is_host=0, else None."""
    endpoint, conf = None, ""
    for arg in argv:
        if arg.startswith("--rdzv_endpoint=") or arg.startswith("--rdzv-endpoint="):
            endpoint = arg.split("=", 1)[1]
        elif arg.startswith("--rdzv_conf=") or arg.startswith("--rdzv-conf="):
            conf = arg.split("=", 1)[1]
        elif not arg.startswith("-"):
            break  # the training script: what follows is its own
    if not endpoint or "is_host=0" not in conf.split(","):
        return None
    host, _, port = endpoint.rpartition(":")
    if not host or not port.isdigit():
        return None
    return host.strip("[]"), int(port)


def wait_for_store(address, timeout_s=STORE_WAIT_S, poll_s=0.02):
    """Waits until the store accepts connections. torch 1.13's store client, refused, tries again only after
    1 s; survivors relaunch together, so the store's host is often not listening yet when the others connect.
    Returns the seconds waited, or None when it never answered (torch then tries and reports as usual)."""
    import socket
    import time

    start = time.monotonic()
    while time.monotonic() - start < timeout_s:
        try:
            with socket.create_connection(address, timeout=max(poll_s * 5, 0.2)):
                return time.monotonic() - start
        except OSError:
            time.sleep(poll_s)
    return None


# What an idle standby calls itself (ps, /proc/PID/comm: at most 15 bytes): it holds no training, so tools and
# tests that look for leftover training can tell it apart. It takes the interpreter's own name back at its launch.
IDLE_NAME = b"gpu-share-warm"


def set_process_name(name):
    """prctl(PR_SET_NAME) through ctypes (standard library); a platform without it keeps its name."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(15, ctypes.c_char_p(name[:15]), 0, 0, 0)
    except (OSError, AttributeError):
        pass


def own_process_name():
    try:
        with open("/proc/self/comm", "rb") as f:
            return f.read().strip() or b"python3"
    except OSError:
        return b"python3"


def main(argv):
    if len(argv) != 1:
        sys.stderr.write(f"{PREFIX} usage: warm_launcher.py <fifo path>\n")
        return 2
    fifo = argv[0]
    own_name = own_process_name()
    set_process_name(IDLE_NAME)
    import torch  # noqa: F401  (the point: imported before the request)
    import torch.distributed.run as torchrun
    import torchrun_shim

    os.mkfifo(fifo, 0o600)
    sys.stderr.write(f"{PREFIX} ready\n")
    sys.stderr.flush()
    try:
        request_path = wait_for_request(fifo)
    finally:
        os.unlink(fifo)
    try:
        launch_argv, env, cwd = read_request(request_path)
    except (OSError, ValueError) as error:
        sys.stderr.write(f"{PREFIX} cannot launch: {error}\n")
        return 2
    set_process_name(own_name)  # from here on it is this launch's training (its ranks inherit the name)
    os.environ.clear()
    os.environ.update(env)
    os.chdir(cwd)
    sys.argv = [os.path.join(os.path.dirname(os.path.abspath(__file__)), "torchrun_shim.py"), *launch_argv]
    sys.stderr.write(f"{PREFIX} launching in the warm launcher (pid {os.getpid()})\n")
    fork_ranks(torchrun)
    for note in (quicken_rendezvous(), quicken_log_tail()):
        if note:
            sys.stderr.write(f"{PREFIX} {note}\n")
    store = store_to_wait_for(launch_argv)
    if store:
        waited = wait_for_store(store)
        state = f"listening after {waited:.2f} s" if waited is not None else f"not answering after {STORE_WAIT_S:.0f} s"
        sys.stderr.write(f"{PREFIX} rendezvous store {store[0]}:{store[1]} {state}\n")
    return torchrun_shim.main(launch_argv)


def exit_now(code):
    """Ends the launcher without Python's teardown. With torch loaded that teardown took 1.5-2 s here (under
    load) after the ranks were gone — time a relaunch waits for, since the next generation starts once every
    survivor's launcher has exited. torch's launcher has written its error files and logs by then."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


def run(argv):
    """main() with the exit status a cold `python torchrun_shim.py` would give (1 and the traceback for an
    uncaught exception, SystemExit's code), ended at once."""
    import traceback

    try:
        code = main(argv)
    except SystemExit as done:
        if done.code is None or isinstance(done.code, int):
            code = done.code or 0
        else:
            sys.stderr.write(f"{done.code}\n")
            code = 1
    except BaseException:  # noqa: B902 — as the interpreter would: the traceback, then status 1
        traceback.print_exc()
        code = 1
    exit_now(code)


if __name__ == "__main__":
    run(sys.argv[1:])
