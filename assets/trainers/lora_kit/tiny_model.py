"""tiny-gpt: a small byte-level causal transformer laid out like Hugging Face's Llama family
(model.layers.N.self_attn.{q,k,v,o}_proj, model.layers.N.mlp.{up,down}_proj, lm_head), so LoRA adapters for it
get the same PEFT key names real models do. Small enough to pretrain on one CPU core in seconds."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

TINY_GPT = {"vocab": 256, "d_model": 48, "n_heads": 4, "n_layers": 2, "d_ff": 128, "max_seq": 128}


class SelfAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.n_heads = n_heads
        self.q_proj = nn.Linear(d_model, d_model, bias=False)
        self.k_proj = nn.Linear(d_model, d_model, bias=False)
        self.v_proj = nn.Linear(d_model, d_model, bias=False)
        self.o_proj = nn.Linear(d_model, d_model, bias=False)

    def forward(self, x):
        b, t, d = x.shape
        h = self.n_heads

        def heads(proj):
            return proj(x).view(b, t, h, d // h).transpose(1, 2)

        q, k, v = heads(self.q_proj), heads(self.k_proj), heads(self.v_proj)
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(d // h)
        causal = torch.ones(t, t, dtype=torch.bool, device=x.device).triu(1)
        scores = scores.masked_fill(causal, float("-inf"))
        out = F.softmax(scores, dim=-1) @ v
        return self.o_proj(out.transpose(1, 2).reshape(b, t, d))


class FeedForward(nn.Module):
    def __init__(self, d_model, d_ff):
        super().__init__()
        self.up_proj = nn.Linear(d_model, d_ff)
        self.down_proj = nn.Linear(d_ff, d_model)

    def forward(self, x):
        return self.down_proj(F.gelu(self.up_proj(x)))


class Block(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.input_layernorm = nn.LayerNorm(cfg["d_model"])
        self.self_attn = SelfAttention(cfg["d_model"], cfg["n_heads"])
        self.post_attention_layernorm = nn.LayerNorm(cfg["d_model"])
        self.mlp = FeedForward(cfg["d_model"], cfg["d_ff"])

    def forward(self, x):
        x = x + self.self_attn(self.input_layernorm(x))
        return x + self.mlp(self.post_attention_layernorm(x))


class Decoder(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.embed_tokens = nn.Embedding(cfg["vocab"], cfg["d_model"])
        self.embed_positions = nn.Embedding(cfg["max_seq"], cfg["d_model"])
        self.layers = nn.ModuleList(Block(cfg) for _ in range(cfg["n_layers"]))
        self.norm = nn.LayerNorm(cfg["d_model"])

    def forward(self, tokens):
        positions = torch.arange(tokens.shape[1], device=tokens.device)
        x = self.embed_tokens(tokens) + self.embed_positions(positions)
        for layer in self.layers:
            x = layer(x)
        return self.norm(x)


class TinyGPT(nn.Module):
    def __init__(self, cfg=None):
        super().__init__()
        self.cfg = dict(cfg or TINY_GPT)
        self.model = Decoder(self.cfg)
        self.lm_head = nn.Linear(self.cfg["d_model"], self.cfg["vocab"], bias=False)

    def forward(self, tokens):
        return self.lm_head(self.model(tokens))

    def loss(self, tokens):
        """Mean next-token cross-entropy over a [batch, seq_len + 1] block of byte ids."""
        logits = self(tokens[:, :-1])
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tokens[:, 1:].reshape(-1))
