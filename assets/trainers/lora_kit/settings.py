"""The trainer's settings: the job's `hyper` (GPU_SHARE_HYPER), the job environment and command-line flags,
merged in that order (flags win), checked before any training starts."""

import argparse
import json
import os

TARGETABLE_MODULES = ("q_proj", "k_proj", "v_proj", "o_proj", "up_proj", "down_proj")
DEFAULT_MODEL = "tiny-gpt"
TINY_CONTEXT = 128  # tiny_model.TINY_GPT["max_seq"]; not imported so settings load without torch

# name -> (default, kind); kinds are checked by _coerce. One table so the error for an unknown key can list them.
HYPER_DEFAULTS = {
    "rank": (8, "int"),
    "alpha": (16.0, "float"),
    "lr": (0.01, "float"),
    "steps": (60, "int"),
    "target_modules": (["q_proj", "v_proj"], "modules"),
    "batch": (8, "int"),
    "seq_len": (32, "int"),
    "lora_dropout": (0.0, "float"),
    "dataset": ("all", "str"),
    "log_every": (1, "int"),
}

EXIT_BAD_INPUT = 2


class SettingsError(Exception):
    """Bad hyper, environment or flags: the message says which and what to do; the trainer exits 2."""


def _coerce(key, value, kind, source):
    where = f"{source}: {key}"
    if kind == "modules":
        if isinstance(value, str):
            names = [part.strip() for part in value.split(",") if part.strip()]
        elif isinstance(value, list) and all(isinstance(v, str) for v in value):
            names = [v.strip() for v in value if v.strip()]
        else:
            raise SettingsError(f"{where} must be a list of module names or a comma-separated string, got {value!r}")
        if not names:
            raise SettingsError(f"{where} names no module; choose from {', '.join(TARGETABLE_MODULES)}")
        return sorted(set(names))
    if kind == "str":
        if not isinstance(value, str) or not value:
            raise SettingsError(f"{where} must be a non-empty string, got {value!r}")
        return value
    if isinstance(value, bool):
        raise SettingsError(f"{where} must be a number, got {value!r}")
    try:
        number = int(value) if kind == "int" else float(value)
    except (TypeError, ValueError):
        raise SettingsError(f"{where} must be a {'whole number' if kind == 'int' else 'number'}, got {value!r}") from None
    if kind == "int" and isinstance(value, float) and value != int(value):
        raise SettingsError(f"{where} must be a whole number, got {value!r}")
    return number


def _check_ranges(s):
    rules = [
        ("rank", s["rank"] >= 1, "at least 1"),
        ("alpha", s["alpha"] > 0, "above 0"),
        ("lr", 0 < s["lr"] <= 10, "above 0 and at most 10"),
        ("steps", s["steps"] >= 1, "at least 1"),
        ("batch", 1 <= s["batch"] <= 4096, "between 1 and 4096"),
        ("seq_len", 2 <= s["seq_len"] <= 4096, "between 2 and 4096"),
        ("lora_dropout", 0 <= s["lora_dropout"] < 1, "in [0, 1)"),
        ("log_every", s["log_every"] >= 1, "at least 1"),
    ]
    for key, ok, wanted in rules:
        if not ok:
            raise SettingsError(f"{key} must be {wanted}, got {s[key]!r}")


def parse_hyper(text):
    """GPU_SHARE_HYPER's JSON object -> {key: coerced value}; unknown keys are an error naming the known ones."""
    if text is None or text.strip() == "":
        return {}
    try:
        hyper = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SettingsError(f"GPU_SHARE_HYPER is not valid JSON ({exc}); expected an object like "
                            '{"rank":8,"lr":0.01}') from None
    if not isinstance(hyper, dict):
        raise SettingsError(f"GPU_SHARE_HYPER must be a JSON object, got {type(hyper).__name__}")
    unknown = sorted(k for k in hyper if k not in HYPER_DEFAULTS)
    if unknown:
        raise SettingsError(f"GPU_SHARE_HYPER: unknown hyper key(s) {', '.join(unknown)}; known keys: {', '.join(sorted(HYPER_DEFAULTS))}")
    return {k: _coerce(k, v, HYPER_DEFAULTS[k][1], "hyper") for k, v in hyper.items()}


def build_parser(description):
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--rank", help="LoRA rank r (hyper: rank)")
    p.add_argument("--alpha", help="LoRA alpha; the update is scaled by alpha/rank (hyper: alpha)")
    p.add_argument("--lr", help="learning rate (hyper: lr)")
    p.add_argument("--steps", help="optimizer steps (hyper: steps)")
    p.add_argument("--target-modules", help=f"comma-separated, from {','.join(TARGETABLE_MODULES)} (hyper: target_modules)")
    p.add_argument("--batch", help="sequences per step (hyper: batch)")
    p.add_argument("--seq-len", help="tokens per sequence (hyper: seq_len)")
    p.add_argument("--dataset", help="corpus file stem, or 'all' (hyper: dataset)")
    p.add_argument("--seed", help="default: $GPU_SHARE_SEED or 0")
    p.add_argument("--base-model", help="'tiny-gpt' or a local transformers model folder; default: $GPU_SHARE_MODEL")
    p.add_argument("--output-dir", help="default: $GPU_SHARE_OUTPUT_DIR")
    p.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto", help="default: CUDA when available")
    p.add_argument("--verify", metavar="DIR", help="load the adapter in DIR back, apply it and compare the loss")
    return p


FLAG_TO_HYPER = {"rank": "rank", "alpha": "alpha", "lr": "lr", "steps": "steps", "target_modules": "target_modules",
                 "batch": "batch", "seq_len": "seq_len", "dataset": "dataset"}


def resolve(args, environ=None):
    """Merged settings for a training run: defaults < hyper < flags. Raises SettingsError."""
    env = os.environ if environ is None else environ
    settings = {k: (list(v) if isinstance(v, list) else v) for k, (v, _) in HYPER_DEFAULTS.items()}
    settings.update(parse_hyper(env.get("GPU_SHARE_HYPER")))
    for flag, key in FLAG_TO_HYPER.items():
        raw = getattr(args, flag)
        if raw is not None:
            settings[key] = _coerce(key, raw, HYPER_DEFAULTS[key][1], f"--{flag.replace('_', '-')}")
    _check_ranges(settings)
    seed_raw = args.seed if args.seed is not None else env.get("GPU_SHARE_SEED", "").strip() or "0"
    settings["seed"] = _coerce("seed", seed_raw, "int", "--seed" if args.seed is not None else "GPU_SHARE_SEED")
    settings["model"] = args.base_model or env.get("GPU_SHARE_MODEL", "").strip() or DEFAULT_MODEL
    if settings["model"] == DEFAULT_MODEL:
        unknown = [n for n in settings["target_modules"] if n not in TARGETABLE_MODULES]
        if unknown:
            raise SettingsError(f"target_modules: {', '.join(unknown)} not in {DEFAULT_MODEL}; choose from {', '.join(TARGETABLE_MODULES)}")
        if settings["seq_len"] > TINY_CONTEXT - 1:
            raise SettingsError(f"seq_len must be at most {TINY_CONTEXT - 1} for {DEFAULT_MODEL} (its context is {TINY_CONTEXT}), got {settings['seq_len']}")
    output_dir = args.output_dir or env.get("GPU_SHARE_OUTPUT_DIR", "").strip()
    if not output_dir:
        raise SettingsError("no output folder: set GPU_SHARE_OUTPUT_DIR (the agent does) or pass --output-dir")
    settings["output_dir"] = os.path.abspath(output_dir)
    settings["job_id"] = env.get("GPU_SHARE_JOB_ID") or None
    settings["device"] = args.device
    return settings
