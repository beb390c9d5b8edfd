"""Example project trainer (docs/api.md, "Your own project"): fits y = a*x + b on this member's data files.

It imports a local module (mylib.py), reads the jsonl files named by GPU_SHARE_DATA_FILES_PATH in GPU_SHARE_DATA_DIR
(shard mode: this member's files; replicate: all; several ranks on one member divide them by LOCAL_RANK),
averages gradients over all ranks (gloo, torch 1.13), checkpoints every step so a relaunch resumes (--step-sleep S slows each step, for tests that act mid-run), and global
rank 0 writes result.json to GPU_SHARE_OUTPUT_DIR.
"""
import json
import os
import sys
import time

import torch
import torch.distributed as dist

import mylib


def main():
    steps = int(sys.argv[sys.argv.index("--steps") + 1]) if "--steps" in sys.argv else 20
    step_sleep = float(sys.argv[sys.argv.index("--step-sleep") + 1]) if "--step-sleep" in sys.argv else 0.0
    distributed = "MASTER_ADDR" in os.environ
    if distributed:
        dist.init_process_group("gloo")
    rank = dist.get_rank() if distributed else 0
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    local_world = int(os.environ.get("LOCAL_WORLD_SIZE", 1))
    data_dir = os.environ.get("GPU_SHARE_DATA_DIR", "data")
    files_path = os.environ.get("GPU_SHARE_DATA_FILES_PATH")
    files = json.load(open(files_path)) if files_path else []
    mine = sorted(files)[local_rank::local_world]
    pairs = mylib.read_pairs([os.path.join(data_dir, name) for name in mine])
    print(f"rank {rank}: files {mine} ({len(pairs)} rows)", flush=True)
    x = torch.tensor([p[0] for p in pairs], dtype=torch.float32)
    y = torch.tensor([p[1] for p in pairs], dtype=torch.float32)
    w = torch.zeros(2, requires_grad=True)
    start = 0
    ckpt_dir = os.environ.get("GPU_SHARE_CHECKPOINT_DIR")
    ckpt = os.path.join(ckpt_dir, "project-example.pt") if ckpt_dir else None
    if ckpt and os.path.exists(ckpt):
        state = torch.load(ckpt)
        w.data.copy_(state["w"])
        start = state["step"] + 1
    if distributed:
        # Only rank 0 checkpoints, on its own machine: every rank resumes from rank 0's step and weights, so a
        # member that joined late (no checkpoint here) stays in step with the others instead of running on alone.
        shared = torch.cat([w.detach(), torch.tensor([float(start)])])
        dist.broadcast(shared, 0)
        w.data.copy_(shared[:2])
        start = int(shared[2])
    for step in range(start, steps):
        loss = ((w[0] * x + w[1] - y) ** 2).sum() / max(1, len(pairs)) if len(pairs) else (w * 0).sum()
        w.grad = None
        loss.backward()
        if distributed:
            dist.all_reduce(w.grad)
            w.grad /= dist.get_world_size()
        with torch.no_grad():
            w -= 0.5 * w.grad
        if step_sleep:
            time.sleep(step_sleep)
        if rank == 0:
            print("GPU_SHARE_PROGRESS " + json.dumps({"step": step, "total_steps": steps, "loss": float(loss), "rank": 0}), flush=True)
            if ckpt:
                os.makedirs(ckpt_dir, exist_ok=True)
                torch.save({"w": w.detach().clone(), "step": step}, ckpt + ".tmp")
                os.replace(ckpt + ".tmp", ckpt)
    out = os.environ.get("GPU_SHARE_OUTPUT_DIR")
    if rank == 0 and out:
        with open(os.path.join(out, "result.json"), "w", encoding="utf-8") as f:
            json.dump({"a": float(w[0]), "b": float(w[1]), "steps": steps}, f)
    if distributed:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
