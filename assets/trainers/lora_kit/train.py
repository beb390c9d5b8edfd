"""Training a LoRA adapter on tiny-gpt with plain PyTorch: base frozen, only A and B learn, next-token loss on
the corpus, progress lines as the DDP example prints them, outputs written only once training has finished."""

import torch

from . import corpus, lora, peft_layout
from .base_model import MODEL_NAME, load_base
from .devices import pick_device
from .loop import metrics, run_steps


def _eval_loss(model, batch):
    was_training = model.training
    model.eval()
    with torch.no_grad():
        value = float(model.loss(batch).item())
    model.train(was_training)
    return value


def train_tiny(s, stop, emit, log):
    device = pick_device(s["device"])
    base = load_base(stop, log)
    tokens = corpus.as_tensor(corpus.load_bytes(s["dataset"]))
    model = base.to(device)
    eval_batch = corpus.eval_batch(tokens, s["seq_len"]).to(device)
    eval_base = _eval_loss(model, eval_batch)

    torch.manual_seed(s["seed"])  # dropout draws, when lora_dropout > 0
    wrapped = lora.inject(model, s["target_modules"], s["rank"], s["alpha"], s["lora_dropout"], seed=s["seed"])
    params = lora.trainable_parameters(wrapped)
    trainable = sum(p.numel() for p in params)
    generator = torch.Generator().manual_seed(s["seed"])
    model.train()
    log(f"training LoRA r={s['rank']} alpha={s['alpha']} on {', '.join(s['target_modules'])} "
        f"({trainable} trainable parameters) for {s['steps']} steps on {device.type}")

    def step_loss(_step):
        return model.loss(corpus.random_batch(tokens, s["batch"], s["seq_len"], generator).to(device))

    final = run_steps(s, step_loss, params, stop, emit)
    losses = {"final": final, "eval_base": eval_base, "eval": _eval_loss(model, eval_batch)}
    config = peft_layout.adapter_config(MODEL_NAME, s["rank"], s["alpha"], s["lora_dropout"], s["target_modules"])
    result = metrics(s, "torch-tiny", MODEL_NAME, device, losses, trainable)
    peft_layout.write_adapter(s["output_dir"], config, lora.adapter_tensors(wrapped), result)
    return result
