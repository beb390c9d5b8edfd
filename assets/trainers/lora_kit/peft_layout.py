"""PEFT's adapter layout: adapter_config.json (a LoraConfig as PEFT writes it) and adapter_model.safetensors,
plus this trainer's metrics.json. JSON with sorted keys and nothing time- or host-dependent, so identical runs
write identical bytes."""

import json
import os

from . import safetensors_io
from .lifecycle import commit_files

CONFIG_NAME = "adapter_config.json"
WEIGHTS_NAME = "adapter_model.safetensors"
METRICS_NAME = "metrics.json"


class AdapterError(Exception):
    """A missing, corrupt or inconsistent adapter folder; the message names the file and the fault."""


def _number(x):
    return int(x) if float(x).is_integer() else float(x)


def adapter_config(base_model, rank, alpha, dropout, target_modules):
    return {
        "alpha_pattern": {},
        "auto_mapping": None,
        "base_model_name_or_path": base_model,
        "bias": "none",
        "fan_in_fan_out": False,
        "inference_mode": True,
        "init_lora_weights": True,
        "layers_pattern": None,
        "layers_to_transform": None,
        "lora_alpha": _number(alpha),
        "lora_dropout": float(dropout),
        "modules_to_save": None,
        "peft_type": "LORA",
        "r": int(rank),
        "rank_pattern": {},
        "revision": None,
        "target_modules": list(target_modules),
        "task_type": "CAUSAL_LM",
        "use_dora": False,
        "use_rslora": False,
    }


def json_bytes(value):
    return (json.dumps(value, sort_keys=True, indent=2) + "\n").encode("utf-8")


def write_adapter(folder, config, tensors, metrics):
    commit_files(folder, {
        CONFIG_NAME: json_bytes(config),
        WEIGHTS_NAME: safetensors_io.save_bytes(tensors, metadata={"format": "pt"}),
        METRICS_NAME: json_bytes(metrics),
    })


def _read_json(path, what):
    try:
        with open(path, "rb") as f:
            value = json.loads(f.read().decode("utf-8"))
    except FileNotFoundError:
        raise AdapterError(f"{path}: missing; {what}") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise AdapterError(f"{path}: not valid JSON ({exc})") from None
    if not isinstance(value, dict):
        raise AdapterError(f"{path}: expected a JSON object")
    return value


def read_config(folder):
    path = os.path.join(folder, CONFIG_NAME)
    config = _read_json(path, "not a PEFT adapter folder")
    if config.get("peft_type") != "LORA":
        raise AdapterError(f"{path}: peft_type is {config.get('peft_type')!r}, only LORA adapters are read")
    r, alpha, modules = config.get("r"), config.get("lora_alpha"), config.get("target_modules")
    if not isinstance(r, int) or isinstance(r, bool) or r < 1:
        raise AdapterError(f"{path}: r must be a whole number >= 1, got {r!r}")
    if not isinstance(alpha, (int, float)) or isinstance(alpha, bool) or alpha <= 0:
        raise AdapterError(f"{path}: lora_alpha must be a number > 0, got {alpha!r}")
    if isinstance(modules, str):
        modules = [modules]
    if not isinstance(modules, list) or not modules or not all(isinstance(m, str) for m in modules):
        raise AdapterError(f"{path}: target_modules must be a non-empty list of names, got {modules!r}")
    config["target_modules"] = modules
    return config


def read_weights(folder):
    path = os.path.join(folder, WEIGHTS_NAME)
    if not os.path.exists(path):
        raise AdapterError(f"{path}: missing; the adapter has no weights")
    try:
        return safetensors_io.load_file(path)
    except safetensors_io.SafetensorsError as exc:
        raise AdapterError(str(exc)) from None


def read_metrics(folder):
    """metrics.json when present (it says which corpus the adapter was trained on); {} otherwise."""
    path = os.path.join(folder, METRICS_NAME)
    return _read_json(path, "") if os.path.exists(path) else {}


def check_shapes(tensors, expected, folder):
    """Every expected key present with its shape and nothing else; AdapterError listing what differs."""
    where = os.path.join(folder, WEIGHTS_NAME)
    missing = sorted(set(expected) - set(tensors))
    extra = sorted(set(tensors) - set(expected))
    wrong = sorted(f"{k} is {list(tensors[k].shape)}, expected {list(expected[k])}"
                   for k in set(expected) & set(tensors) if tuple(tensors[k].shape) != tuple(expected[k]))
    problems = []
    if missing:
        problems.append(f"missing {', '.join(missing[:4])}{' …' if len(missing) > 4 else ''}")
    if extra:
        problems.append(f"unexpected {', '.join(extra[:4])}{' …' if len(extra) > 4 else ''}")
    problems.extend(wrong[:4])
    if problems:
        raise AdapterError(f"{where} does not match {CONFIG_NAME}: {'; '.join(problems)}")
