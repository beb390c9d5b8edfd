"""GPU Share's communication helper: lets any DDP trainer honour the strategy the coordinator chose.

Why it exists: GPU Share picks how a run's members exchange what they learn (plain DDP, fp16-compressed
gradients, PowerSGD, or local SGD that averages models every few steps) from the links it measured, and hands
the choice to every rank as GPU_SHARE_COMM (ddp | fp16 | powersgd | local-sgd; absent means ddp) with
GPU_SHARE_LOCAL_SGD_PERIOD (steps between model averages, local-sgd only). This file turns that choice into
torch's own tools, so nothing home-made sits in the gradient path:
  ddp       DistributedDataParallel as is (every gradient, every step)
  fp16      + ddp_comm_hooks.default_hooks.fp16_compress_hook (half the bytes)
  powersgd  + ddp_comm_hooks.powerSGD_hook (low-rank compression with error feedback). On gloo only
            with torch 2 or newer (one gradient bucket): torch 1.x's hook aborts gloo (gloo::EnforceNotMet ...
            op.preamble.length <= op.nbytes), so there the helper says so on stderr and uses fp16 instead.
  local-sgd + ddp_comm_hooks.post_localSGD_hook (no gradient exchange between machines; ranks of one machine
            still average gradients when every machine runs as many) and PostLocalSGDOptimizer with a
            PeriodicModelAverager that averages the whole model every period steps.
It also measures what the coordinator needs to choose (the trainer prints them in its first progress lines,
docs/api.md "Trainer progress lines"): grad_bytes (fp32 bytes one DDP step all-reduces), powersgd_bytes (what
one PowerSGD step would all-reduce instead, by torch's own rule) and compute_s (one step's seconds without
communication). While training it times what communication actually costs (comm_s, the coordinator decides
with it over its model): for local-sgd each model average (timed around the averager's all-reduce), for ddp,
fp16 and powersgd a step's time (between optimizer steps) minus compute_s; comm.report() hands out a fresh
figure when there is one (after the 1st, 2nd and 3rd step, then every COMM_REPORT_EVERY steps or
COMM_REPORT_EVERY_S seconds, whichever comes first; after every average), to add to that step's progress line.
For local-sgd each average also reports the members' drift (gpu_share_period.py): drift, the largest over ranks
of ||theta_local - theta_avg|| / ||theta_avg|| just before the average, and drift_steps, the steps it grew over;
the coordinator shortens the period when it passes its bound.

The local-SGD period can change while training, without a relaunch: gpu_share_period.py (copy it too), docs/api.md
"Changing the period while training".

Use (stdlib + torch only; copy this file next to your trainer):
    compute_s = gpu_share_comm.measure_compute_s(model, optimizer, lambda m: loss_fn(m(x0), y0))
    comm = gpu_share_comm.wrap(model, optimizer, start_step=resumed_step, compute_s=compute_s)
    for step in ...:
        loss = loss_fn(comm.model(x), y); comm.optimizer.zero_grad(); loss.backward(); comm.optimizer.step()
        line = {"step": step, ...}          # first lines also: "comm": comm.strategy, "grad_bytes": comm.grad_bytes,
        line.update(comm.report())          #   "powersgd_bytes": comm.powersgd_bytes, "compute_s": compute_s
    comm.finish()   # local-sgd: one last average, so every rank ends with the same model
"""

import collections
import copy
import os
import statistics
import sys
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

try:  # the period changed while training (GPU_SHARE_COMM_CONTROL); without the file, periods change by relaunch
    import gpu_share_period
except ImportError:
    gpu_share_period = None

STRATEGIES = ("ddp", "fp16", "powersgd", "local-sgd")
COMM_ENV = "GPU_SHARE_COMM"
PERIOD_ENV = "GPU_SHARE_LOCAL_SGD_PERIOD"
# Same bound as the coordinator's MAX_LOCAL_SGD_PERIOD (src-shared/scheduling/comm-types.ts).
MAX_LOCAL_SGD_PERIOD = 1000
# PowerSGD runs plain all-reduce for its first iterations (torch requires > 1 with error feedback); keep it short.
POWERSGD_START_ITER = 2
# PowerSGD's low rank (fewest bytes; the error feedback recovers the accuracy) and torch's default for when a
# layer is worth compressing.
POWERSGD_RANK = 1
POWERSGD_MIN_COMPRESSION_RATE = 2
PREFIX = "gpu-share comm:"
# A ddp/fp16/powersgd step's comm_s is the median of this many recent steps, reported once per as many steps
# (and after each of the first three, so the coordinator's first decision can use it); local-sgd's the median
# of the last few averages, reported after each.
COMM_REPORT_EVERY = 20
COMM_FIRST_REPORTS = 3
AVERAGES_KEPT = 5
# ...or once this many seconds passed since the last report, from the median of the last few steps only, so a
# link that slows mid-run shows in comm_s within seconds (the coordinator measures the link again on it).
COMM_REPORT_EVERY_S = 5.0
RECENT_STEPS = 5


def _say(message):
    sys.stderr.write(f"{PREFIX} {message}\n")
    sys.stderr.flush()


def read_choice(environ=None, say=_say):
    """The strategy and period asked for in the environment, checked. Bad values are named on stderr and the
    run trains with plain ddp (always correct, only slower) rather than stopping. Returns (strategy, period)."""
    env = os.environ if environ is None else environ
    raw = (env.get(COMM_ENV) or "").strip()
    if raw == "":
        return "ddp", None
    strategy = raw.lower()
    if strategy not in STRATEGIES:
        say(f"{COMM_ENV}={raw[:40]!r} is not one of {', '.join(STRATEGIES)} ('auto' is resolved by the "
            f"coordinator, never passed to a trainer); training with ddp. Set it to one of those or unset it.")
        return "ddp", None
    if strategy != "local-sgd":
        return strategy, None
    raw_period = (env.get(PERIOD_ENV) or "").strip()
    try:
        period = int(raw_period)
    except ValueError:
        period = None
    if period is None or not 1 <= period <= MAX_LOCAL_SGD_PERIOD:
        shown = repr(raw_period[:40]) if raw_period else "unset"
        say(f"{COMM_ENV}=local-sgd needs {PERIOD_ENV} = steps between model averages, a whole number from 1 to "
            f"{MAX_LOCAL_SGD_PERIOD}, but it is {shown}; training with ddp. Set {PERIOD_ENV}.")
        return "ddp", None
    return strategy, period


def grad_bytes(model):
    """Bytes of fp32 gradients one plain DDP step all-reduces: every parameter that takes a gradient."""
    return sum(p.numel() * 4 for p in model.parameters() if p.requires_grad)


def powersgd_bytes(model, rank=POWERSGD_RANK, min_compression_rate=POWERSGD_MIN_COMPRESSION_RATE):
    """fp32 bytes one PowerSGD step all-reduces for this model, by torch's own rule (powerSGD_hook's
    _should_compress): each gradient, viewed as (rows, the rest), goes as P (rows x r) and Q (rest x r) when
    that is more than min_compression_rate times smaller; otherwise (biases, thin layers) it goes whole. The
    coordinator decides with this figure instead of its cautious 1/32 estimate."""
    from torch.distributed.algorithms.ddp_comm_hooks.powerSGD_hook import _should_compress

    elements = 0
    for p in model.parameters():
        if not p.requires_grad:
            continue
        rows = p.shape[0] if p.dim() > 0 else 1
        rest = p.numel() // rows if rows else 0
        compress, whole, compressed = _should_compress(rows, rest, min(rows, rest, rank), min_compression_rate)
        elements += compressed if compress else whole
    return elements * 4


def _sync(device):
    if device is not None and device.type == "cuda":
        torch.cuda.synchronize(device)


def measure_compute_s(model, optimizer, loss_of, steps=3, warmup=1):
    """Seconds of one training step (forward, backward, optimizer) with no communication at all: timed on a
    private copy of the model and a fresh optimizer of the same kind, before training, so the real model and
    optimizer are untouched and no collective runs (timing DDP itself would include the all-reduce, and
    no_sync() steps would let the replicas drift). Takes `warmup` untimed steps (allocations, kernels) and
    returns the median of `steps` timed ones. `loss_of(module)` returns a loss for one batch."""
    twin = copy.deepcopy(model)
    try:
        opt = type(optimizer)(twin.parameters(), **optimizer.defaults)
    except Exception:  # an optimizer that cannot be rebuilt from its defaults: time plain SGD instead
        opt = torch.optim.SGD(twin.parameters(), lr=1e-3)
    device = next(twin.parameters()).device if any(True for _ in twin.parameters()) else None
    times = []
    for i in range(warmup + max(1, steps)):
        _sync(device)
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        loss_of(twin).backward()
        opt.step()
        _sync(device)
        if i >= warmup:
            times.append(time.perf_counter() - t0)
    del twin, opt
    times.sort()
    return times[len(times) // 2]


def _node_subgroup(local_world_size, world_size, device):
    """This machine's ranks as a process group, for local SGD's cheap intra-machine gradient average; None
    when machines run different numbers of ranks (torch's launcher numbers each machine's ranks as one
    contiguous block, so equal sizes mean blocks of local_world_size). Built with new_group like torch's
    new_subgroups, which in torch 1.13 refuses to run without CUDA."""
    if local_world_size <= 1 or world_size % local_world_size != 0:
        sizes = None
    else:
        sizes = torch.tensor([local_world_size, -local_world_size], dtype=torch.long, device=device)
        dist.all_reduce(sizes, op=dist.ReduceOp.MAX)  # every rank must agree, or new_subgroups would hang
    if sizes is None or int(sizes[0]) != -int(sizes[1]):
        return None
    mine = None
    for first in range(0, world_size, local_world_size):
        ranks = list(range(first, first + local_world_size))
        group = dist.new_group(ranks=ranks)  # collective: every rank creates every group, in the same order
        if dist.get_rank() in ranks:
            mine = group
    return mine


class CommTimer:
    """Times what communication costs while training, with time.perf_counter only (one call per step; on CUDA
    the optimizer step's end is not synchronised, so a step's time is the interval between optimizer steps,
    which the device's pace sets). `report()` returns {"comm": strategy, "comm_s": seconds} once per fresh
    figure, else {}."""

    def __init__(self, strategy, compute_s):
        self.strategy = strategy
        self.compute_s = compute_s
        self._last = None
        self._steps = collections.deque(maxlen=COMM_REPORT_EVERY)
        self._averages = collections.deque(maxlen=AVERAGES_KEPT)
        self._counted = 0
        self._fresh = None
        self._drift = None
        self._reported_at = None

    def stepped(self):
        """After each optimizer step (ddp, fp16, powersgd): its interval minus compute is communication."""
        now = time.perf_counter()
        if self._last is not None:
            self._steps.append(now - self._last)
            self._counted += 1
            due = self._counted <= COMM_FIRST_REPORTS or self._counted % COMM_REPORT_EVERY == 0
            late = self._reported_at is not None and now - self._reported_at >= COMM_REPORT_EVERY_S
            if self.compute_s is not None and (due or late):
                recent = list(self._steps)[-RECENT_STEPS:] if late and not due else self._steps
                self._fresh = max(0.0, statistics.median(recent) - self.compute_s)
                self._reported_at = now
        self._last = now

    def averaged(self, seconds):
        """After each local-sgd model average, with its seconds."""
        self._averages.append(seconds)
        self._fresh = statistics.median(self._averages)

    def drifted(self, drift, steps):
        """After each local-sgd model average: the members' drift it removed, grown over `steps` steps."""
        self._drift = {"drift": round(drift, 8), "drift_steps": steps}

    def report(self):
        fresh, self._fresh = self._fresh, None
        drift, self._drift = self._drift, None
        out = {} if fresh is None else {"comm": self.strategy, "comm_s": round(fresh, 6)}
        return out if drift is None else {**out, "comm": self.strategy, **drift}


def _timed_step(optimizer, timer):
    """optimizer.step, then timer.stepped() (an instance attribute: torch 1.13 has no step post-hook)."""
    step = optimizer.step

    def timed(*args, **kwargs):
        result = step(*args, **kwargs)
        timer.stepped()
        return result

    optimizer.step = timed


def _timed_averages(averager, timer):
    """PeriodicModelAverager.average_parameters, timed when this call averages, after a barrier (a rank still
    computing is imbalance, not link cost). gpu_share_period.timed_averages does the same and agrees on a period."""
    average = averager.average_parameters

    def timed(params):
        averages = averager.step >= averager.warmup_steps and (averager.step - averager.warmup_steps) % averager.period == 0
        if averages:
            dist.barrier(group=averager.process_group)
        t0 = time.perf_counter()
        average(params)
        if averages:
            timer.averaged(time.perf_counter() - t0)

    averager.average_parameters = timed


class Comm:
    """The wrapped model and optimizer a trainer steps with, and what it reports."""

    def __init__(self, model, optimizer, strategy, period, grad_bytes_, averager=None, powersgd_bytes_=None, timer=None):
        self.model = model
        self.optimizer = optimizer
        self.strategy = strategy
        self.local_sgd_period = period
        self.grad_bytes = grad_bytes_
        self.powersgd_bytes = powersgd_bytes_
        self._averager = averager
        self._timer = timer

    def report(self):
        """{"comm": strategy, "comm_s": seconds of one communication round} when a fresh measurement is ready
        (add it to this step's progress line), else {}. Always {} with nothing to communicate."""
        return self._timer.report() if self._timer is not None else {}

    def finish(self):
        """local-sgd: average once more unless the last step just did, so every rank ends with one model.
        Collective: every rank calls it after its last step. Other strategies: nothing to do."""
        averager = self._averager
        if averager is None:
            return
        last = averager.step - 1  # the averager's count of the last step it saw
        if (last - averager.warmup_steps) % averager.period != 0:
            from torch.distributed.algorithms.model_averaging import utils as averaging

            averaging.average_parameters_or_parameter_groups(self.optimizer.param_groups, averager.process_group)


def powersgd_on_gloo(version):
    """Whether torch `version` ("2.11.0+cu130", "1.13.1") trains PowerSGD on gloo: 2 or newer does (seen on a
    device: CPU and CUDA tensors, bytes as powersgd_bytes); 1.x's gloo aborts on the hook. A version that does
    not start with a number counts as old: fp16 is safe, an abort is not."""
    head = str(version).strip().split(".", 1)[0]
    return head.isdigit() and int(head) >= 2


def wrap(model, optimizer, start_step=0, environ=None, say=_say, device_ids=None, compute_s=None):
    """Wraps `model` (already on its device, with identical weights on every rank) and `optimizer` for the
    strategy in the environment. Needs an initialised process group when the world has more than one rank;
    without one the model is returned as is (nothing to communicate). `start_step` is the step training
    resumes at, so local SGD averages at the same steps on every rank after a restart. `compute_s`
    (measure_compute_s) lets a ddp/fp16/powersgd step's communication be measured; without it only local-sgd's
    averages are. Returns a Comm."""
    strategy, period = read_choice(environ, say)
    size = grad_bytes(model)
    psgd = powersgd_bytes(model)
    if not (dist.is_available() and dist.is_initialized()) or dist.get_world_size() == 1:
        return Comm(model, optimizer, strategy, period, size, powersgd_bytes_=psgd)
    backend = dist.get_backend()
    if strategy == "powersgd" and backend != "nccl" and not powersgd_on_gloo(torch.__version__):
        say(f"powersgd needs NCCL or torch 2 or newer, but this run's process group uses {backend} with torch "
            f"{torch.__version__}, whose PowerSGD hook aborts gloo (gloo::EnforceNotMet ... op.preamble.length <= "
            f"op.nbytes); using fp16 compression instead. Install torch 2 or newer, or run on CUDA GPUs, for PowerSGD.")
        strategy = "fp16"
    if strategy == "powersgd" and backend != "nccl":
        # One gradient bucket on gloo: on a device (torch 2.11, 2 CPU ranks) PowerSGD over ddp_example's default
        # buckets (1.1 MB of gradients: two) hung at its first compressed step, while one bucket (bench/
        # powersgd-ranks.py, bucket_cap_mb=1000) trained. Each bucket's hook chains P then Q all-reduces from
        # callbacks, whose order across buckets need not match between ranks; with one bucket it must.
        ddp = DistributedDataParallel(model, device_ids=device_ids, bucket_cap_mb=size / 1e6 + 1)
    else:
        ddp = DistributedDataParallel(model, device_ids=device_ids)
    averager = None
    if strategy == "fp16":
        from torch.distributed.algorithms.ddp_comm_hooks import default_hooks

        ddp.register_comm_hook(None, default_hooks.fp16_compress_hook)
    elif strategy == "powersgd":
        from torch.distributed.algorithms.ddp_comm_hooks import powerSGD_hook

        state = powerSGD_hook.PowerSGDState(process_group=None, matrix_approximation_rank=1,
                                            start_powerSGD_iter=POWERSGD_START_ITER)
        ddp.register_comm_hook(state, powerSGD_hook.powerSGD_hook)
    elif strategy == "local-sgd":
        from torch.distributed.algorithms.ddp_comm_hooks import post_localSGD_hook
        from torch.distributed.algorithms.model_averaging.averagers import PeriodicModelAverager
        from torch.distributed.optim import PostLocalSGDOptimizer

        device = next(model.parameters()).device
        local_world_size = int(os.environ.get("LOCAL_WORLD_SIZE", "1") or 1)
        subgroup = _node_subgroup(local_world_size, dist.get_world_size(), device)
        # start_localSGD_iter=0: local SGD from the first step (the coordinator chose it for a slow link).
        state = post_localSGD_hook.PostLocalSGDState(process_group=None, subgroup=subgroup, start_localSGD_iter=0,
                                                     post_local_gradient_allreduce=subgroup is not None)
        ddp.register_comm_hook(state, post_localSGD_hook.post_localSGD_hook)
        # The post-local-SGD warm-up (GPU_SHARE_LOCAL_SGD_WARMUP): steps up to that one average after every step.
        warm = gpu_share_period.warmup_steps() if gpu_share_period is not None else 0
        warmup = gpu_share_period.Warmup(warm, period) if start_step < warm and period > 1 else None
        averager = PeriodicModelAverager(period=1 if warmup else period, warmup_steps=0)
        # It averages when its count % period == 0 and counts each step() call; counting from start_step + 1
        # makes it average after every step whose number (1-based) is a multiple of the period, on every rank,
        # resumed or not.
        averager.step = start_step + 1
        optimizer = PostLocalSGDOptimizer(optim=optimizer, averager=averager)
    timer = CommTimer(strategy, compute_s)
    if averager is not None:
        if gpu_share_period is not None:
            control = gpu_share_period.from_environment(say)
            gpu_share_period.timed_averages(averager, timer, control, next(model.parameters()).device, warmup)
        else:
            _timed_averages(averager, timer)
    else:
        _timed_step(optimizer, timer)
    if strategy == "local-sgd":
        say(f"local-sgd: no gradient exchange between machines; the model is averaged every {period} steps"
            + (f" after a warm-up that averages every step up to step {warmup.until}" if warmup else ""))
    return Comm(ddp, optimizer, strategy, period, size, averager, powersgd_bytes_=psgd, timer=timer)
