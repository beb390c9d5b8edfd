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
# Steps (1-based, counted from the run's start) that average every step before the chosen period applies: the
# post-local-SGD warm-up the coordinator sets (LOCAL_SGD_WARMUP_STEPS in src-shared/scheduling/drift-bound.ts).
WARMUP_ENV = "GPU_SHARE_LOCAL_SGD_WARMUP"
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


def warmup_steps(environ=None):
    """The post-local-SGD warm-up asked for (GPU_SHARE_LOCAL_SGD_WARMUP, steps); 0 when unset or not a count."""
    raw = ((os.environ if environ is None else environ).get(WARMUP_ENV) or "").strip()
    return int(raw) if raw.isdigit() else 0


def _tensors(params):
    """The parameter tensors of a parameter list or of optimizer param_groups (what PostLocalSGDOptimizer passes)."""
    params = list(params)
    if params and isinstance(params[0], dict):
        return [p for group in params for p in group["params"]]
    return params


def _relative(before, after):
    """||before - after|| / ||after|| over all tensors, as a float (0 for an all-zero model)."""
    diff = sum(float(torch.sum((b - a.detach()).double() ** 2)) for b, a in zip(before, after))
    norm = sum(float(torch.sum(a.detach().double() ** 2)) for a in after)
    return (diff / norm) ** 0.5 if norm > 0 else 0.0


def _largest(value, group, device):
    """The largest of every rank's `value` (one all-reduce of a scalar)."""
    t = torch.tensor([value], dtype=torch.float64, device=device)
    dist.all_reduce(t, op=dist.ReduceOp.MAX, group=group)
    return float(t.item())


def measure_drift(params, group=None):
    """The members' drift now, without changing the model: the largest over ranks of ||theta_local - theta_avg|| /
    ||theta_avg||, theta_avg the ranks' mean. Collective. ~0 right after an average; for checks and tests (the
    averages measure it as a by-product, timed_averages)."""
    tensors = _tensors(params)
    device = tensors[0].device if tensors else None
    averaged = [p.detach().clone() for p in tensors]
    for t in averaged:
        dist.all_reduce(t, group=group)
        t.div_(dist.get_world_size(group))
    return _largest(_relative([p.detach() for p in tensors], averaged), group, device)


class Warmup:
    """The post-local-SGD warm-up: average after every step up to step `until` (1-based), then every `target`."""

    def __init__(self, until, target):
        self.until = until
        self.target = target


def timed_averages(averager, timer, control=None, device=None, warmup=None):
    """PeriodicModelAverager.average_parameters, timed when this call averages (its own rule). One tiny collective
    first (the ranks agree on the period, PeriodControl; a round trip or two) so the time is the average's
    transfer, not the wait for a rank that is still computing: imbalance between machines is not a cost of the
    link, and a longer period would not remove it. An agreed new period applies after this average (after the
    warm-up, `warmup` a Warmup, when one runs). Each average also measures the drift: this rank's model before it
    against the average (a copy of the parameters, one scalar all-reduce for the largest over ranks), reported as
    timer.drifted(drift, steps it grew over)."""
    average = averager.average_parameters
    since = {"step": averager.step - 1}  # the step of the last average (or the start)

    def timed(params):
        nonlocal warmup
        step = averager.step
        averages = step >= averager.warmup_steps and (step - averager.warmup_steps) % averager.period == 0
        agreed = 0
        before = None
        if averages:
            params = list(params)
            before = [p.detach().clone() for p in _tensors(params)]
            mine = torch.tensor([control.proposal() if control else 0], dtype=torch.long, device=device)
            dist.all_reduce(mine, op=dist.ReduceOp.MAX, group=averager.process_group)
            agreed = int(mine.item())
        t0 = time.perf_counter()
        average(params)
        if averages:
            timer.averaged(time.perf_counter() - t0)
            drift = _largest(_relative(before, _tensors(params)), averager.process_group, device)
            timer.drifted(drift, step - since["step"])
            since["step"] = step
        seq, period = divmod(agreed, CONTROL_SCALE)
        if control is not None and seq > control.applied_seq and period >= 1:
            control.applied_seq = seq
            now = warmup.target if warmup is not None else averager.period
            if period != now:
                control.say(f"local-sgd: averaging every {period} steps from now on (was {now}; change {seq} from the coordinator)"
                            + (f", after the warm-up's step {warmup.until}" if warmup is not None else ""))
                if warmup is not None:
                    warmup.target = period
                else:
                    averager.period = period
        if warmup is not None and step >= warmup.until:
            if control is not None:
                control.say(f"local-sgd: warm-up done at step {step}; averaging every {warmup.target} steps from now on")
            averager.period, warmup = warmup.target, None

    averager.average_parameters = timed
