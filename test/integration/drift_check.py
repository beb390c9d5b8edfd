"""Local SGD's drift on real torch (gloo, CPU): run under torchrun with 2 ranks. Trains a small model with
gpu_share_comm.wrap (GPU_SHARE_COMM=local-sgd, the period and warm-up from the environment), each rank on its
own data, and prints one JSON line from rank 0: the drift each average reported (and over how many steps), the
drift measured mid-period (before an average) and right after the last one (comm.finish). Used by
local-sgd-drift.test.ts."""

import json
import os
import sys

import torch
import torch.distributed as dist

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "assets", "trainers"))
import gpu_share_comm  # noqa: E402
import gpu_share_period  # noqa: E402

STEPS = int(os.environ.get("DRIFT_STEPS", "12"))


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(0)  # the same initial model on every rank
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    comm = gpu_share_comm.wrap(model, optimizer)
    gen = torch.Generator().manual_seed(100 + rank)  # each rank its own data: the models drift apart
    reports, mid = [], None
    for step in range(STEPS):
        x = torch.randn(32, 8, generator=gen)
        y = x.sum(dim=1, keepdim=True) * (1 + rank)
        loss = torch.nn.functional.mse_loss(comm.model(x), y)
        comm.optimizer.zero_grad()
        loss.backward()
        comm.optimizer.step()
        line = comm.report()
        if "drift" in line:
            reports.append({"step": step + 1, "drift": line["drift"], "drift_steps": line["drift_steps"]})
        if step + 1 == STEPS - 2:
            mid = gpu_share_period.measure_drift(comm.optimizer.param_groups)
    comm.finish()
    after = gpu_share_period.measure_drift(comm.optimizer.param_groups)
    if rank == 0:
        print("DRIFT " + json.dumps({"reports": reports, "mid": mid, "after": after}), flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
