"""tiny-gpt's base weights: built deterministically (fixed seed, one thread, CPU) by a short pretraining on the
shipped corpus, then cached per machine, keyed by a hash of the recipe and the corpus, so every job on a machine
starts from the same bytes. The cache is written to a temporary file and renamed: concurrent jobs never read a
half-written file, and two builders racing write identical weights."""

import hashlib
import io
import json
import os
import sys

import torch

from . import corpus
from .lifecycle import write_atomically
from .tiny_model import TINY_GPT, TinyGPT

MODEL_NAME = "tiny-gpt"
# Bump when the recipe changes: the cache key changes with it and old caches are simply not used.
RECIPE = {"version": 1, "seed": 1234, "steps": 100, "batch": 16, "seq_len": 32, "lr": 1e-2}


def cache_path(corpus_bytes):
    key = json.dumps({"model": TINY_GPT, "recipe": RECIPE, "corpus": corpus.fingerprint(corpus_bytes)}, sort_keys=True)
    digest = hashlib.sha256(key.encode()).hexdigest()[:16]
    folder = os.environ.get("GPU_SHARE_CACHE_DIR") or os.path.join(os.path.expanduser("~"), ".cache", "gpu-share", "base-models")
    return os.path.join(folder, f"{MODEL_NAME}-{digest}.pt")


def _build(tokens, stop):
    torch.manual_seed(RECIPE["seed"])
    model = TinyGPT(TINY_GPT)
    generator = torch.Generator().manual_seed(RECIPE["seed"])
    optimizer = torch.optim.AdamW(model.parameters(), lr=RECIPE["lr"])
    for _ in range(RECIPE["steps"]):
        stop.check()
        loss = model.loss(corpus.random_batch(tokens, RECIPE["batch"], RECIPE["seq_len"], generator))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
    return model


def _load_cached(path):
    if not os.path.exists(path):
        return None
    try:
        state = torch.load(path, map_location="cpu")
        model = TinyGPT(TINY_GPT)
        model.load_state_dict(state)
        return model
    except Exception as exc:  # a foreign or damaged cache must not stop a job: rebuild it
        sys.stderr.write(f"lora_trainer: rebuilding the base model, the cached copy {path} is unreadable: {exc}\n")
        return None


def load_base(stop, log=lambda line: None):
    """The tiny-gpt base model on the CPU, in eval mode, from the cache or freshly built (and then cached)."""
    data = corpus.load_bytes("all")
    path = cache_path(data)
    model = _load_cached(path)
    if model is None:
        threads = torch.get_num_threads()
        torch.set_num_threads(1)  # the same float order on every build
        try:
            log(f"building base model {MODEL_NAME} ({RECIPE['steps']} pretraining steps on the corpus); caching it at {path}")
            model = _build(corpus.as_tensor(data), stop)
        finally:
            torch.set_num_threads(threads)
        buffer = io.BytesIO()
        torch.save(model.state_dict(), buffer)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        write_atomically(path, buffer.getvalue())
    else:
        log(f"base model {MODEL_NAME} from cache {path}")
    model.eval()
    return model
