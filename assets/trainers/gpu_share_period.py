"""Changing a running trainer's local-SGD period without a relaunch (GPU Share, issue 24); used by gpu_share_comm.py.

Why it exists: when a link slows or speeds up while a run trains, the coordinator re-decides how often the
members average their models. Restarting every trainer for that would cost a cold start and the steps since the
last checkpoint; the period of torch's PeriodicModelAverager can simply change, as long as every rank changes it
at the same step (their averages are collectives: a rank that averages alone waits forever). The protocol, for
user trainers too, is docs/api.md "Changing the period while training". Standard library and torch only.
"""

import json
import os
import time

import torch
import torch.distributed as dist

CONTROL_ENV = "GPU_SHARE_COMM_CONTROL"
GENERATION_ENV = "GPU_SHARE_GENERATION"
# Same bound as the coordinator's MAX_LOCAL_SGD_PERIOD (src-shared/scheduling/comm-types.ts).
MAX_LOCAL_SGD_PERIOD = 1000
# seq * CONTROL_SCALE + period fits one int64 (seq < 1e8, period <= MAX_LOCAL_SGD_PERIOD < CONTROL_SCALE).
CONTROL_SCALE = 10000


def from_environment(say):
    """The control for this process: the file GPU_SHARE_COMM_CONTROL names (absent: never changes), changes for
    generation GPU_SHARE_GENERATION only."""
    raw = (os.environ.get(GENERATION_ENV) or "").strip()
    return PeriodControl((os.environ.get(CONTROL_ENV) or "").strip() or None, int(raw) if raw.isdigit() else None, say)


class PeriodControl:
    """A changed local-SGD period. The agent writes the file named by GPU_SHARE_COMM_CONTROL ({"generation": g,
    "seq": n, "strategy": "local-sgd", "local_sgd_period": H}, replaced atomically) when the coordinator
    re-decides. Before each model average every rank reads it (one os.stat while unchanged) and the ranks agree
    in one tiny all-reduce (MAX of seq * CONTROL_SCALE + period): the highest seq any rank has read wins, on
    every rank at the same step, and the new period counts from that average on. A bad or foreign file is
    ignored: the run trains on with the period it has."""

    def __init__(self, path, generation, say):
        self.path = path
        self.generation = generation
        self.say = say
        self.read_seq = 0
        self.read_period = None
        self.applied_seq = 0
        self._stamp = None

    def proposal(self):
        """seq * CONTROL_SCALE + period of the newest change read (0: none)."""
        try:
            st = os.stat(self.path) if self.path else None
        except OSError:
            st = None
        if st is not None and (st.st_mtime_ns, st.st_size) != self._stamp:
            self._stamp = (st.st_mtime_ns, st.st_size)
            self._read()
        return self.read_seq * CONTROL_SCALE + self.read_period if self.read_period else 0

    def _read(self):
        try:
            with open(self.path, encoding="utf-8") as f:
                data = json.load(f)
            seq, period = int(data["seq"]), int(data["local_sgd_period"])
            generation = None if data.get("generation") is None else int(data["generation"])
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as error:
            return self.say(f"{CONTROL_ENV} file {self.path} could not be read ({error}); keeping the period")
        if self.generation is not None and generation is not None and generation != self.generation:
            return None
        if data.get("strategy") != "local-sgd" or not 1 <= period <= MAX_LOCAL_SGD_PERIOD or not 0 < seq < 100_000_000:
            return self.say(f"{CONTROL_ENV} file {self.path} asks for {str(data)[:120]}; only a local-sgd period of "
                            f"1..{MAX_LOCAL_SGD_PERIOD} can change while training")
        if seq > self.read_seq:
            self.read_seq, self.read_period = seq, period
        return None


def timed_averages(averager, timer, control=None, device=None):
    """PeriodicModelAverager.average_parameters, timed when this call averages (its own rule). One tiny collective
    first (the ranks agree on the period, PeriodControl; a round trip or two) so the time is the average's
    transfer, not the wait for a rank that is still computing: imbalance between machines is not a cost of the
    link, and a longer period would not remove it. An agreed new period applies after this average."""
    average = averager.average_parameters

    def timed(params):
        averages = averager.step >= averager.warmup_steps and (averager.step - averager.warmup_steps) % averager.period == 0
        agreed = 0
        if averages:
            mine = torch.tensor([control.proposal() if control else 0], dtype=torch.long, device=device)
            dist.all_reduce(mine, op=dist.ReduceOp.MAX, group=averager.process_group)
            agreed = int(mine.item())
        t0 = time.perf_counter()
        average(params)
        if averages:
            timer.averaged(time.perf_counter() - t0)
        seq, period = divmod(agreed, CONTROL_SCALE)
        if control is not None and seq > control.applied_seq and period >= 1:
            control.applied_seq = seq
            if period != averager.period:
                control.say(f"local-sgd: averaging every {period} steps from now on (was {averager.period}; change {seq} from the coordinator)")
                averager.period = period

    averager.average_parameters = timed
