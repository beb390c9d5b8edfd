"""The training text: the plain-text files shipped in assets/corpus (or $GPU_SHARE_CORPUS_DIR), as byte ids.
Batches are windows at positions drawn from a seeded generator, so the data order depends only on the seed."""

import hashlib
import os

import torch

EVAL_WINDOWS = 32


class CorpusError(Exception):
    pass


def corpus_dir():
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # assets/trainers
    return os.environ.get("GPU_SHARE_CORPUS_DIR") or os.path.join(os.path.dirname(here), "corpus")


def _files(folder):
    try:
        names = sorted(n for n in os.listdir(folder) if n.endswith(".txt"))
    except OSError as exc:
        raise CorpusError(f"corpus folder {folder}: {exc.strerror}; set GPU_SHARE_CORPUS_DIR to a folder of .txt files") from None
    if not names:
        raise CorpusError(f"corpus folder {folder} has no .txt files; set GPU_SHARE_CORPUS_DIR to a folder of .txt files")
    return names


def datasets(folder=None):
    """Names a `dataset` hyper value may take: 'all' and each file's stem."""
    return ["all"] + [n[:-4] for n in _files(folder or corpus_dir())]


def load_bytes(dataset="all", folder=None):
    folder = folder or corpus_dir()
    names = _files(folder)
    if dataset != "all":
        if f"{dataset}.txt" not in names:
            raise CorpusError(f"dataset {dataset!r} is not in {folder}; choose from {', '.join(datasets(folder))}")
        names = [f"{dataset}.txt"]
    parts = []
    for name in names:
        with open(os.path.join(folder, name), "rb") as f:
            parts.append(f.read().replace(b"\r\n", b"\n").strip())
    return b"\n\n".join(parts) + b"\n"


def fingerprint(data):
    return hashlib.sha256(data).hexdigest()


def as_tensor(data):
    return torch.tensor(list(data), dtype=torch.long)


def random_batch(tokens, batch, seq_len, generator):
    """[batch, seq_len + 1] windows starting at positions drawn from `generator`."""
    span = seq_len + 1
    if tokens.numel() < span:
        raise CorpusError(f"corpus has {tokens.numel()} bytes, fewer than seq_len + 1 = {span}")
    starts = torch.randint(0, tokens.numel() - span + 1, (batch,), generator=generator)
    return torch.stack([tokens[s:s + span] for s in starts.tolist()])


def eval_batch(tokens, seq_len, windows=EVAL_WINDOWS):
    """Fixed, evenly spaced windows: the same evaluation set for every seed and every run."""
    span = seq_len + 1
    last = tokens.numel() - span
    if last < 0:
        raise CorpusError(f"corpus has {tokens.numel()} bytes, fewer than seq_len + 1 = {span}")
    starts = [round(i * last / max(windows - 1, 1)) for i in range(windows)]
    return torch.stack([tokens[s:s + span] for s in starts])
