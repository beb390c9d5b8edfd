#!/usr/bin/env python3
"""tiny-gpt in DDP mode: trains the adapter jobs' tiny-gpt language model (assets/trainers/lora_kit) as a run
across machines, with the communication GPU Share chose for it (GPU_SHARE_COMM, via gpu_share_comm.py).

Why it looks the way it does:
- A real language model next to ddp_example's regression, so strategies are tried on attention and embedding
  gradients too; it needs only torch and the corpus shipped in assets/corpus (no downloads).
- A "sample" is a window of the corpus at a fixed position (sample i starts at i * stride), so every node builds
  exactly its shard (GPU_SHARE_SHARD_START/END) and every restart sees the same windows.
- Everything else is ddp_example.py's, imported: the group agrees on the newest checkpoint any rank holds
  (resume), the step is timed and the model wrapped in the chosen communication (communicate), and the same
  training loop runs it (train_steps: SIGTERM finishes the step and checkpoints, one write per progress line,
  the first lines of each start carry grad_bytes, compute_s and comm). Initial weights are seeded here.

Progress lines (docs/api.md, "Trainer progress lines"):
  GPU_SHARE_PROGRESS {"step":12,"total_steps":200,"loss":2.31,"samples_per_sec":80.1,"rank":0,"world_size":2,...}
"""

import argparse
import os
import sys

sys.dont_write_bytecode = True  # the bundled folder may be read-only, and must stay as shipped
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

from ddp_example import checkpoint_path, communicate, env_int, my_shard, resume, train_steps  # noqa: E402
from lora_kit import corpus  # noqa: E402
from lora_kit.tiny_model import TINY_GPT, TinyGPT  # noqa: E402

CHECKPOINT_NAME = "tiny_gpt_ddp.pt"
WINDOW_STRIDE = 7  # co-prime with most lengths: neighbouring samples overlap little


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=200, help="stop after this many optimizer steps")
    p.add_argument("--batch", type=int, default=8, help="windows per step per rank")
    p.add_argument("--seq-len", type=int, default=64, help=f"bytes per window (at most {TINY_GPT['max_seq']})")
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--checkpoint-every", type=int, default=20, help="checkpoint every K steps (0 = never)")
    p.add_argument("--checkpoint-dir", default=None, help="default: $GPU_SHARE_CHECKPOINT_DIR")
    p.add_argument("--samples", type=int, default=None, help="windows in the dataset; default: $GPU_SHARE_SAMPLES or 4096")
    args = p.parse_args(argv)
    if args.steps < 0 or args.batch < 1 or args.checkpoint_every < 0:
        p.error("--steps must be >= 0, --batch >= 1, --checkpoint-every >= 0")
    if not 2 <= args.seq_len <= TINY_GPT["max_seq"]:
        p.error(f"--seq-len must be 2..{TINY_GPT['max_seq']} (tiny-gpt's context)")
    return args


def windows(tokens, lo, hi, seq_len):
    """Samples [lo, hi) as [n, seq_len + 1] windows at fixed positions in the corpus."""
    span = seq_len + 1
    room = tokens.numel() - span
    if room < 0:
        raise corpus.CorpusError(f"corpus has {tokens.numel()} bytes, fewer than seq_len + 1 = {span}")
    starts = [(i * WINDOW_STRIDE) % (room + 1) for i in range(lo, hi)]
    return torch.stack([tokens[s:s + span] for s in starts]) if starts else torch.zeros(0, span, dtype=torch.long)


def main(argv):
    args = parse_args(argv)
    rank, world_size = env_int("RANK", 0), env_int("WORLD_SIZE", 1)
    local_rank, local_world_size = env_int("LOCAL_RANK", 0), env_int("LOCAL_WORLD_SIZE", 1)
    samples = args.samples if args.samples is not None else env_int("GPU_SHARE_SAMPLES", 4096)
    ckpt_dir = args.checkpoint_dir or os.environ.get("GPU_SHARE_CHECKPOINT_DIR") or None

    use_cuda = torch.cuda.is_available()
    if use_cuda:
        torch.cuda.set_device(local_rank % torch.cuda.device_count())
    device = torch.device("cuda", torch.cuda.current_device()) if use_cuda else torch.device("cpu")
    distributed = world_size > 1 or "MASTER_ADDR" in os.environ
    if distributed:
        dist.init_process_group("nccl" if use_cuda else "gloo")

    try:
        tokens = corpus.as_tensor(corpus.load_bytes("all"))
        lo, hi = my_shard(rank, world_size, local_rank, local_world_size, samples)
        data = windows(tokens, lo, hi, args.seq_len).to(device)
    except corpus.CorpusError as exc:
        sys.stderr.write(f"tiny_gpt_ddp: {exc}\n")
        return 2

    torch.manual_seed(1234)  # identical initial weights on every rank
    model = TinyGPT(TINY_GPT).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)

    ckpt_path = checkpoint_path(ckpt_dir, args.checkpoint_every, CHECKPOINT_NAME)
    start_step = resume(model, optimizer, ckpt_path, rank, world_size, device, distributed)
    n = data.shape[0]

    def loss_of(module, step):
        if n == 0:
            # An empty shard still takes part in every all-reduce, with a loss that moves nothing.
            return module(torch.zeros(1, 2, dtype=torch.long, device=device)).sum() * 0.0
        idx = (torch.arange(args.batch, device=device) + step * args.batch) % n
        block = data[idx]
        logits = module(block[:, :-1])
        return torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), block[:, 1:].reshape(-1))

    comm, stats = communicate(model, optimizer, loss_of, start_step, device)
    base = {"rank": rank, "world_size": world_size, "shard": [lo, hi], "resumed_from": start_step}
    return train_steps(comm, model, optimizer, loss_of, start_step=start_step, steps=args.steps,
                       samples_per_step=args.batch if n else 0, ckpt_path=ckpt_path,
                       checkpoint_every=args.checkpoint_every, local_rank=local_rank, base=base, stats=stats,
                       distributed=distributed, who="tiny_gpt_ddp")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
