"""torchvision VisionTransformer (vit_b_16 architecture, reduced), random weights.

vit_b_16 is patch 16, hidden 768, 12 layers, 12 heads, MLP 3072 at 224x224.
Here: patch 16 on 64x64 images (16 patches + class token), hidden 64,
3 layers, 4 heads, MLP 128, 10 classes. nn.MultiheadAttention takes its
regular (non fast-path) code, as under torch.export.

torchvision initialises the classification head (and the class token) to
zeros, which makes every output 0 whatever the body computes: the head gets
nn.Linear's default initialisation and the class token random values, so
that the expected outputs depend on every layer.
"""

import torch
from torchvision.models.vision_transformer import VisionTransformer


def vit_b_16():
    """vit_b_16: patch 16, image 64, hidden 64, 3 layers, 4 heads, MLP 128, 10 classes."""
    torch.manual_seed(0)
    model = VisionTransformer(image_size=64, patch_size=16, num_layers=3, num_heads=4, hidden_dim=64,
                              mlp_dim=128, num_classes=10)
    with torch.no_grad():
        model.heads.head.reset_parameters()
        model.class_token.normal_(0.0, 0.5)
    return model, (torch.randn(1, 3, 64, 64),)
