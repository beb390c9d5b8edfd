"""LoRA layers: y = W x + (alpha / r) · B A dropout(x), with W frozen, A (r × in) drawn from a seeded generator
as PEFT does (kaiming-uniform, bound 1/sqrt(in)) and B (out × r) zero, so an untrained adapter changes nothing.
Adapter tensors are named the way PEFT saves them: base_model.model.<module path>.lora_A.weight / lora_B.weight."""

import math

import torch
import torch.nn as nn

PEFT_PREFIX = "base_model.model."


class LoraLinear(nn.Module):
    def __init__(self, base, rank, alpha, dropout, generator):
        super().__init__()
        self.base_layer = base
        self.scaling = alpha / rank
        self.lora_dropout = nn.Dropout(dropout) if dropout > 0 else nn.Identity()
        self.lora_A = nn.Linear(base.in_features, rank, bias=False)
        self.lora_B = nn.Linear(rank, base.out_features, bias=False)
        bound = 1.0 / math.sqrt(base.in_features)
        with torch.no_grad():
            self.lora_A.weight.copy_(torch.rand(rank, base.in_features, generator=generator) * 2 * bound - bound)
            self.lora_B.weight.zero_()
        self.lora_A.to(base.weight.device)
        self.lora_B.to(base.weight.device)

    def forward(self, x):
        return self.base_layer(x) + self.lora_B(self.lora_A(self.lora_dropout(x))) * self.scaling


def targeted_paths(model, target_modules):
    """Paths of the Linear layers whose last name is in target_modules, in the model's own order."""
    return [name for name, module in model.named_modules()
            if isinstance(module, nn.Linear) and name.rsplit(".", 1)[-1] in target_modules]


def inject(model, target_modules, rank, alpha, dropout=0.0, seed=0):
    """Freezes the model and wraps each targeted Linear in a LoraLinear; returns {path: LoraLinear}."""
    for p in model.parameters():
        p.requires_grad_(False)
    generator = torch.Generator().manual_seed(seed)
    wrapped = {}
    for path in targeted_paths(model, target_modules):
        parent_path, _, child = path.rpartition(".")
        parent = model.get_submodule(parent_path) if parent_path else model
        layer = LoraLinear(getattr(parent, child), rank, alpha, dropout, generator)
        setattr(parent, child, layer)
        wrapped[path] = layer
    if not wrapped:
        raise ValueError(f"no Linear layer named {', '.join(target_modules)} in the model")
    return wrapped


def trainable_parameters(wrapped):
    return [p for layer in wrapped.values() for p in (layer.lora_A.weight, layer.lora_B.weight)]


def adapter_tensors(wrapped):
    """{PEFT key: tensor on the CPU} for every wrapped layer."""
    out = {}
    for path, layer in wrapped.items():
        out[f"{PEFT_PREFIX}{path}.lora_A.weight"] = layer.lora_A.weight.detach().cpu().clone()
        out[f"{PEFT_PREFIX}{path}.lora_B.weight"] = layer.lora_B.weight.detach().cpu().clone()
    return out


def expected_shapes(model, target_modules, rank):
    """{PEFT key: shape} an adapter of this rank on these modules of `model` must hold."""
    shapes = {}
    for path in targeted_paths(model, target_modules):
        linear = model.get_submodule(path)
        shapes[f"{PEFT_PREFIX}{path}.lora_A.weight"] = (rank, linear.in_features)
        shapes[f"{PEFT_PREFIX}{path}.lora_B.weight"] = (linear.out_features, rank)
    return shapes


def load_into(wrapped, tensors):
    with torch.no_grad():
        for path, layer in wrapped.items():
            layer.lora_A.weight.copy_(tensors[f"{PEFT_PREFIX}{path}.lora_A.weight"])
            layer.lora_B.weight.copy_(tensors[f"{PEFT_PREFIX}{path}.lora_B.weight"])
