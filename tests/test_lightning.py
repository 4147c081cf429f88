"""PyTorch Lightning programs (mappings/lightning.py, templates/compat_parts/lightning.py), run by Lightning under
torch and converted: the same starting weights, the same batches, then the weights, the learning rate and the
metrics Lightning's Trainer reports compared. Before, `class M(pl.LightningModule)` was a raising TODO at the class
statement and `pl.Trainer(...)` another."""
import pytest

from bench.data_speed import import_torchvision
from tests.parity.harness import load_converted, program_weights_match_torch
from tests.test_taped_backward import _FILL

import_torchvision()    # Lightning imports torchmetrics, which imports torchvision (see bench/data_speed.py)
pytest.importorskip("pytorch_lightning")

_DATA = '''
import torch.nn as nn
import torch.nn.functional as F
import pytorch_lightning as pl
from torch.utils.data import DataLoader, TensorDataset

xs = torch.linspace(-1, 1, 10 * 4).reshape(10, 4)
ys = (torch.arange(10) % 3)
train = DataLoader(TensorDataset(xs, ys), batch_size=4)
val = DataLoader(TensorDataset(xs * 0.5, ys), batch_size=4)
'''

FIT_PROGRAM = _FILL + _DATA + '''

class Classifier(pl.LightningModule):
    def __init__(self, hidden=6, lr=0.05):
        super().__init__()
        self.save_hyperparameters()
        self.net = nn.Sequential(nn.Linear(4, hidden), nn.Tanh(), nn.BatchNorm1d(hidden), nn.Linear(hidden, 3))

    def forward(self, x):
        return self.net(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.cross_entropy(self(x), y)
        self.log("train_loss", loss)
        return {"loss": loss}

    def validation_step(self, batch, batch_idx):
        x, y = batch
        loss = F.cross_entropy(self(x), y)
        acc = (self(x).argmax(-1) == y).float().mean()
        self.log_dict({"val_loss": loss, "val_acc": acc})

    def configure_optimizers(self):
        opt = torch.optim.SGD(self.parameters(), lr=self.hparams.lr, momentum=0.9)
        return {"optimizer": opt, "lr_scheduler": torch.optim.lr_scheduler.StepLR(opt, 1, gamma=0.5)}


model = Classifier(hidden=6, lr=0.05)
fill(model, 0)
trainer = pl.Trainer(max_epochs=3, limit_train_batches=2, gradient_clip_val=0.3, logger=False,
                     enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False,
                     accelerator="cpu", devices=1)
trainer.fit(model, train, val)
metrics = trainer.callback_metrics
weights = ([p.detach() for p in model.parameters()] + [model.net[2].running_mean.clone()]
           + [metrics["val_loss"], metrics["val_acc"], metrics["train_loss"],
              torch.tensor([float(trainer.global_step), float(trainer.current_epoch), float(model.hparams.hidden)])])
'''

DATAMODULE_PROGRAM = _FILL + _DATA + '''

class Data(pl.LightningDataModule):
    def __init__(self, batch_size):
        super().__init__()
        self.batch_size = batch_size

    def setup(self, stage=None):
        self.rows = TensorDataset(xs, ys)

    def train_dataloader(self):
        return DataLoader(self.rows, batch_size=self.batch_size)

    def val_dataloader(self):
        return DataLoader(self.rows, batch_size=self.batch_size)


class Regressor(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 3)
        self.seen = []

    def forward(self, x):
        return self.lin(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.cross_entropy(self(x), y)
        self.log("loss", loss, on_step=True, on_epoch=True)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val_loss", F.cross_entropy(self(x), y))

    def on_train_epoch_end(self):
        self.seen.append(float(self.trainer.callback_metrics["loss_epoch"]))

    def configure_optimizers(self):
        opt = torch.optim.Adam(self.parameters(), lr=0.05)
        step = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 1.0 / (1 + s))
        return [opt], [{"scheduler": step, "interval": "step"}]


model = Regressor()
fill(model, 1)
trainer = pl.Trainer(max_steps=5, logger=False, enable_checkpointing=False, enable_progress_bar=False,
                     enable_model_summary=False, num_sanity_val_steps=0)
trainer.fit(model, datamodule=Data(4))
after_fit = [trainer.callback_metrics[k] for k in ("loss", "loss_step", "loss_epoch", "val_loss")]
result = trainer.validate(model, datamodule=Data(3), verbose=False)
weights = ([p.detach() for p in model.parameters()] + after_fit
           + [torch.tensor(model.seen), torch.tensor([result[0]["val_loss"], float(trainer.global_step)]),
              torch.tensor(float(len(trainer.callback_metrics)))])
'''


def test_fit_matches_lightning():
    """SGD with momentum and a StepLR per epoch, gradient clipping, BatchNorm in training and eval, limit_train_batches, the
    sanity check's two validation batches, save_hyperparameters, self.log/log_dict: the weights, the running mean,
    the validation metrics (epoch means weighted by the batch sizes 4, 4, 2) and the step count equal Lightning's."""
    code, _ = program_weights_match_torch(FIT_PROGRAM, graph=False)
    assert "class Classifier(_ms_compat.LightningModule):" in code and "_ms_compat.Trainer(" in code


def test_datamodule_and_schedulers_match_lightning():
    """A LightningDataModule, Adam with a per-step LambdaLR, max_steps stopping in the second epoch, a metric logged on step
    and epoch (loss_step, loss_epoch), a hook reading callback_metrics, and Trainer.validate's returned metrics."""
    program_weights_match_torch(DATAMODULE_PROGRAM, graph=False)


@pytest.mark.parametrize("setting", ["self.automatic_optimization = False", "TRAINER_DEVICES"])
def test_what_the_trainer_does_not_run_raises(setting):
    """Gradient clipping by the Trainer with manual optimization (Lightning refuses it too) and two devices stop with
    MigrationError naming the setting, not a loop that trains otherwise."""
    src = FIT_PROGRAM.replace("        self.save_hyperparameters()\n",
                              "        self.save_hyperparameters()\n        " + setting + "\n"
                              if setting.startswith("self.") else "        self.save_hyperparameters()\n")
    if setting == "TRAINER_DEVICES":
        src = src.replace("devices=1", "devices=2")
    with pytest.raises(Exception) as err:
        load_converted(src, pynative=True)
    assert type(err.value).__name__ == "MigrationError", err.value
    assert ("manual optimization" if setting.startswith("self.") else "devices=2") in str(err.value)



MANUAL_GAN_PROGRAM = _FILL + _DATA + '''

class GAN(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.automatic_optimization = False
        self.generator = nn.Sequential(nn.Linear(2, 5), nn.Tanh(), nn.Linear(5, 4))
        self.discriminator = nn.Sequential(nn.Linear(4, 5), nn.LeakyReLU(0.2), nn.Linear(5, 1))

    def forward(self, z):
        return self.generator(z)

    def training_step(self, batch, batch_idx):
        x, _ = batch
        opt_g, opt_d = self.optimizers()
        z = x[:, :2] * 0.5 + 0.1
        # the generator, with the discriminator's parameters toggled off
        self.toggle_optimizer(opt_g)
        g_loss = F.binary_cross_entropy_with_logits(self.discriminator(self(z)), torch.ones(x.shape[0], 1))
        self.manual_backward(g_loss)
        opt_g.step()
        opt_g.zero_grad()
        self.untoggle_optimizer(opt_g)
        # the discriminator, its gradients zeroed first
        opt_d.zero_grad()
        real = F.binary_cross_entropy_with_logits(self.discriminator(x), torch.ones(x.shape[0], 1))
        fake = F.binary_cross_entropy_with_logits(self.discriminator(self(z).detach()), torch.zeros(x.shape[0], 1))
        d_loss = (real + fake) / 2
        self.manual_backward(d_loss)
        opt_d.step()
        self.log_dict({"g_loss": g_loss, "d_loss": d_loss})

    def configure_optimizers(self):
        return [torch.optim.Adam(self.generator.parameters(), lr=0.01, betas=(0.5, 0.999)),
                torch.optim.SGD(self.discriminator.parameters(), lr=0.05, momentum=0.9)]


model = GAN()
fill(model, 2)
trainer = pl.Trainer(max_epochs=2, limit_train_batches=2, logger=False, enable_checkpointing=False,
                     enable_progress_bar=False, enable_model_summary=False, accelerator="cpu", devices=1)
trainer.fit(model, train)
metrics = trainer.callback_metrics
weights = ([p.detach() for p in model.parameters()]
           + [metrics["g_loss"], metrics["d_loss"], torch.tensor([float(trainer.global_step)])])
'''


# gradient accumulation by hand over two batches, the scheduler stepped by hand at each update
MANUAL_ACCUMULATION_PROGRAM = _FILL + _DATA + '''

class Accumulating(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.automatic_optimization = False
        self.lin = nn.Linear(4, 3)

    def training_step(self, batch, batch_idx):
        x, y = batch
        opt = self.optimizers()
        loss = F.cross_entropy(self.lin(x), y) / 2
        self.manual_backward(loss)
        if (batch_idx + 1) % 2 == 0:
            opt.step()
            opt.zero_grad()
            self.lr_schedulers().step()
        self.log("loss", loss)

    def configure_optimizers(self):
        opt = torch.optim.SGD(self.parameters(), lr=0.2, momentum=0.5)
        return [opt], [torch.optim.lr_scheduler.StepLR(opt, 1, gamma=0.5)]


model = Accumulating()
fill(model, 3)
trainer = pl.Trainer(max_epochs=2, logger=False, enable_checkpointing=False, enable_progress_bar=False,
                     enable_model_summary=False)
trainer.fit(model, train)
weights = ([p.detach() for p in model.parameters()]
           + [trainer.callback_metrics["loss"], torch.tensor([float(trainer.global_step)])])
'''


def test_manual_optimization_gan_matches_lightning():
    """automatic_optimization = False with two optimizers (Lightning's GAN shape): toggle_optimizer around the
    generator's step, the discriminator's zero_grad() before its backward, a detached fake: the weights, the logged
    losses and global_step (one per optimizer step) equal Lightning's."""
    code, _ = program_weights_match_torch(MANUAL_GAN_PROGRAM, graph=False)
    assert "opt_d.zero_grad()" in code, code     # kept: the Trainer's wrappers track torch's .grad


def test_manual_gradient_accumulation_matches_lightning():
    """manual_backward on every batch, a step and zero_grad() every second one, the scheduler stepped by hand."""
    program_weights_match_torch(MANUAL_ACCUMULATION_PROGRAM, graph=False)


def test_manual_step_on_gradients_torch_would_still_hold_raises(tmp_path):
    """Without toggle_optimizer, the generator's loss leaves gradients in the discriminator's .grad; torch's
    discriminator step adds them to its own loss's (its zero_grad() comes after its step here). The converted step
    cannot: MigrationError naming the discriminator's step() line (the converted tree's line map)."""
    import os
    import subprocess
    import sys

    from msmigrate.converter import convert_tree

    src = (MANUAL_GAN_PROGRAM.replace("        self.toggle_optimizer(opt_g)\n", "")
           .replace("        self.untoggle_optimizer(opt_g)\n", "")
           .replace("        opt_d.zero_grad()\n", "")
           .replace("        opt_d.step()\n", "        opt_d.step()\n        opt_d.zero_grad()\n"))
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "gan.py").write_text(src)
    convert_tree(tmp_path / "src", tmp_path / "out")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(MS_DEVICE_TARGET="CPU", GLOG_v="3", ONEDNN_MAX_CPU_ISA="AVX2")
    run = subprocess.run([sys.executable, "gan.py"], cwd=tmp_path / "out", env=env, capture_output=True, text=True,
                         timeout=600)
    line = src.splitlines().index("        opt_d.step()") + 1
    assert run.returncode != 0 and f"MigrationError: gan.py:{line}: step() of an optimizer whose torch .grad still " \
        f"holds" in run.stderr, run.stderr[-3000:]


ONE_CYCLE_PROGRAM = _FILL + _DATA + '''

class Net(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 3)
        self.val_losses = []

    def forward(self, x):
        return self.lin(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return F.cross_entropy(self(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        return {"val": F.cross_entropy(self(x), y)}

    EPOCH_END

    def configure_optimizers(self):
        opt = torch.optim.SGD(self.parameters(), lr=0.1)
        total = self.trainer.estimated_stepping_batches
        sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.4, total_steps=int(total))
        return {"optimizer": opt, "lr_scheduler": {"scheduler": sched, "interval": "step"}}


model = Net()
fill(model, 2)
trainer = pl.Trainer(max_epochs=2, limit_train_batches=2, logger=False, enable_checkpointing=False,
                     enable_progress_bar=False, enable_model_summary=False, num_sanity_val_steps=0)
trainer.fit(model, train, val)
weights = [p.detach() for p in model.parameters()] + [torch.tensor(model.val_losses),
                                                      torch.tensor(float(trainer.estimated_stepping_batches))]
'''

# Lightning 2 collects a step's outputs itself where Lightning 1.x handed them to validation_epoch_end
_COLLECTED = '''def on_validation_batch_end(self, outputs, batch, batch_idx, dataloader_idx=0):
        self.val_losses.append(float(outputs["val"]))'''
_EPOCH_END_1X = '''def validation_epoch_end(self, outputs):
        self.val_losses.extend(float(o["val"]) for o in outputs)'''


def test_one_cycle_over_estimated_steps_and_1x_epoch_end_hooks():
    """OneCycleLR over trainer.estimated_stepping_batches (2 epochs of 2 batches), stepped per batch, matches
    Lightning. A Lightning 1.x `validation_epoch_end(outputs)` (Lightning 2 refuses it) is called with the
    validation steps' outputs, as 1.x did: the converted 1.x program collects what Lightning 2's
    on_validation_batch_end collects in torch."""
    from tests.parity.harness import assert_close, load_torch

    want = load_torch(ONE_CYCLE_PROGRAM.replace("EPOCH_END", _COLLECTED))["weights"]
    for hook in (_COLLECTED, _EPOCH_END_1X):
        mod, code, _ = load_converted(ONE_CYCLE_PROGRAM.replace("EPOCH_END", hook), pynative=True)
        assert len(mod.weights) == len(want)
        for got, exp in zip(mod.weights, want):
            assert_close(got, exp.detach(), rtol=1e-5, atol=2e-5, what=hook.split("(")[0])


CALLBACKS_PROGRAM = _FILL + _DATA + '''
import os

from pytorch_lightning.callbacks import EarlyStopping, ModelCheckpoint, TQDMProgressBar


class Recorder(pl.Callback):
    def __init__(self):
        self.calls = []

    def on_train_epoch_start(self, trainer, pl_module):
        self.calls.append(("epoch_start", trainer.current_epoch))

    def on_validation_end(self, trainer, pl_module):
        if not trainer.sanity_checking:
            self.calls.append(("val_end", round(float(trainer.callback_metrics["val_loss"]), 5)))


class Net(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 3)

    def forward(self, x):
        return self.lin(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return F.cross_entropy(self(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val_loss", F.cross_entropy(self(x), y))

    def test_step(self, batch, batch_idx):
        x, y = batch
        self.log("test_loss", F.cross_entropy(self(x), y))

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=LR)


model = Net()
fill(model, 3)
recorder = Recorder()
early = EarlyStopping(monitor="val_loss", patience=PATIENCE, mode="min")
ckpt = ModelCheckpoint(dirpath=os.path.join(ROOT, "ckpt"), monitor="val_loss", save_top_k=2,
                       filename="{epoch}-{val_loss:.3f}", save_last=True)
trainer = pl.Trainer(max_epochs=12, logger=False, enable_model_summary=False,
                     callbacks=[recorder, early, ckpt, TQDMProgressBar()], default_root_dir=ROOT)
trainer.fit(model, train, val)
names = sorted(os.listdir(os.path.join(ROOT, "ckpt")))
best = os.path.basename(trainer.checkpoint_callback.best_model_path)
calls = recorder.calls
last = [p.detach().clone() for p in model.parameters()]
stopped = [float(trainer.current_epoch), float(early.stopped_epoch), float(early.wait_count)]
# the best epoch's weights loaded (Lightning restores the callbacks' states from it too; the converted Trainer
# loads the model's weights only)
tested = trainer.test(model, val, ckpt_path="best", verbose=False)
weights = last + [p.detach() for p in model.parameters()] + [
    torch.tensor(stopped + [tested[0]["test_loss"]]), trainer.checkpoint_callback.best_model_score]
'''


@pytest.mark.parametrize("lr, patience", [(3.0, 1), (0.2, 2)])
def test_callbacks_match_lightning(tmp_path, lr, patience):
    """EarlyStopping on val_loss (stopping early at the high learning rate, running all epochs at the low one),
    ModelCheckpoint's top 2 by val_loss with a metric in the file names and last.ckpt, a progress bar, and a
    program's Callback subclass, then `trainer.test(ckpt_path="best")`: the weights after fit and after the best
    checkpoint is loaded, the epoch it stopped at, the best score, the test loss, the checkpoint files kept and the
    hook calls equal Lightning's (the files are MindSpore checkpoints on the converted side)."""
    from tests.parity.harness import assert_close, load_torch

    def program(side):
        (tmp_path / side).mkdir()
        return (CALLBACKS_PROGRAM.replace("LR)", f"{lr})").replace("PATIENCE", str(patience))
                .replace("ROOT", repr(str(tmp_path / side))))

    ref = load_torch(program("torch"))
    mod, code, _ = load_converted(program("ms"), pynative=True)
    assert "_ms_compat.LightningEarlyStopping(" in code and "class Recorder(_ms_compat.LightningCallback):" in code
    assert mod.names == ref["names"] and mod.best == ref["best"] and mod.calls == ref["calls"], (
        mod.names, ref["names"], mod.calls, ref["calls"])
    for got, want in zip(mod.weights, ref["weights"]):
        assert_close(got, want.detach(), rtol=1e-5, atol=2e-5)
