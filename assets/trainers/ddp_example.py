#!/usr/bin/env python3
"""Example trainer for GPU Share: a small MLP regression trained with PyTorch DDP on data it generates.

Why it looks the way it does:
- The data is generated deterministically per block of samples, so every node can build exactly its own
  shard without a download and every restart sees the same samples.
- Its shard comes from the environment at every (re)start: GPU_SHARE_SHARD_START/END for the node, split
  over the local ranks; plain RANK/WORLD_SIZE over all samples when run under bare torchrun.
- Every rank runs the same number of steps (cycling through its shard), so no rank waits forever in an
  all-reduce for a peer that has run out of data.
- It checkpoints every K steps atomically and, on (re)start, the group agrees on the newest checkpoint any
  rank holds, so a restart resumes instead of starting at step 0, and a node that joins late catches up.
- Each progress line is written with one write call, so ranks sharing a terminal never interleave mid-line.
- SIGTERM (how GPU Share stops, drains and relaunches) finishes the current step, checkpoints it and exits,
  so a drain or a rebalance loses no work.
- It communicates the way the coordinator chose (GPU_SHARE_COMM: ddp, fp16, powersgd, local-sgd) through
  gpu_share_comm.py, torch's own hooks and averagers, and reports what that choice needs: its first progress
  lines of each (re)start carry "grad_bytes", "compute_s" and "comm".
- --hidden/--layers size the model, so a run can be made communication-bound on purpose: --hidden 1024
  --layers 5 is 4.2 M parameters, about 17 MB of fp32 gradients per step.

Progress lines (documented in docs/api.md, "Trainer progress lines"):
  GPU_SHARE_PROGRESS {"step":12,"total_steps":200,"loss":0.53,"samples_per_sec":812.3,"rank":0,
                      "world_size":2,"shard":[0,500],"resumed_from":10}
  (first 3 lines of each start also: "grad_bytes":4352,"compute_s":0.0004,"comm":"ddp")
  Every line also carries "lr" and "grad_norm": any other number on a progress line is charted on the run page.
"""

import argparse
import json
import os
import signal
import sys
import time

import torch
import torch.distributed as dist
import torch.nn as nn

sys.dont_write_bytecode = True  # the bundled folder may be read-only, and must stay as shipped
import gpu_share_comm  # noqa: E402  (next to this file; the script's folder is first on sys.path)

FEATURES = 16
BLOCK = 1024
DATA_SEED = 20240601
CHECKPOINT_NAME = "ddp_example.pt"
# Lines of each (re)start that carry grad_bytes/compute_s/comm (the coordinator reads the first ones).
STATS_LINES = 3
MAX_PARAMETERS = 1_000_000_000


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=200, help="stop after this many optimizer steps")
    p.add_argument("--batch", type=int, default=32, help="samples per step per rank")
    p.add_argument("--checkpoint-every", type=int, default=10, help="checkpoint every K steps (0 = never)")
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--step-sleep", type=float, default=0.0, help="seconds to sleep per step, so a demo can be watched and a worker killed mid-run "
                        "(default 0; the app's example run uses 0.07: 300 steps in about 25 s)")
    p.add_argument("--checkpoint-dir", default=None, help="default: $GPU_SHARE_CHECKPOINT_DIR")
    p.add_argument("--samples", type=int, default=None, help="dataset size; default: $GPU_SHARE_SAMPLES or 4096")
    p.add_argument("--hidden", type=int, default=64,
                   help="width of the hidden layers (default 64). Wider means more gradient bytes per step: "
                        "--hidden 1024 --layers 5 is 4.2 M parameters, ~17 MB of fp32 gradients, "
                        "communication-bound on a 100 Mbit link with plain DDP")
    p.add_argument("--layers", type=int, default=1, help="number of hidden layers (default 1)")
    args = p.parse_args(argv)
    if args.steps < 0 or args.batch < 1 or args.checkpoint_every < 0:
        p.error("--steps must be >= 0, --batch >= 1, --checkpoint-every >= 0")
    if not 1 <= args.hidden <= 65536 or not 1 <= args.layers <= 64:
        p.error("--hidden must be 1..65536 and --layers 1..64")
    if parameter_count(args.hidden, args.layers) > MAX_PARAMETERS:
        p.error(f"--hidden {args.hidden} --layers {args.layers} makes {parameter_count(args.hidden, args.layers):,} "
                f"parameters, more than {MAX_PARAMETERS:,}; choose a smaller width or fewer layers")
    return args


def parameter_count(hidden, layers):
    return (FEATURES + 1) * hidden + (layers - 1) * (hidden + 1) * hidden + hidden + 1


def build_model(hidden, layers):
    """An MLP of `layers` hidden layers of width `hidden`. The default (64, 1) has the same parameter names as
    before these flags existed, so older checkpoints still load."""
    parts = [nn.Linear(FEATURES, hidden), nn.ReLU()]
    for _ in range(layers - 1):
        parts += [nn.Linear(hidden, hidden), nn.ReLU()]
    parts.append(nn.Linear(hidden, 1))
    return nn.Sequential(*parts)


def env_int(name, default=None):
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        return int(raw)
    except ValueError:
        sys.stderr.write(f"ddp_example: ignoring {name}={raw!r}: not a whole number\n")
        return default


def split_range(start, end, parts, index):
    """Contiguous split of [start, end) into `parts`; the first (len mod parts) get one extra sample."""
    total = max(0, end - start)
    base, extra = divmod(total, parts)
    lo = start + index * base + min(index, extra)
    hi = lo + base + (1 if index < extra else 0)
    return lo, hi


def true_weights():
    g = torch.Generator().manual_seed(DATA_SEED)
    return torch.randn(FEATURES, 1, generator=g)


def make_samples(lo, hi):
    """Samples [lo, hi) of the synthetic dataset, identical wherever and whenever they are generated."""
    if hi <= lo:
        return torch.zeros(0, FEATURES), torch.zeros(0, 1)
    w = true_weights()
    xs, ys = [], []
    for block in range(lo // BLOCK, (hi - 1) // BLOCK + 1):
        g = torch.Generator().manual_seed(DATA_SEED + 1 + block)
        x = torch.randn(BLOCK, FEATURES, generator=g)
        noise = 0.05 * torch.randn(BLOCK, 1, generator=g)
        y = torch.tanh(x @ w) + noise
        b0 = block * BLOCK
        a, b = max(lo, b0) - b0, min(hi, b0 + BLOCK) - b0
        xs.append(x[a:b])
        ys.append(y[a:b])
    return torch.cat(xs), torch.cat(ys)


def my_shard(rank, world_size, local_rank, local_world_size, samples):
    node_start = env_int("GPU_SHARE_SHARD_START")
    node_end = env_int("GPU_SHARE_SHARD_END")
    if node_start is not None and node_end is not None:
        return split_range(node_start, node_end, local_world_size, local_rank)
    return split_range(0, samples, world_size, rank)


def load_local_checkpoint(path):
    if not path or not os.path.exists(path):
        return None
    try:
        state = torch.load(path, map_location="cpu")
        if not isinstance(state, dict) or "step" not in state:
            raise ValueError("not a checkpoint of this trainer")
        return state
    except Exception as exc:  # a torn or foreign file must not stop training; say so and start without it
        sys.stderr.write(f"ddp_example: ignoring unreadable checkpoint {path}: {exc}\n")
        return None


def save_checkpoint(path, model, optimizer, step):
    tmp = f"{path}.tmp-{os.getpid()}"
    torch.save({"step": step, "model": model.state_dict(), "optimizer": optimizer.state_dict()}, tmp)
    os.replace(tmp, path)


def agree_on_checkpoint(local_state, rank, world_size, device):
    """Every rank offers its checkpoint's step; the lowest rank holding the highest step sends its state."""
    mine = local_state["step"] if local_state else 0
    best = torch.tensor([mine], dtype=torch.long, device=device)
    dist.all_reduce(best, op=dist.ReduceOp.MAX)
    best_step = int(best.item())
    if best_step == 0:
        return None
    holder = torch.tensor([rank if mine == best_step else world_size], dtype=torch.long, device=device)
    dist.all_reduce(holder, op=dist.ReduceOp.MIN)
    box = [local_state if rank == int(holder.item()) else None]
    dist.broadcast_object_list(box, src=int(holder.item()))
    return box[0]


def emit(record):
    # One write call per line: ranks sharing a pty must never interleave mid-line.
    sys.stdout.write("GPU_SHARE_PROGRESS " + json.dumps(record, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def main(argv):
    args = parse_args(argv)
    rank = env_int("RANK", 0)
    world_size = env_int("WORLD_SIZE", 1)
    local_rank = env_int("LOCAL_RANK", 0)
    local_world_size = env_int("LOCAL_WORLD_SIZE", 1)
    samples = args.samples if args.samples is not None else env_int("GPU_SHARE_SAMPLES", 4096)
    ckpt_dir = args.checkpoint_dir or os.environ.get("GPU_SHARE_CHECKPOINT_DIR") or None

    use_cuda = torch.cuda.is_available()
    if use_cuda:
        torch.cuda.set_device(local_rank % torch.cuda.device_count())
        device = torch.device("cuda", torch.cuda.current_device())
    else:
        device = torch.device("cpu")
    distributed = world_size > 1 or "MASTER_ADDR" in os.environ
    if distributed:
        dist.init_process_group("nccl" if use_cuda else "gloo")

    lo, hi = my_shard(rank, world_size, local_rank, local_world_size, samples)
    xs, ys = make_samples(lo, hi)
    xs, ys = xs.to(device), ys.to(device)

    torch.manual_seed(0)  # identical initial weights on every rank
    model = build_model(args.hidden, args.layers).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)

    ckpt_path = checkpoint_path(ckpt_dir, args.checkpoint_every, CHECKPOINT_NAME)
    start_step = resume(model, optimizer, ckpt_path, rank, world_size, device, distributed)

    loss_fn = nn.MSELoss()
    n = xs.shape[0]

    def batch(step):
        if n == 0:
            return None, None
        idx = (torch.arange(args.batch, device=device) + step * args.batch) % n
        return xs[idx], ys[idx]

    def loss_of(module, step):
        x, y = batch(step)
        if x is None:
            # An empty shard still takes part in every all-reduce, with a loss that moves nothing.
            return module(torch.zeros(1, FEATURES, device=device)).sum() * 0.0
        return loss_fn(module(x), y)

    # --step-sleep is part of every step the ring waits on: a slowed demo is not communication-bound.
    comm, stats = communicate(model, optimizer, loss_of, start_step, device, extra_s=max(0.0, args.step_sleep))
    base = {"rank": rank, "world_size": world_size, "shard": [lo, hi], "resumed_from": start_step}
    return train_steps(comm, model, optimizer, loss_of, start_step=start_step, steps=args.steps,
                       samples_per_step=args.batch if n > 0 else 0, ckpt_path=ckpt_path,
                       checkpoint_every=args.checkpoint_every, local_rank=local_rank,
                       base=base, stats=stats, distributed=distributed, who="ddp_example", step_sleep=args.step_sleep)


def checkpoint_path(ckpt_dir, every, name):
    """Where this trainer checkpoints (the folder made), or None when it does not."""
    if not ckpt_dir or every <= 0:
        return None
    os.makedirs(ckpt_dir, exist_ok=True)
    return os.path.join(ckpt_dir, name)


def resume(model, optimizer, ckpt_path, rank, world_size, device, distributed):
    """Loads the newest checkpoint any rank holds (agreed across the group) into model and optimizer; returns
    the step to start from (0 without one)."""
    local_state = load_local_checkpoint(ckpt_path)
    state = agree_on_checkpoint(local_state, rank, world_size, device) if distributed else local_state
    if not state:
        return 0
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    return int(state["step"])


def communicate(model, optimizer, loss_of, start_step, device, extra_s=0.0):
    """Times one step's compute (before wrapping, on a private copy: no communication in it), then wraps model
    and optimizer in the strategy GPU_SHARE_COMM asks for. Returns (comm, the stats its first lines carry)."""
    compute_s = gpu_share_comm.measure_compute_s(model, optimizer, lambda m: loss_of(m, start_step)) + extra_s
    comm = gpu_share_comm.wrap(model, optimizer, start_step=start_step, compute_s=compute_s,
                               device_ids=[device.index] if device.type == "cuda" else None)
    stats = {"comm": comm.strategy, "grad_bytes": comm.grad_bytes, "powersgd_bytes": comm.powersgd_bytes,
             "compute_s": round(compute_s, 6)}
    return comm, stats


def train_steps(comm, model, optimizer, loss_of, *, start_step, steps, samples_per_step, ckpt_path, checkpoint_every,
                local_rank, base, stats, distributed, who, step_sleep=0.0):
    """The training loop GPU Share's example trainers share (ddp_example.py, tiny_gpt_ddp.py): steps
    start_step..steps-1 through the chosen communication, local-sgd's last average, a checkpoint every
    `checkpoint_every` steps (none when ckpt_path is None), at the end and at a stop, one progress record per
    step (`base`: what every record carries; `stats`: what the first STATS_LINES add), and SIGTERM: finish the
    step, checkpoint it, exit 143. `loss_of(module, step)` is one step's loss. Returns the exit status."""
    net, stepper = comm.model, comm.optimizer
    # Only from here on: during start-up a stop should not wait for a rendezvous to finish.
    stop_asked = []
    signal.signal(signal.SIGTERM, lambda signum, frame: stop_asked.append(signum))

    if start_step >= steps > 0:
        # Resumed from a checkpoint of the last step (the run ended while its coordinator was away): say where it
        # stands, or the run would end showing the step it last heard of.
        emit({"step": steps - 1, "total_steps": steps, "loss": None, "samples_per_sec": 0.0, **base, **stats})

    last = time.perf_counter()
    for step in range(start_step, steps):
        loss = loss_of(net, step)
        stepper.zero_grad(set_to_none=True)
        loss.backward()
        # Cheap extras the run page charts (any other number on the line is a metric): the norm before the step.
        grad_norm = float(torch.nn.utils.clip_grad_norm_(net.parameters(), float("inf")))
        stepper.step()
        if step_sleep > 0:
            time.sleep(step_sleep)
        done = step + 1
        # Read once: a SIGTERM landing between the save and the exit check must not skip the save yet claim it.
        stopping = bool(stop_asked)
        if done == steps:
            comm.finish()  # local-sgd: the last checkpoint and the run's result are the averaged model
        if ckpt_path and local_rank == 0 and (done % checkpoint_every == 0 or done == steps or stopping):
            save_checkpoint(ckpt_path, model, optimizer, done)
        now = time.perf_counter()
        took = max(now - last, 1e-9)
        last = now
        record = {"step": step, "total_steps": steps, "loss": round(float(loss.item()), 6),
                  "samples_per_sec": round(samples_per_step / took, 1), "lr": optimizer.param_groups[0]["lr"],
                  **base}
        if grad_norm == grad_norm and abs(grad_norm) != float("inf"):  # NaN or inf is not a point on a chart
            record["grad_norm"] = round(grad_norm, 6)
        if step - start_step < STATS_LINES:
            record.update(stats)
        record.update(comm.report())  # comm_s: what communication measurably cost, when there is a fresh figure
        emit(record)
        if stopping and done < steps:
            sys.stderr.write(f"{who}: rank {base.get('rank', 0)} stopping after step {step} as asked (SIGTERM)"
                             f"{'; checkpoint saved' if ckpt_path and local_rank == 0 else ''}\n")
            sys.stderr.flush()
            return 128 + signal.SIGTERM
    if distributed:
        dist.barrier()
        dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
