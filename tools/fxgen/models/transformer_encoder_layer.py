"""torch.nn.TransformerEncoderLayer, random weights.

d_model 64, 4 heads, feed-forward 128, GELU, pre-norm, batch_first, no
dropout. The encoder-layer fast path is off (as under torch.export), so the
graph holds the regular multi-head attention decomposition.
"""

import torch
import torch.nn as nn


def transformer_encoder_layer():
    """nn.TransformerEncoderLayer(64, 4, 128, gelu, norm_first, batch_first) on [2, 10, 64]."""
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(d_model=64, nhead=4, dim_feedforward=128, dropout=0.0,
                                       activation="gelu", batch_first=True, norm_first=True)
    return layer, (torch.randn(2, 10, 64),)
