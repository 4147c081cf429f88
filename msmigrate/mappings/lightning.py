"""PyTorch Lightning (`pytorch_lightning`, `lightning.pytorch`, `lightning`): LightningModule, LightningDataModule,
Trainer and seed_everything become the runtime's own (templates/compat_parts/lightning.py): a LightningModule
is a Cell, and Trainer.fit runs Lightning's automatic optimization with mindspore.value_and_grad, or its manual
optimization (several optimizers: a GAN) on PyNative's tape. What it does not run (logger objects, several devices)
raises MigrationError naming the setting; the callbacks EarlyStopping, ModelCheckpoint (MindSpore checkpoints), LearningRateMonitor, the progress
bars and summaries, and a program's Callback subclasses are the runtime's too. Proven by tests/test_lightning.py
against Lightning itself."""
from __future__ import annotations

from ..records import DIFFERENCE, mapping

T = "tests/test_lightning.py"
PREFIXES = ("pytorch_lightning.", "lightning.pytorch.", "lightning.")
# a class deriving from one of these is a Module (ProjectIndex's cell classes)
MODULE_BASES = tuple(p + n for p in PREFIXES for n in ("LightningModule", "core.LightningModule",
                                                        "core.module.LightningModule"))

_NOTES = {
    "LightningModule": ("a Cell with Lightning's hooks, self.log/log_dict (values kept for the Trainer's "
                        "callback_metrics, epoch means weighted by batch size), save_hyperparameters/hparams, "
                        "current_epoch, global_step, optimizers(); load_from_checkpoint raises (the converted "
                        "Trainer writes MindSpore checkpoints)", "test_fit_matches_lightning"),
    "LightningDataModule": ("the hooks the Trainer calls (prepare_data, setup, *_dataloader)",
                            "test_datamodule_and_schedulers_match_lightning"),
    "Trainer": ("fit/validate/test/predict on one device with automatic optimization: per batch training_step's loss "
                "differentiated over the optimizer's parameters, gradient_clip_val, the optimizer and 'step' "
                "schedulers stepped; validation each check_val_every_n_epoch; 'epoch' schedulers (ReduceLROnPlateau "
                "on its monitor); a MindSpore checkpoint and metrics.csv where Lightning writes its checkpoint and "
                "CSV logs; validate/test/predict(ckpt_path='best'|'last'|path) load the model's weights from a "
                "MindSpore checkpoint (Lightning restores the callbacks' states from it too). Manual optimization "
                "(automatic_optimization = False, one optimizer or several) runs training_step on PyNative's tape: "
                "manual_backward keeps the loss, each optimizer's step() differentiates the losses kept since the "
                "last step, toggle_optimizer as Lightning's; a step whose torch .grad would still hold an earlier "
                "backward's gradients raises MigrationError. Logger objects, strategies, several devices, precision "
                "other than 32 raise MigrationError", "test_fit_matches_lightning"),
    "seed_everything": ("Python's, NumPy's and MindSpore's generators seeded (MindSpore's draws differ from torch's)",
                        "test_fit_matches_lightning"),
}
for _prefix in PREFIXES:
    for _name, (_note, _test) in _NOTES.items():
        mapping(_prefix + _name, "_ms_compat." + _name, status=DIFFERENCE, takes_torch_args=True, note=_note,
                test=f"{T}::{_test}")
    for _path in ("core.LightningModule", "core.module.LightningModule"):
        mapping(_prefix + _path, "_ms_compat.LightningModule", status=DIFFERENCE, takes_torch_args=True,
                note=_NOTES["LightningModule"][0], test=f"{T}::test_fit_matches_lightning")

_CALLBACKS = {
    "Callback": ("the base of a program's callbacks: the Trainer calls their hooks with (trainer, pl_module, ...)",
                 "test_callbacks_match_lightning"),
    "EarlyStopping": ("monitor, min_delta, patience, mode, thresholds and check_finite as Lightning; checked at the "
                      "training epoch's end (after validation) by default", "test_callbacks_match_lightning"),
    "ModelCheckpoint": ("MindSpore checkpoints (ms.save_checkpoint), named and kept as Lightning's (filename "
                        "templates, save_top_k by monitor, save_last); best_model_path/best_model_score; "
                        "every_n_train_steps and train_time_interval raise", "test_callbacks_match_lightning"),
    "LearningRateMonitor": ("the learning rates in the logged metrics", "test_callbacks_match_lightning"),
    "TQDMProgressBar": ("nothing drawn (the terminal only)", "test_callbacks_match_lightning"),
    "RichProgressBar": ("nothing drawn (the terminal only)", "test_callbacks_match_lightning"),
    "ModelSummary": ("nothing printed (the terminal only)", "test_callbacks_match_lightning"),
    "RichModelSummary": ("nothing printed (the terminal only)", "test_callbacks_match_lightning"),
}
# the runtime's names where Keras' callbacks have the same (compat_parts/keras_train.py)
_RUNTIME = {"Callback": "LightningCallback", "EarlyStopping": "LightningEarlyStopping"}
for _prefix in PREFIXES:
    for _name, (_note, _test) in _CALLBACKS.items():
        mapping(_prefix + "callbacks." + _name, "_ms_compat." + _RUNTIME.get(_name, _name), status=DIFFERENCE,
                takes_torch_args=True, note=_note, test=f"{T}::{_test}")
    mapping(_prefix + "Callback", "_ms_compat.LightningCallback", status=DIFFERENCE, takes_torch_args=True,
            note=_CALLBACKS["Callback"][0], test=f"{T}::test_callbacks_match_lightning")
