"""The optimizer loop and the metrics record both backends share: one step per batch, a progress line every
`log_every` steps and at the last, SIGTERM honoured between steps."""

import time

import torch


def run_steps(s, step_loss, params, stop, emit):
    """Runs s['steps'] AdamW steps on `params`; `step_loss(step)` returns the loss tensor of that step's batch.
    Returns the last step's loss."""
    optimizer = torch.optim.AdamW(params, lr=s["lr"], weight_decay=0.0)
    last = time.perf_counter()
    loss_value = None
    for step in range(s["steps"]):
        stop.check()
        loss = step_loss(step)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        loss_value = float(loss.item())
        if (step + 1) % s["log_every"] == 0 or step + 1 == s["steps"]:
            now = time.perf_counter()
            emit({"step": step, "total_steps": s["steps"], "loss": round(loss_value, 6),
                  "samples_per_sec": round(s["batch"] * s["log_every"] / max(now - last, 1e-9), 1)})
            last = now
    stop.check()
    return loss_value


def metrics(s, backend, base_model, device, losses, trainable_params):
    """metrics.json's content: settings and results only (no times or host names, so identical runs match).
    `losses`: {'final', 'eval_base', 'eval'}."""
    return {
        "alpha": s["alpha"], "backend": backend, "base_model": base_model, "batch": s["batch"], "dataset": s["dataset"],
        "device": device.type, "eval_loss": round(losses["eval"], 6), "eval_loss_base": round(losses["eval_base"], 6),
        "final_loss": round(losses["final"], 6), "lora_dropout": s["lora_dropout"], "lr": s["lr"], "rank": s["rank"],
        "seed": s["seed"], "seq_len": s["seq_len"], "steps": s["steps"], "target_modules": s["target_modules"],
        "torch": torch.__version__, "trainable_params": trainable_params,
    }
