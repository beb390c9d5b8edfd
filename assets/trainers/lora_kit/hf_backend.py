"""The transformers + peft path: used only when both import and --base-model names a local model folder. LoRA is
applied by peft itself and saved with save_pretrained, so the adapter is exactly what peft users expect. Nothing is
downloaded (local_files_only)."""

import os
import tempfile

import torch

from . import corpus, peft_layout
from .devices import pick_device
from .lifecycle import commit_files
from .loop import metrics, run_steps
from .settings import HYPER_DEFAULTS


def availability():
    """(True, 'transformers X, peft Y') or (False, why not)."""
    try:
        import peft
        import transformers
    except ImportError as exc:
        return False, f"{exc.name or 'transformers/peft'} is not installed"
    return True, f"transformers {transformers.__version__}, peft {peft.__version__}"


def _load(path, device):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
    model = AutoModelForCausalLM.from_pretrained(path, local_files_only=True).to(device)
    return tokenizer, model


def _tokens(tokenizer, dataset):
    text = corpus.load_bytes(dataset).decode("utf-8")
    return torch.tensor(tokenizer(text)["input_ids"], dtype=torch.long)


def _loss(model, batch):
    model.eval()
    with torch.no_grad():
        return float(model(input_ids=batch, labels=batch).loss.item())


def train_hf(s, stop, emit, log):
    from peft import LoraConfig, get_peft_model

    device = pick_device(s["device"])
    tokenizer, model = _load(s["model"], device)
    tokens = _tokens(tokenizer, s["dataset"])
    eval_batch = corpus.eval_batch(tokens, s["seq_len"]).to(device)[:, :-1]
    eval_base = _loss(model, eval_batch)
    torch.manual_seed(s["seed"])
    config = LoraConfig(r=s["rank"], lora_alpha=s["alpha"], lora_dropout=s["lora_dropout"],
                        target_modules=s["target_modules"], bias="none", task_type="CAUSAL_LM")
    model = get_peft_model(model, config)
    params = [p for p in model.parameters() if p.requires_grad]
    trainable = sum(p.numel() for p in params)
    generator = torch.Generator().manual_seed(s["seed"])
    log(f"training LoRA with peft on {s['model']} ({trainable} trainable parameters)")

    def step_loss(_step):
        model.train()
        batch = corpus.random_batch(tokens, s["batch"], s["seq_len"], generator).to(device)[:, :-1]
        return model(input_ids=batch, labels=batch).loss

    final = run_steps(s, step_loss, params, stop, emit)
    losses = {"final": final, "eval_base": eval_base, "eval": _loss(model, eval_batch)}
    result = metrics(s, "peft", s["model"], device, losses, trainable)
    # Staged outside the output folder: a kill mid-save must leave nothing there.
    with tempfile.TemporaryDirectory(prefix="gpu-share-peft-") as staging:
        model.save_pretrained(staging)
        files = {}
        for name in sorted(os.listdir(staging)):
            full = os.path.join(staging, name)
            if os.path.isfile(full):
                with open(full, "rb") as f:
                    files[name] = f.read()
        files[peft_layout.METRICS_NAME] = peft_layout.json_bytes(result)
        commit_files(s["output_dir"], files)
    return result


def verify_hf(folder, config, device_wanted, log):
    base = config.get("base_model_name_or_path")
    ok, why = availability()
    if not ok:
        raise peft_layout.AdapterError(f"{folder}: adapter for {base!r} needs transformers and peft to verify; {why}")
    if not isinstance(base, str) or not os.path.isdir(base):
        raise peft_layout.AdapterError(f"{folder}: base model folder {base!r} (base_model_name_or_path) is not on this machine")
    from peft import PeftModel

    tensors = peft_layout.read_weights(folder)
    metrics = peft_layout.read_metrics(folder)
    device = pick_device(device_wanted)
    tokenizer, model = _load(base, device)
    seq_len = metrics.get("seq_len", HYPER_DEFAULTS["seq_len"][0])
    tokens = _tokens(tokenizer, metrics.get("dataset", HYPER_DEFAULTS["dataset"][0]))
    batch = corpus.eval_batch(tokens, seq_len).to(device)[:, :-1]
    without = _loss(model, batch)
    with_adapter = _loss(PeftModel.from_pretrained(model, folder).to(device), batch)
    return {"ok": True, "backend": "peft", "keys": len(tensors), "r": config["r"], "lora_alpha": config["lora_alpha"],
            "target_modules": config["target_modules"], "loss_with_adapter": round(with_adapter, 6),
            "loss_without": round(without, 6)}
