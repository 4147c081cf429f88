from .models import TinyResNet, tiny_resnet  # noqa: F401
