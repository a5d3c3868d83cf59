"""Independent PyTorch implementation of diffusers v0.25's UNet2DModel and its DDPM / DDIM schedulers.

Written from the diffusers semantics (docs/diffusion.md in this repository lists them); diffusers
itself cannot be installed here. The module and parameter names are diffusers' own, so a state dict
of `UNet2D` is a `diffusion_pytorch_model.safetensors` that diffusers loads, and back.

Used by the golden maker (make_unet_fixtures.py), the built-in model's trainer
(tools/train/train_unet.py) and the benchmark (tools/bench/unet_bench.py). The C++ engine never
reads this file: it is the independent side of the parity tests.
"""
import json
import math

import torch
import torch.nn.functional as F
from torch import nn

CONFIG_DEFAULTS = {
    "sample_size": None, "in_channels": 3, "out_channels": 3, "center_input_sample": False,
    "time_embedding_type": "positional", "freq_shift": 0, "flip_sin_to_cos": True,
    "down_block_types": ["DownBlock2D", "AttnDownBlock2D", "AttnDownBlock2D", "AttnDownBlock2D"],
    "up_block_types": ["AttnUpBlock2D", "AttnUpBlock2D", "AttnUpBlock2D", "UpBlock2D"],
    "block_out_channels": [224, 448, 672, 896], "layers_per_block": 2, "mid_block_scale_factor": 1,
    "downsample_padding": 1, "downsample_type": "conv", "upsample_type": "conv", "dropout": 0.0,
    "act_fn": "silu", "attention_head_dim": 8, "norm_num_groups": 32, "attn_norm_num_groups": None,
    "norm_eps": 1e-5, "resnet_time_scale_shift": "default", "add_attention": True,
    "class_embed_type": None, "num_class_embeds": None, "num_train_timesteps": None,
}


def full_config(cfg):
    out = dict(CONFIG_DEFAULTS)
    out.update({k: v for k, v in cfg.items() if not k.startswith("_")})
    return out


def timestep_embedding(t, dim, flip_sin_to_cos, shift, max_period=10000.0):
    """Sinusoidal embedding of float timesteps t [B] -> [B, dim] (diffusers get_timestep_embedding)."""
    half = dim // 2
    exponent = -math.log(max_period) * torch.arange(half, dtype=torch.float32) / (half - shift)
    args = t[:, None].float() * torch.exp(exponent)[None, :]
    emb = torch.cat([torch.sin(args), torch.cos(args)], dim=-1)
    if flip_sin_to_cos:
        emb = torch.cat([emb[:, half:], emb[:, :half]], dim=-1)
    if dim % 2 == 1:
        emb = F.pad(emb, (0, 1, 0, 0))
    return emb


class TimestepEmbedding(nn.Module):
    def __init__(self, cin, dim):
        super().__init__()
        self.linear_1 = nn.Linear(cin, dim)
        self.linear_2 = nn.Linear(dim, dim)

    def forward(self, x):
        return self.linear_2(F.silu(self.linear_1(x)))


class ResnetBlock2D(nn.Module):
    def __init__(self, cin, cout, temb, groups, eps, scale_shift, output_scale_factor, dropout=0.0):
        super().__init__()
        self.norm1 = nn.GroupNorm(groups, cin, eps=eps)
        self.conv1 = nn.Conv2d(cin, cout, 3, padding=1)
        self.time_emb_proj = nn.Linear(temb, 2 * cout if scale_shift else cout)
        self.norm2 = nn.GroupNorm(groups, cout, eps=eps)
        self.dropout = nn.Dropout(dropout)
        self.conv2 = nn.Conv2d(cout, cout, 3, padding=1)
        self.conv_shortcut = nn.Conv2d(cin, cout, 1) if cin != cout else None
        self.scale_shift = scale_shift
        self.output_scale_factor = output_scale_factor

    def forward(self, x, temb):
        h = self.conv1(F.silu(self.norm1(x)))
        t = self.time_emb_proj(F.silu(temb))[:, :, None, None]
        if self.scale_shift:
            scale, shift = torch.chunk(t, 2, dim=1)
            h = self.norm2(h) * (1 + scale) + shift
        else:
            h = self.norm2(h + t)
        h = self.conv2(self.dropout(F.silu(h)))
        if self.conv_shortcut is not None:
            x = self.conv_shortcut(x)
        return (x + h) / self.output_scale_factor


# Debian's torch 1.13 runs batched matrix products (bmm) of attention's shapes ~10x slower than one
# plain matrix product per batch entry (measured: 65 ms vs 6 ms for 128 x [196x32]·[32x196]); the
# trainer sets this to loop. The golden maker and the benchmark keep bmm, as diffusers runs it.
LOOP_MATMUL = False


def _bmm(a, b):
    if not LOOP_MATMUL:
        return a @ b
    sa, sb = a.reshape(-1, *a.shape[-2:]), b.reshape(-1, *b.shape[-2:])
    return torch.stack([x @ y for x, y in zip(sa, sb)]).view(*a.shape[:-1], b.shape[-1])


class SpatialAttention(nn.Module):
    """diffusers' Attention as the U-Net blocks build it (_from_deprecated_attn_block): GroupNorm over
    channels, tokens = pixels (y * w + x), q/k/v/out linear with bias, residual, / rescale factor."""

    def __init__(self, channels, head_dim, groups, eps, rescale):
        super().__init__()
        self.heads = channels // head_dim
        self.head_dim = head_dim
        # groups None: no norm (the bottleneck's attention with resnet_time_scale_shift "scale_shift")
        self.group_norm = nn.GroupNorm(groups, channels, eps=eps) if groups else None
        inner = self.heads * head_dim
        self.to_q = nn.Linear(channels, inner)
        self.to_k = nn.Linear(channels, inner)
        self.to_v = nn.Linear(channels, inner)
        self.to_out = nn.ModuleList([nn.Linear(inner, channels), nn.Dropout(0.0)])
        self.rescale = rescale
        self.capture = None  # a list: (weights [B, heads, N, N]) appended when set
        self.head_mask = None  # [heads] of 1 / 0: transformers' head_mask semantics (diffusers has none)

    def forward(self, x):
        b, c, hgt, wid = x.shape
        h = self.group_norm(x) if self.group_norm is not None else x
        h = h.reshape(b, c, hgt * wid).transpose(1, 2)  # [B, N, C]

        def split(t):
            return t.view(b, -1, self.heads, self.head_dim).transpose(1, 2)  # [B, heads, N, d]

        q, k, v = split(self.to_q(h)), split(self.to_k(h)), split(self.to_v(h))
        w = torch.softmax(_bmm(q, k.transpose(-1, -2)) * self.head_dim ** -0.5, dim=-1)
        if self.head_mask is not None:
            w = w * self.head_mask.view(1, -1, 1, 1)
        if self.capture is not None:
            self.capture.append(w.detach())
        o = _bmm(w, v).transpose(1, 2).reshape(b, hgt * wid, -1)
        o = self.to_out[0](o).transpose(1, 2).reshape(b, c, hgt, wid)
        return (o + x) / self.rescale


class Downsample2D(nn.Module):
    def __init__(self, ch, padding):
        super().__init__()
        self.conv = nn.Conv2d(ch, ch, 3, stride=2, padding=padding)
        self.padding = padding

    def forward(self, x):
        if self.padding == 0:
            x = F.pad(x, (0, 1, 0, 1))
        return self.conv(x)


class Upsample2D(nn.Module):
    def __init__(self, ch):
        super().__init__()
        self.conv = nn.Conv2d(ch, ch, 3, padding=1)

    def forward(self, x):
        return self.conv(F.interpolate(x, scale_factor=2.0, mode="nearest"))


class DownBlock(nn.Module):
    def __init__(self, cin, cout, temb, layers, attn_head_dim, add_down, c):
        super().__init__()
        ss = c["resnet_time_scale_shift"] == "scale_shift"
        g, eps = c["norm_num_groups"], c["norm_eps"]
        self.resnets = nn.ModuleList(
            [ResnetBlock2D(cin if i == 0 else cout, cout, temb, g, eps, ss, 1.0) for i in range(layers)])
        if attn_head_dim:
            self.attentions = nn.ModuleList(
                [SpatialAttention(cout, attn_head_dim, g, eps, 1.0) for _ in range(layers)])
        else:
            self.attentions = None
        self.downsamplers = nn.ModuleList([Downsample2D(cout, c["downsample_padding"])]) if add_down else None

    def forward(self, x, temb):
        states = []
        for i, r in enumerate(self.resnets):
            x = r(x, temb)
            if self.attentions is not None:
                x = self.attentions[i](x)
            states.append(x)
        if self.downsamplers is not None:
            x = self.downsamplers[0](x)
            states.append(x)
        return x, states


class UpBlock(nn.Module):
    def __init__(self, cin, prev, cout, temb, layers, attn_head_dim, add_up, c):
        super().__init__()
        ss = c["resnet_time_scale_shift"] == "scale_shift"
        g, eps = c["norm_num_groups"], c["norm_eps"]
        rs = []
        for i in range(layers):
            skip = cin if i == layers - 1 else cout
            rin = prev if i == 0 else cout
            rs.append(ResnetBlock2D(rin + skip, cout, temb, g, eps, ss, 1.0))
        self.resnets = nn.ModuleList(rs)
        if attn_head_dim:
            self.attentions = nn.ModuleList(
                [SpatialAttention(cout, attn_head_dim, g, eps, 1.0) for _ in range(layers)])
        else:
            self.attentions = None
        self.upsamplers = nn.ModuleList([Upsample2D(cout)]) if add_up else None

    def forward(self, x, skips, temb):
        for i, r in enumerate(self.resnets):
            x = r(torch.cat([x, skips.pop()], dim=1), temb)
            if self.attentions is not None:
                x = self.attentions[i](x)
        if self.upsamplers is not None:
            x = self.upsamplers[0](x)
        return x


class MidBlock(nn.Module):
    def __init__(self, ch, temb, attn_head_dim, c):
        super().__init__()
        ss = c["resnet_time_scale_shift"] == "scale_shift"
        g, eps, osf = c["norm_num_groups"], c["norm_eps"], c["mid_block_scale_factor"]
        ag = c["attn_norm_num_groups"]
        if ag is None:
            ag = g if not ss else None
        self.resnets = nn.ModuleList([ResnetBlock2D(ch, ch, temb, g, eps, ss, osf) for _ in range(2)])
        if c["add_attention"]:
            self.attentions = nn.ModuleList([SpatialAttention(ch, attn_head_dim, ag, eps, osf)])
        else:
            self.attentions = None

    def forward(self, x, temb):
        x = self.resnets[0](x, temb)
        if self.attentions is not None:
            x = self.attentions[0](x)
        return self.resnets[1](x, temb)


class UNet2D(nn.Module):
    """diffusers.UNet2DModel (v0.25) for the block types DownBlock2D / AttnDownBlock2D / UpBlock2D /
    AttnUpBlock2D, positional time embedding, optional class embedding (num_class_embeds)."""

    def __init__(self, config):
        super().__init__()
        c = full_config(config)
        self.config = c
        for key, allowed in (("time_embedding_type", ["positional"]), ("act_fn", ["silu", "swish"]),
                             ("downsample_type", ["conv"]), ("upsample_type", ["conv"]),
                             ("resnet_time_scale_shift", ["default", "scale_shift"])):
            if c[key] not in allowed:
                raise ValueError(f"{key} = {c[key]!r} unsupported")
        if len(c["down_block_types"]) != len(c["block_out_channels"]) or \
                len(c["up_block_types"]) != len(c["block_out_channels"]):
            raise ValueError("one down and one up block type per block_out_channels entry")
        if c["class_embed_type"] is not None:
            raise ValueError("class_embed_type unsupported (only num_class_embeds)")
        boc = list(c["block_out_channels"])
        temb = boc[0] * 4
        self.conv_in = nn.Conv2d(c["in_channels"], boc[0], 3, padding=1)
        self.time_embedding = TimestepEmbedding(boc[0], temb)
        self.class_embedding = nn.Embedding(c["num_class_embeds"], temb) if c["num_class_embeds"] is not None else None
        ahd = c["attention_head_dim"]
        self.down_blocks = nn.ModuleList()
        out = boc[0]
        for i, t in enumerate(c["down_block_types"]):
            cin, out = out, boc[i]
            if t not in ("DownBlock2D", "AttnDownBlock2D"):
                raise ValueError(f"down block type {t} unsupported")
            hd = (ahd or out) if t == "AttnDownBlock2D" else 0
            self.down_blocks.append(DownBlock(cin, out, temb, c["layers_per_block"], hd, i < len(boc) - 1, c))
        self.mid_block = MidBlock(boc[-1], temb, ahd or boc[-1], c)
        rev = boc[::-1]
        self.up_blocks = nn.ModuleList()
        out = rev[0]
        for i, t in enumerate(c["up_block_types"]):
            prev, out, cin = out, rev[i], rev[min(i + 1, len(boc) - 1)]
            if t not in ("UpBlock2D", "AttnUpBlock2D"):
                raise ValueError(f"up block type {t} unsupported")
            hd = (ahd or out) if t == "AttnUpBlock2D" else 0
            self.up_blocks.append(UpBlock(cin, prev, out, temb, c["layers_per_block"] + 1, hd, i < len(boc) - 1, c))
        groups_out = c["norm_num_groups"] if c["norm_num_groups"] is not None else min(boc[0] // 4, 32)
        self.conv_norm_out = nn.GroupNorm(groups_out, boc[0], eps=c["norm_eps"])
        self.conv_out = nn.Conv2d(boc[0], c["out_channels"], 3, padding=1)

    def attention_modules(self):
        """(diffusers module path, module) in execution order."""
        out = []
        for i, b in enumerate(self.down_blocks):
            if b.attentions is not None:
                out += [(f"down_blocks.{i}.attentions.{j}", a) for j, a in enumerate(b.attentions)]
        if self.mid_block.attentions is not None:
            out.append(("mid_block.attentions.0", self.mid_block.attentions[0]))
        for i, b in enumerate(self.up_blocks):
            if b.attentions is not None:
                out += [(f"up_blocks.{i}.attentions.{j}", a) for j, a in enumerate(b.attentions)]
        return out

    def forward(self, x, t, class_labels=None):
        c = self.config
        if c["center_input_sample"]:
            x = 2 * x - 1.0
        if not torch.is_tensor(t):
            t = torch.tensor([t], dtype=torch.long)
        if t.dim() == 0:
            t = t[None]
        t = t * torch.ones(x.shape[0], dtype=t.dtype)
        emb = self.time_embedding(timestep_embedding(t, c["block_out_channels"][0], c["flip_sin_to_cos"],
                                                     c["freq_shift"]))
        if self.class_embedding is not None:
            if class_labels is None:
                raise ValueError("class_labels required for a class-conditional model")
            emb = emb + self.class_embedding(class_labels)
        elif class_labels is not None:
            raise ValueError("class_labels given to an unconditional model")
        x = self.conv_in(x)
        skips = [x]
        for b in self.down_blocks:
            x, s = b(x, emb)
            skips += s
        x = self.mid_block(x, emb)
        for b in self.up_blocks:
            x = b(x, skips, emb)
        return self.conv_out(F.silu(self.conv_norm_out(x)))

    def forward_captured(self, x, t, class_labels=None):
        """-> (noise_pred, [(name, weights [B, heads, N, N])]) in execution order."""
        mods = self.attention_modules()
        for _, m in mods:
            m.capture = []
        try:
            out = self.forward(x, t, class_labels)
            caps = []
            for name, m in mods:
                w = m.capture[0]
                caps.append((name, w))
        finally:
            for _, m in mods:
                m.capture = None
        return out, caps


# ---------------------------------------------------------------------------------------------
# Schedulers (diffusers v0.25 DDPMScheduler / DDIMScheduler), float32 tensors like diffusers.

SCHEDULER_DEFAULTS = {
    "num_train_timesteps": 1000, "beta_start": 0.0001, "beta_end": 0.02, "beta_schedule": "linear",
    "trained_betas": None, "variance_type": "fixed_small", "clip_sample": True, "prediction_type": "epsilon",
    "thresholding": False, "clip_sample_range": 1.0, "timestep_spacing": "leading", "steps_offset": 0,
    "set_alpha_to_one": True, "rescale_betas_zero_snr": False,
}


def _betas(c):
    n = c["num_train_timesteps"]
    if c["trained_betas"] is not None:
        return torch.tensor(c["trained_betas"], dtype=torch.float32)
    s = c["beta_schedule"]
    if s == "linear":
        return torch.linspace(c["beta_start"], c["beta_end"], n, dtype=torch.float32)
    if s == "scaled_linear":
        return torch.linspace(c["beta_start"] ** 0.5, c["beta_end"] ** 0.5, n, dtype=torch.float32) ** 2
    if s == "squaredcos_cap_v2":
        def abar(t):
            return math.cos((t + 0.008) / 1.008 * math.pi / 2) ** 2
        return torch.tensor([min(1 - abar((i + 1) / n) / abar(i / n), 0.999) for i in range(n)],
                            dtype=torch.float32)
    raise ValueError(f"beta_schedule {s} unsupported")


class Scheduler:
    """kind 'ddpm' or 'ddim', built from a scheduler_config.json dict (DDIM from a DDPM config the
    way DDIMPipeline does: DDIMScheduler.from_config)."""

    def __init__(self, kind, config=None):
        c = dict(SCHEDULER_DEFAULTS)
        c.update({k: v for k, v in (config or {}).items() if not k.startswith("_")})
        if c["thresholding"] or c["rescale_betas_zero_snr"]:
            raise ValueError("thresholding / rescale_betas_zero_snr unsupported")
        if c["variance_type"] not in ("fixed_small", "fixed_large"):
            raise ValueError(f"variance_type {c['variance_type']} unsupported")
        self.c, self.kind = c, kind
        self.betas = _betas(c)
        self.alphas_cumprod = torch.cumprod(1.0 - self.betas, dim=0)
        self.final = torch.tensor(1.0) if c["set_alpha_to_one"] else self.alphas_cumprod[0]
        self.num_inference_steps = None

    def set_timesteps(self, steps):
        import numpy as np
        n, sp = self.c["num_train_timesteps"], self.c["timestep_spacing"]
        if steps > n:
            raise ValueError("more steps than training timesteps")
        if sp == "linspace":
            ts = np.linspace(0, n - 1, steps).round()[::-1].copy().astype(np.int64)
        elif sp == "leading":
            ts = (np.arange(0, steps) * (n // steps)).round()[::-1].copy().astype(np.int64) + self.c["steps_offset"]
        elif sp == "trailing":
            ts = np.round(np.arange(n, 0, -n / steps)).astype(np.int64) - 1
        else:
            raise ValueError(sp)
        self.num_inference_steps = steps
        self.timesteps = [int(t) for t in ts]
        return self.timesteps

    def _x0_eps(self, out, t, x, a_t):
        b_t = 1 - a_t
        p = self.c["prediction_type"]
        if p == "epsilon":
            return (x - b_t ** 0.5 * out) / a_t ** 0.5, out
        if p == "sample":
            return out, (x - a_t ** 0.5 * out) / b_t ** 0.5
        if p == "v_prediction":
            return a_t ** 0.5 * x - b_t ** 0.5 * out, a_t ** 0.5 * out + b_t ** 0.5 * x
        raise ValueError(p)

    def step(self, out, t, x, noise=None, eta=0.0):
        """-> (prev_sample, pred_original_sample). noise: the variance noise of this step."""
        n = self.c["num_train_timesteps"]
        prev = t - n // (self.num_inference_steps or n)
        a_t = self.alphas_cumprod[t]
        if self.kind == "ddpm":
            a_prev = self.alphas_cumprod[prev] if prev >= 0 else torch.tensor(1.0)
        else:
            a_prev = self.alphas_cumprod[prev] if prev >= 0 else self.final
        x0, eps = self._x0_eps(out, t, x, a_t)
        if self.c["clip_sample"]:
            r = self.c["clip_sample_range"]
            x0 = x0.clamp(-r, r)
        b_t, b_prev = 1 - a_t, 1 - a_prev
        if self.kind == "ddpm":
            cur_a = a_t / a_prev
            cur_b = 1 - cur_a
            mean = (a_prev ** 0.5 * cur_b) / b_t * x0 + cur_a ** 0.5 * b_prev / b_t * x
            if t > 0:
                if self.c["variance_type"] == "fixed_small":
                    var = torch.clamp(b_prev / b_t * cur_b, min=1e-20)
                elif self.c["variance_type"] == "fixed_large":
                    var = cur_b
                else:
                    raise ValueError(self.c["variance_type"])
                mean = mean + var ** 0.5 * noise
            return mean, x0
        var = (b_prev / b_t) * (1 - a_t / a_prev)
        std = eta * var ** 0.5
        prev_x = a_prev ** 0.5 * x0 + (1 - a_prev - std ** 2) ** 0.5 * eps
        if eta > 0:
            prev_x = prev_x + std * noise
        return prev_x, x0


def load_folder(folder):
    """A bare UNet folder or a pipeline folder -> (UNet2D in float32, scheduler config dict)."""
    import os
    import sys
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from safetensors_io import load_torch
    unet_dir = os.path.join(folder, "unet") if os.path.isdir(os.path.join(folder, "unet")) else folder
    with open(os.path.join(unet_dir, "config.json"), encoding="utf-8") as f:
        cfg = json.load(f)
    model = UNet2D(cfg)
    sd = load_torch(os.path.join(unet_dir, "diffusion_pytorch_model.safetensors"))
    # checkpoints saved before diffusers 0.15 (the google/ddpm-* ones) use the old attention names
    legacy = {".query.": ".to_q.", ".key.": ".to_k.", ".value.": ".to_v.", ".proj_attn.": ".to_out.0."}
    renamed = {}
    for k, v in sd.items():
        for old, new in legacy.items():
            if ".attentions." in k and old in k:
                k = k.replace(old, new)
        renamed[k] = v
    sd = renamed
    model.load_state_dict(sd, strict=True)
    model.eval()
    sched = {}
    sp = os.path.join(folder, "scheduler", "scheduler_config.json")
    if os.path.exists(sp):
        with open(sp, encoding="utf-8") as f:
            sched = json.load(f)
    return model, sched
