"""torchvision CNNs at reduced width, random weights (seeded), for the fxgen corpus.

Every architecture is torchvision's own code (blocks, forward); only the
channel widths, depth multipliers and class counts are reduced so that each
program stays small. No pretrained weights are downloaded.
"""

import torch
import torch.nn as nn
from torchvision.models import resnet
from torchvision.models.convnext import CNBlockConfig, ConvNeXt
from torchvision.models.efficientnet import EfficientNet, _efficientnet_conf
from torchvision.models.mobilenetv3 import MobileNetV3, _mobilenet_v3_conf


class NarrowResNet(resnet.ResNet):
    """torchvision ResNet (BasicBlock) with configurable stage widths.

    torchvision hard-codes widths 64/128/256/512; this re-runs ResNet's own
    constructor steps with other widths and keeps its _make_layer and forward.
    """

    def __init__(self, layers, widths, num_classes):
        nn.Module.__init__(self)
        self._norm_layer = nn.BatchNorm2d
        self.inplanes = widths[0]
        self.dilation = 1
        self.groups = 1
        self.base_width = 64
        self.conv1 = nn.Conv2d(3, self.inplanes, kernel_size=7, stride=2, padding=3, bias=False)
        self.bn1 = nn.BatchNorm2d(self.inplanes)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        self.layer1 = self._make_layer(resnet.BasicBlock, widths[0], layers[0])
        self.layer2 = self._make_layer(resnet.BasicBlock, widths[1], layers[1], stride=2)
        self.layer3 = self._make_layer(resnet.BasicBlock, widths[2], layers[2], stride=2)
        self.layer4 = self._make_layer(resnet.BasicBlock, widths[3], layers[3], stride=2)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(widths[3] * resnet.BasicBlock.expansion, num_classes)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.uniform_(m.weight, 0.5, 1.5)
                nn.init.uniform_(m.bias, -0.1, 0.1)
                m.running_mean.uniform_(-0.1, 0.1)
                m.running_var.uniform_(0.5, 1.5)


def _randomize_bn(model):
    """Non-trivial BatchNorm statistics, so eval-mode BN is not an identity."""
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.running_mean.uniform_(-0.1, 0.1)
            m.running_var.uniform_(0.5, 1.5)
    return model


def resnet18():
    """resnet18: BasicBlock [2, 2, 2, 2], widths 8/16/32/64 (1/8), 10 classes, dynamic batch."""
    torch.manual_seed(0)
    model = NarrowResNet([2, 2, 2, 2], [8, 16, 32, 64], num_classes=10)
    return model, (torch.randn(2, 3, 32, 32),)


resnet18.dynamic_shapes = {0: {0: ("batch", 2, 16)}}


def mobilenet_v3_small():
    """mobilenet_v3_small: torchvision config at width_mult 0.25, 10 classes."""
    torch.manual_seed(0)
    setting, last_channel = _mobilenet_v3_conf("mobilenet_v3_small", width_mult=0.25)
    model = _randomize_bn(MobileNetV3(setting, last_channel, num_classes=10))
    return model, (torch.randn(1, 3, 32, 32),)


def efficientnet_b0():
    """efficientnet_b0: torchvision config at width_mult 0.25, depth_mult 0.5, 10 classes."""
    torch.manual_seed(0)
    setting, last_channel = _efficientnet_conf("efficientnet_b0", width_mult=0.25, depth_mult=0.5)
    model = _randomize_bn(EfficientNet(setting, dropout=0.2, last_channel=last_channel, num_classes=10))
    return model, (torch.randn(1, 3, 32, 32),)


def convnext_tiny():
    """convnext_tiny: torchvision ConvNeXt, dims 16/32/64/128 (1/6), depths 1/1/2/1 (tiny: 3/3/9/3), 10 classes."""
    torch.manual_seed(0)
    setting = [CNBlockConfig(16, 32, 1), CNBlockConfig(32, 64, 1), CNBlockConfig(64, 128, 2),
               CNBlockConfig(128, None, 1)]
    model = ConvNeXt(setting, stochastic_depth_prob=0.0, layer_scale=0.5, num_classes=10)
    return model, (torch.randn(1, 3, 32, 32),)
