from mindspore import nn, ops
import _ms_compat


class VAE(nn.Cell):
    def __init__(self, image_size=784, hidden=400, latent=20):
        super(VAE, self).__init__()
        self.image_size = image_size

        self.fc1 = nn.Dense(image_size, hidden)
        self.fc21 = nn.Dense(hidden, latent)
        self.fc22 = nn.Dense(hidden, latent)
        self.fc3 = nn.Dense(latent, hidden)
        self.fc4 = nn.Dense(hidden, image_size)

    def encode(self, x):
        h1 = ops.relu(self.fc1(x))
        return self.fc21(h1), self.fc22(h1)

    def reparameterize(self, mu, logvar, eps=None):
        # _ms_compat.precise_exp (helper): ops.exp(x), a CPU float32 x through float64 (one rounding, as torch's)
        std = _ms_compat.precise_exp(0.5*logvar)
        if eps is None:
            eps = ops.randn_like(std)
        return mu + eps*std

    def decode(self, z):
        h3 = ops.relu(self.fc3(z))
        return ops.sigmoid(self.fc4(h3))

    def construct(self, x, eps=None):
        mu, logvar = self.encode(x.view(-1, self.image_size))
        z = self.reparameterize(mu, logvar, eps)
        return self.decode(z), mu, logvar


# Reconstruction + KL divergence losses summed over all elements and batch
def loss_function(recon_x, x, mu, logvar):
    # _ms_compat.binary_cross_entropy (helper): torch.nn.functional.binary_cross_entropy
    BCE = _ms_compat.binary_cross_entropy(recon_x, x.view(-1, recon_x.shape[1]), reduction='sum')

    # see Appendix B from VAE paper:
    # Kingma and Welling. Auto-Encoding Variational Bayes. ICLR, 2014
    # https://arxiv.org/abs/1312.6114
    # 0.5 * sum(1 + log(sigma^2) - mu^2 - sigma^2)
    KLD = -0.5 * _ms_compat.reduce_sum(1 + logvar - mu.pow(2) - logvar.exp())

    return BCE + KLD
