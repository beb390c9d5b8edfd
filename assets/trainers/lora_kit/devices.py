"""Where the trainer computes, and the switches that make its numbers repeat run after run."""

import os

import torch


def pick_device(wanted):
    """'auto': the first visible CUDA device (the agent sets CUDA_VISIBLE_DEVICES to the job's GPU), else the CPU."""
    if wanted == "cuda" and not torch.cuda.is_available():
        raise RuntimeError("--device cuda: no CUDA device is visible (check CUDA_VISIBLE_DEVICES and the driver)")
    if wanted in ("cuda", "auto") and torch.cuda.is_available():
        return torch.device("cuda", 0)
    return torch.device("cpu")


def make_repeatable():
    # cuBLAS needs its workspace fixed before first use for deterministic matmuls.
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True, warn_only=True)
    if hasattr(torch.backends, "cudnn"):
        torch.backends.cudnn.benchmark = False
