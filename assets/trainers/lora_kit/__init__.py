"""Helpers of lora_trainer.py: a tiny causal transformer, LoRA layers, the PEFT adapter layout and a
dependency-free safetensors reader/writer. Plain PyTorch (1.13 and newer), no downloads."""
