from .resnet import ResNet18, ResNet34
