#!/usr/bin/env python3
"""LoRA trainer for GPU Share adapter jobs: trains one LoRA adapter and writes it in PEFT's layout.

Why it looks the way it does:
- It needs nothing but PyTorch (Debian's 1.13 is enough) and no downloads: the base model, tiny-gpt, is a small
  byte-level transformer it builds from the corpus shipped in assets/corpus by a short, seeded pretraining, and
  caches per machine ($GPU_SHARE_CACHE_DIR, else ~/.cache/gpu-share/base-models). With transformers and peft
  installed and --base-model naming a local model folder, peft trains that model instead.
- Settings come from the job: GPU_SHARE_HYPER (the manifest's `hyper`), GPU_SHARE_SEED, GPU_SHARE_MODEL,
  GPU_SHARE_OUTPUT_DIR; flags override them. A bad setting stops it before any training, exit 2.
- Same seed and hyper, same machine: byte-identical outputs (one thread, seeded data order, sorted JSON, no
  times or host names), so the coordinator stores identical re-runs once.
- Outputs appear only when training has finished, each renamed into place; SIGTERM stops it between steps and
  it exits 143 without writing any.

Outputs (in GPU_SHARE_OUTPUT_DIR): adapter_config.json, adapter_model.safetensors, metrics.json.
Progress lines (docs/api.md, "Trainer progress lines"):
  GPU_SHARE_PROGRESS {"step":12,"total_steps":60,"loss":2.31,"samples_per_sec":812.3}
`--verify DIR` loads an adapter back, applies it and prints one JSON line:
  {"ok":true,"keys":8,"r":8,"loss_with_adapter":2.1,"loss_without":2.4,…}
"""

import json
import os
import sys

sys.dont_write_bytecode = True  # the bundled folder may be read-only, and must stay as shipped
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from lora_kit import corpus, hf_backend, peft_layout, safetensors_io, settings  # noqa: E402
from lora_kit.devices import make_repeatable  # noqa: E402
from lora_kit.train import train_tiny  # noqa: E402
from lora_kit.verify import verify  # noqa: E402
from lora_kit.lifecycle import EXIT_STOPPED, StopFlag, Stopped, remove_stale_temporaries  # noqa: E402

EXIT_FAILED = 1


def log(line):
    sys.stderr.write(f"lora_trainer: {line}\n")
    sys.stderr.flush()


def emit(record):
    # One write call per line, as the DDP example: the agent's pty reader must never see half a line.
    sys.stdout.write("GPU_SHARE_PROGRESS " + json.dumps(record, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def choose_backend(model):
    """'torch-tiny' for tiny-gpt, 'peft' for a local model folder when transformers and peft import; else an error."""
    if model == settings.DEFAULT_MODEL:
        return "torch-tiny"
    if not os.path.isdir(model):
        raise settings.SettingsError(f"base model {model!r} is neither {settings.DEFAULT_MODEL!r} nor a local model folder "
                                     "(set --base-model or GPU_SHARE_MODEL)")
    ok, why = hf_backend.availability()
    if not ok:
        raise settings.SettingsError(f"base model folder {model} needs transformers and peft ({why}); install them "
                                     f"(pip install transformers peft) or train {settings.DEFAULT_MODEL!r}")
    return "peft"


def run_training(args, stop):
    s = settings.resolve(args)
    if s["dataset"] not in corpus.datasets():
        raise settings.SettingsError(f"dataset {s['dataset']!r} is not in {corpus.corpus_dir()}; "
                                     f"choose from {', '.join(corpus.datasets())}")
    backend = choose_backend(s["model"])
    why = hf_backend.availability()[1]
    log(f"backend {backend} ({'peft on ' + s['model'] if backend == 'peft' else 'plain PyTorch on tiny-gpt; ' + why}); "
        f"safetensors writer: {safetensors_io.backend_name()}; output {s['output_dir']}")
    os.makedirs(s["output_dir"], exist_ok=True)
    remove_stale_temporaries(s["output_dir"])
    train = hf_backend.train_hf if backend == "peft" else train_tiny
    metrics = train(s, stop, emit, log)
    log(f"done: final loss {metrics['final_loss']}, eval loss {metrics['eval_loss_base']} -> {metrics['eval_loss']}; "
        f"wrote {peft_layout.CONFIG_NAME}, {peft_layout.WEIGHTS_NAME}, {peft_layout.METRICS_NAME}")
    return 0


def run_verify(args, stop):
    result = verify(os.path.abspath(args.verify), stop, args.device, log)
    sys.stdout.write(json.dumps(result, sort_keys=True, separators=(",", ":")) + "\n")
    sys.stdout.flush()
    return 0


def main(argv):
    args = settings.build_parser(__doc__.splitlines()[0]).parse_args(argv)
    stop = StopFlag().install()
    make_repeatable()
    try:
        return run_verify(args, stop) if args.verify else run_training(args, stop)
    except settings.SettingsError as exc:
        log(f"error: {exc}")
        return settings.EXIT_BAD_INPUT
    except (peft_layout.AdapterError, corpus.CorpusError) as exc:
        log(f"error: {exc}")
        return EXIT_FAILED
    except Stopped:
        log("stopped by SIGTERM before finishing; no adapter written")
        return EXIT_STOPPED


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
