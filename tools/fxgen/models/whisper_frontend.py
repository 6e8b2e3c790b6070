"""The convolutional front end of Whisper's audio encoder (OpenAI whisper/model.py style).

conv1 (n_mels -> d, k3, p1) + GELU, conv2 (d -> d, k3, stride 2, p1) + GELU,
permute to [batch, frames, d], add the fixed sinusoidal positional embedding
(a buffer, as in Whisper), then one residual pre-LN attention block and the
final LayerNorm. Reduced: 80 mel bins, 64 input frames (Whisper: 3000),
d 64, 4 heads. Whisper's encoder has a fixed frame count (it asserts the
positional embedding shape), so the program is static.
"""


import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

N_MELS = 80
N_FRAMES = 64
N_CTX = N_FRAMES // 2
N_STATE = 64
N_HEAD = 4


def sinusoids(length, channels, max_timescale=10000):
    log_timescale_increment = np.log(max_timescale) / (channels // 2 - 1)
    inv_timescales = torch.exp(-log_timescale_increment * torch.arange(channels // 2))
    scaled_time = torch.arange(length)[:, np.newaxis] * inv_timescales[np.newaxis, :]
    return torch.cat([torch.sin(scaled_time), torch.cos(scaled_time)], dim=1)


class MultiHeadAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.query = nn.Linear(N_STATE, N_STATE)
        self.key = nn.Linear(N_STATE, N_STATE, bias=False)
        self.value = nn.Linear(N_STATE, N_STATE)
        self.out = nn.Linear(N_STATE, N_STATE)

    def forward(self, x):
        b, t, d = x.shape
        scale = (d // N_HEAD) ** -0.25
        q = self.query(x).view(b, t, N_HEAD, -1).permute(0, 2, 1, 3) * scale
        k = self.key(x).view(b, t, N_HEAD, -1).permute(0, 2, 3, 1) * scale
        v = self.value(x).view(b, t, N_HEAD, -1).permute(0, 2, 1, 3)
        w = F.softmax((q @ k).float(), dim=-1).to(q.dtype)
        return self.out((w @ v).permute(0, 2, 1, 3).flatten(start_dim=2))


class ResidualAttentionBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn = MultiHeadAttention()
        self.attn_ln = nn.LayerNorm(N_STATE)
        self.mlp = nn.Sequential(nn.Linear(N_STATE, 4 * N_STATE), nn.GELU(), nn.Linear(4 * N_STATE, N_STATE))
        self.mlp_ln = nn.LayerNorm(N_STATE)

    def forward(self, x):
        x = x + self.attn(self.attn_ln(x))
        return x + self.mlp(self.mlp_ln(x))


class AudioEncoderFront(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv1d(N_MELS, N_STATE, kernel_size=3, padding=1)
        self.conv2 = nn.Conv1d(N_STATE, N_STATE, kernel_size=3, stride=2, padding=1)
        self.register_buffer("positional_embedding", sinusoids(N_CTX, N_STATE))
        self.block = ResidualAttentionBlock()
        self.ln_post = nn.LayerNorm(N_STATE)

    def forward(self, x):
        x = F.gelu(self.conv1(x))
        x = F.gelu(self.conv2(x))
        x = x.permute(0, 2, 1)
        x = (x + self.positional_embedding).to(x.dtype)
        return self.ln_post(self.block(x))


def whisper_frontend():
    """Whisper encoder front: conv1d x2 + GELU, sinusoid positions, 1 attention block; mel [1, 80, 64]."""
    torch.manual_seed(0)
    return AudioEncoderFront(), (torch.randn(1, N_MELS, N_FRAMES),)
