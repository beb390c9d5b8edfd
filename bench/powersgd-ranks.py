"""PowerSGD across two ranks, on a CUDA GPU when there is one (both ranks on cuda:0: NCCL refuses two ranks on one
GPU, so the transport is gloo with CUDA tensors), else on the CPU. Why: the coordinator decides with
gpu_share_comm.powersgd_bytes(model); this checks that figure against the bytes torch's powerSGD_hook really
all-reduces per step (all_reduce is counted), that the replicas stay identical, and the loss next to plain DDP and
fp16. Run (torch's own launcher; torch 1.13 needs --redirects=1 --tee=1 and aborts gloo on PowerSGD):
  H=1024 STEPS=300 python3 -m torch.distributed.run --standalone --nproc_per_node 2 bench/powersgd-ranks.py
  STRATS=ddp,fp16 picks strategies; CUDA_VISIBLE_DEVICES= forces the CPU. Prints one RESULT line of JSON."""
import os, sys, time, json
import torch, torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "assets", "trainers"))
import gpu_share_comm as gc
from torch.distributed.algorithms.ddp_comm_hooks import powerSGD_hook, default_hooks

def model_for(hidden, layers):
    torch.manual_seed(0)
    mods = [torch.nn.Linear(64, hidden), torch.nn.ReLU()]
    for _ in range(layers - 1):
        mods += [torch.nn.Linear(hidden, hidden), torch.nn.ReLU()]
    mods += [torch.nn.Linear(hidden, 1)]
    return torch.nn.Sequential(*mods)

counted = {"bytes": 0, "calls": 0}
_orig = dist.all_reduce
def counting_all_reduce(tensor, *a, **k):
    counted["bytes"] += tensor.numel() * tensor.element_size(); counted["calls"] += 1
    return _orig(tensor, *a, **k)

def run(strategy, steps, hidden, layers):
    dev = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
    model = model_for(hidden, layers).to(dev)
    ddp = DDP(model, device_ids=[0] if dev.type == "cuda" else None, bucket_cap_mb=1000)
    if strategy == "powersgd":
        st = powerSGD_hook.PowerSGDState(process_group=None, matrix_approximation_rank=gc.POWERSGD_RANK,
                                         start_powerSGD_iter=gc.POWERSGD_START_ITER)
        ddp.register_comm_hook(st, powerSGD_hook.powerSGD_hook)
    elif strategy == "fp16":
        ddp.register_comm_hook(None, default_hooks.fp16_compress_hook)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.01, momentum=0.9)
    g = torch.Generator(device="cpu").manual_seed(1 + dist.get_rank())
    w = torch.randn(64, 1, generator=torch.Generator().manual_seed(7)).to(dev)
    per_step = []
    t0 = time.perf_counter(); losses = []
    for s in range(steps):
        x = torch.randn(256, 64, generator=g).to(dev); y = torch.sin(x @ w)
        dist.all_reduce = counting_all_reduce; powerSGD_hook.dist.all_reduce = counting_all_reduce
        before = counted["bytes"]
        loss = torch.nn.functional.mse_loss(ddp(x), y)
        opt.zero_grad(); loss.backward(); opt.step()
        if dev.type == "cuda": torch.cuda.synchronize()
        per_step.append(counted["bytes"] - before)
        losses.append(loss.item())
    wall = time.perf_counter() - t0
    # replicas must agree (PowerSGD's error feedback keeps them identical because all ranks apply the same update)
    flat = torch.cat([p.detach().flatten() for p in model.parameters()])
    ref = flat.clone(); dist.broadcast(ref, 0)
    return {"strategy": strategy, "first_loss": sum(losses[:10]) / 10, "last_loss": sum(losses[-10:]) / 10,
            "wall_s": round(wall, 2), "bytes_per_step_late": per_step[-1], "bytes_step0": per_step[0],
            "max_replica_diff": float((flat - ref).abs().max()),
            "grad_bytes": gc.grad_bytes(model), "powersgd_bytes_predicted": gc.powersgd_bytes(model)}

def main():
    dist.init_process_group("gloo")
    if torch.cuda.is_available(): torch.cuda.set_device(0)
    hidden, layers, steps = int(os.environ.get("H", 1024)), 4, int(os.environ.get("STEPS", 300))
    out = []
    for strat in os.environ.get("STRATS", "ddp,fp16,powersgd").split(","):
        out.append(run(strat, steps, hidden, layers))
    if dist.get_rank() == 0:
        print("RESULT " + json.dumps({"torch": torch.__version__, "gpu": torch.cuda.get_device_name(0) if torch.cuda.is_available() else "cpu",
                                       "world": dist.get_world_size(), "backend": dist.get_backend(), "runs": out}))
    dist.destroy_process_group()

if __name__ == "__main__":
    main()
