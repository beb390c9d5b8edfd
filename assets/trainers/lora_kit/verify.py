"""`lora_trainer.py --verify DIR`: reads a PEFT adapter folder back with this kit's own loader, checks its
tensors against its config and the base model, applies it and compares the loss with and without it."""

import torch

from . import corpus, lora, peft_layout
from .base_model import MODEL_NAME, load_base
from .devices import pick_device
from .settings import HYPER_DEFAULTS


def verify_tiny(folder, config, stop, device_wanted, log):
    tensors = peft_layout.read_weights(folder)
    metrics = peft_layout.read_metrics(folder)
    model = load_base(stop, log)
    expected = lora.expected_shapes(model, config["target_modules"], config["r"])
    if not expected:
        raise peft_layout.AdapterError(f"{folder}: target_modules {config['target_modules']} name no layer of {MODEL_NAME}")
    peft_layout.check_shapes(tensors, expected, folder)
    bad = sorted(k for k, t in tensors.items() if not torch.isfinite(t.float()).all())
    if bad:
        raise peft_layout.AdapterError(f"{folder}: tensor {bad[0]} holds NaN or infinite values")

    device = pick_device(device_wanted)
    dataset = metrics.get("dataset", HYPER_DEFAULTS["dataset"][0])
    seq_len = metrics.get("seq_len", HYPER_DEFAULTS["seq_len"][0])
    batch = corpus.eval_batch(corpus.as_tensor(corpus.load_bytes(dataset)), seq_len).to(device)
    model = model.to(device)
    with torch.no_grad():
        without = float(model.loss(batch).item())
        wrapped = lora.inject(model, config["target_modules"], config["r"], config["lora_alpha"])
        lora.load_into(wrapped, tensors)
        model.eval()
        with_adapter = float(model.loss(batch).item())
    return {"ok": True, "backend": "torch-tiny", "keys": len(tensors), "r": config["r"],
            "lora_alpha": config["lora_alpha"], "target_modules": config["target_modules"], "dataset": dataset,
            "loss_with_adapter": round(with_adapter, 6), "loss_without": round(without, 6)}


def verify(folder, stop, device_wanted, log):
    config = peft_layout.read_config(folder)
    base = config.get("base_model_name_or_path")
    if base == MODEL_NAME:
        return verify_tiny(folder, config, stop, device_wanted, log)
    from . import hf_backend  # only for adapters of a transformers model
    return hf_backend.verify_hf(folder, config, device_wanted, log)
