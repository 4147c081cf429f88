"""The convolutional network of pytorch/examples' MNIST example."""
from mindspore import nn, ops
import _ms_compat


class Net(nn.Cell):
    def __init__(self, dropout1=0.25, dropout2=0.5):
        super(Net, self).__init__()
        # _ms_compat.any_batch (helper): MindSpore's conv layers also taking torch's unbatched sample (C, *spatial), as
        # a batch of one
        self.conv1 = _ms_compat.any_batch.Conv2d(1, 32, 3, 1, pad_mode='valid', has_bias=True)
        self.conv2 = _ms_compat.any_batch.Conv2d(32, 64, 3, 1, pad_mode='valid', has_bias=True)
        self.dropout1 = nn.Dropout(p=dropout1)
        self.dropout2 = nn.Dropout(p=dropout2)
        self.fc1 = nn.Dense(9216, 128)
        self.fc2 = nn.Dense(128, 10)
        self.set_train(True)  # msmigrate: torch modules start in training mode (MindSpore cells: inference mode)

    def construct(self, x):
        x = self.conv1(x)
        x = ops.relu(x)
        x = self.conv2(x)
        x = ops.relu(x)
        x = ops.max_pool2d(x, 2)
        x = self.dropout1(x)
        x = ops.flatten(x, start_dim=1)
        x = self.fc1(x)
        x = ops.relu(x)
        x = self.dropout2(x)
        x = self.fc2(x)
        # _ms_compat.log_softmax (helper): torch.log_softmax as x - logsumexp(x): ops.log_softmax computes a float64
        # input in float32 (off by ~3e-6)
        output = _ms_compat.log_softmax(x, axis=1)
        return output
