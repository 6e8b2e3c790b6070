"""A small image classifier, the model `make run` takes through every target.

fxport's own model (not a downloaded one): two conv blocks with batch norm,
ReLU and pooling, a residual 1x1 projection, global average pooling and a
linear head, seeded random weights. Captured with genuine torch.export by
tools/fxgen into program.pt2 (core ATen) and io/ (sample input, eager output):

    third_party/venv/bin/python tools/fxgen/fxgen.py --module examples/cnn/model.py --factory small_cnn --out examples/cnn
"""

import torch
import torch.nn as nn


class SmallCNN(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(16)
        self.conv2 = nn.Conv2d(16, 32, 3, stride=2, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(32)
        self.proj = nn.Conv2d(16, 32, 1, stride=2)
        self.pool = nn.MaxPool2d(2)
        self.head = nn.Linear(32, classes)

    def forward(self, x):
        x = torch.relu(self.bn1(self.conv1(x)))
        x = self.pool(x)
        y = torch.relu(self.bn2(self.conv2(x)) + self.proj(x))
        y = y.mean(dim=(2, 3))
        return torch.softmax(self.head(y), dim=-1)


def small_cnn():
    torch.manual_seed(0)
    m = SmallCNN().eval()
    for bn in (m.bn1, m.bn2):
        nn.init.uniform_(bn.weight, 0.5, 1.5)
        nn.init.uniform_(bn.bias, -0.1, 0.1)
        bn.running_mean.uniform_(-0.1, 0.1)
        bn.running_var.uniform_(0.5, 1.5)
    return m, (torch.randn(1, 3, 32, 32),)
