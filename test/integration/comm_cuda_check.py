#!/usr/bin/env python3
"""A CUDA/NCCL check of gpu_share_comm.py for a machine with one GPU (run by hand; not part of the suite).

Why: PowerSGD is NCCL only and the suite has no GPU. Two NCCL ranks cannot share one GPU, so this runs a
one-rank NCCL group and lets gpu_share_comm.wrap() take its multi-rank path (it sees a world of 2 only while
wrapping; every collective then really runs on NCCL over the one-rank group). Per strategy it trains the
ddp_example model at --hidden 1024 --layers 5 for a few steps on CUDA and prints the loss, the steps per
second and what the trainer would report. Exit status 0 when every strategy trained and its loss fell.

    python3 test/integration/comm_cuda_check.py
"""

import os
import sys
import time

import torch
import torch.distributed as dist

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "assets", "trainers"))
import ddp_example  # noqa: E402
import gpu_share_comm  # noqa: E402

STEPS = 60


def main():
    if not torch.cuda.is_available():
        print("no CUDA device: nothing to check")
        return 2
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29561")
    dist.init_process_group("nccl", rank=0, world_size=1)
    device = torch.device("cuda", 0)
    xs, ys = ddp_example.make_samples(0, 4096)
    xs, ys = xs.to(device), ys.to(device)
    loss_fn = torch.nn.MSELoss()
    failed = []
    for strategy in ("ddp", "fp16", "powersgd", "local-sgd"):
        torch.manual_seed(0)
        model = ddp_example.build_model(1024, 5).to(device)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)

        def loss_of(module, step):
            idx = (torch.arange(256, device=device) + step * 256) % xs.shape[0]
            return loss_fn(module(xs[idx]), ys[idx])

        compute_s = gpu_share_comm.measure_compute_s(model, optimizer, lambda m: loss_of(m, 0))
        real_size = dist.get_world_size
        dist.get_world_size = lambda group=None: 2
        try:
            comm = gpu_share_comm.wrap(model, optimizer, environ={"GPU_SHARE_COMM": strategy,
                                                                  "GPU_SHARE_LOCAL_SGD_PERIOD": "4"},
                                       device_ids=[0])
        finally:
            dist.get_world_size = real_size
        losses = []
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for step in range(STEPS):
            loss = loss_of(comm.model, step)
            comm.optimizer.zero_grad(set_to_none=True)
            loss.backward()
            comm.optimizer.step()
            losses.append(float(loss.item()))
        comm.finish()
        torch.cuda.synchronize()
        took = time.perf_counter() - t0
        early, late = sum(losses[:5]) / 5, sum(losses[-5:]) / 5
        ok = late < early and all(l == l for l in losses)
        if not ok:
            failed.append(strategy)
        print(f"{strategy:9s} in force={comm.strategy:9s} {type(comm.model).__name__} steps/s={STEPS / took:8.1f} "
              f"compute_s={compute_s:.5f} grad_bytes={comm.grad_bytes} loss {early:.4f} -> {late:.4f} "
              f"{'ok' if ok else 'FAILED'}", flush=True)
    dist.destroy_process_group()
    print("failed: " + ", ".join(failed) if failed else "all strategies trained on CUDA/NCCL")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
