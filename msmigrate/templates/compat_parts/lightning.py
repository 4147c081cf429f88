"""PyTorch Lightning's automatic optimization (mappings/lightning.py; proven against Lightning by
tests/test_lightning.py): a LightningModule is a Cell with Lightning's hooks and self.log, and Trainer.fit runs
Lightning's loop: per batch, training_step's loss differentiated (mindspore.value_and_grad over the optimizer's
parameters), the gradients clipped as gradient_clip_val asks, the optimizer stepped, a "step" scheduler stepped;
per epoch, the validation loop (eval mode, validation_step, epoch means of what it logs weighted by batch size)
and the "epoch" schedulers; the callbacks' hooks (EarlyStopping, ModelCheckpoint, LearningRateMonitor, a user's
Callback subclass) where Lightning calls them. Manual optimization (`automatic_optimization = False`, several
optimizers: a GAN) runs training_step on PyNative's tape (taped_backward.py): manual_backward keeps the loss,
each optimizer's step() differentiates the losses kept since the last step over its parameters, as torch's .grad
holds them; where torch's .grad would also hold an earlier backward's gradients (no zero_grad() between, no
toggle_optimizer), the step raises MigrationError naming its line. What the loop does not run raises
MigrationError naming the setting: loggers other than the default, strategies and devices other than one,
precision other than 32. Checkpoints are MindSpore checkpoints of the model, named and kept as
Lightning's ModelCheckpoint names and keeps its own; the default logger's metrics go to a metrics.csv, as
CSVLogger's."""
import csv as _pl_csv
import inspect as _pl_inspect
import os as _pl_os
import random as _pl_random
import re as _pl_re

import numpy as np
import mindspore as ms
from mindspore import nn, ops


def _pl_refuse(what):
    raise MigrationError(f"PyTorch Lightning: {what} is not run by the converted Trainer (automatic optimization, "
                         "one optimizer, one device); write the loop out (a mindspore.value_and_grad train step)")


def seed_everything(seed=None, workers=False, verbose=True):
    """lightning's seed_everything: Python's, NumPy's and MindSpore's generators seeded alike."""
    seed = 0 if seed is None else int(seed)
    _pl_random.seed(seed)
    np.random.seed(seed)
    ms.set_seed(seed)
    return seed


class AttributeDict(dict):
    """lightning's hparams: a dict read by attribute too."""

    def __getattr__(self, key):
        try:
            return self[key]
        except KeyError as exc:
            raise AttributeError(key) from exc

    def __setattr__(self, key, value):
        self[key] = value


def _pl_batch_size(batch):
    """The batch size Lightning infers: the first dimension of the first tensor found in the batch."""
    if isinstance(batch, ms.Tensor):
        return int(batch.shape[0]) if batch.ndim else 1
    values = batch.values() if isinstance(batch, dict) else batch if isinstance(batch, (list, tuple)) else ()
    for v in values:
        found = _pl_batch_size(v)
        if found is not None:
            return found
    return None


class LightningModule(nn.Cell):
    """lightning's LightningModule: a Cell (forward is construct) with the hooks the Trainer calls and self.log."""

    def __init__(self, *args, **kwargs):
        super().__init__()
        self.trainer = None
        self.hparams = AttributeDict()
        self.automatic_optimization = True
        self._pl_batch = None

    # ------------------------------------------------------------------ what training_step reads
    @property
    def current_epoch(self):
        return self.trainer.current_epoch if self.trainer is not None else 0

    @property
    def global_step(self):
        return self.trainer.global_step if self.trainer is not None else 0

    @property
    def device(self):
        return ms.get_context("device_target").lower()

    def save_hyperparameters(self, *args, ignore=None, frame=None, logger=True):
        """The arguments of the __init__ that calls it (or the names given), as lightning collects them."""
        frame = _pl_inspect.currentframe().f_back
        init_args = {}
        code = frame.f_code
        names = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
        for name in names[1:]:
            init_args[name] = frame.f_locals.get(name)
        if code.co_flags & _pl_inspect.CO_VARKEYWORDS:
            init_args.update(frame.f_locals.get(code.co_varnames[len(names) + bool(code.co_flags & 4)], {}))
        if args and all(isinstance(a, str) for a in args):
            init_args = {k: v for k, v in init_args.items() if k in args}
        elif args and isinstance(args[0], dict):
            init_args = dict(args[0])
        ignore = [ignore] if isinstance(ignore, str) else list(ignore or ())
        self.hparams.update({k: v for k, v in init_args.items() if k not in ignore})

    def log(self, name, value, prog_bar=False, logger=None, on_step=None, on_epoch=None, reduce_fx="mean",
            enable_graph=False, sync_dist=False, sync_dist_group=None, add_dataloader_idx=True, batch_size=None,
            metric_attribute=None, rank_zero_only=False):
        if self.trainer is None:
            return
        if reduce_fx not in ("mean", "sum", "max", "min") and not callable(reduce_fx):
            _pl_refuse(f"self.log(reduce_fx={reduce_fx!r})")
        if isinstance(value, ms.Tensor):
            value = ops.stop_gradient(value)
        self.trainer._record(name, value, on_step, on_epoch, reduce_fx,
                             batch_size if batch_size is not None else _pl_batch_size(self._pl_batch))

    def log_dict(self, dictionary, prog_bar=False, logger=None, on_step=None, on_epoch=None, reduce_fx="mean",
                 enable_graph=False, sync_dist=False, sync_dist_group=None, add_dataloader_idx=True,
                 batch_size=None, rank_zero_only=False):
        for name, value in dictionary.items():
            self.log(name, value, on_step=on_step, on_epoch=on_epoch, reduce_fx=reduce_fx, batch_size=batch_size)

    def print(self, *args, **kwargs):
        print(*args, **kwargs)

    def optimizers(self, use_pl_optimizer=True):
        opts = self.trainer.optimizers if self.trainer is not None else []
        if use_pl_optimizer and self.trainer is not None and self.trainer._manual is not None:
            opts = self.trainer._manual.wrappers
        return opts[0] if len(opts) == 1 else opts

    def toggle_optimizer(self, optimizer):
        """Lightning's: the parameters of the other optimizers stop requiring a gradient until untoggle_optimizer."""
        own = {id(p) for p in getattr(optimizer, "optimizer", optimizer).parameters}
        self._pl_toggled = getattr(self, "_pl_toggled", None) or {}
        for other in (self.trainer.optimizers if self.trainer is not None else []):
            for p in other.parameters:
                if id(p) not in own and id(p) not in self._pl_toggled:
                    self._pl_toggled[id(p)] = (p, p.requires_grad)
                    p.requires_grad = False

    def untoggle_optimizer(self, optimizer):
        for p, flag in (getattr(self, "_pl_toggled", None) or {}).values():
            p.requires_grad = flag
        self._pl_toggled = {}

    def clip_gradients(self, optimizer, gradient_clip_val=None, gradient_clip_algorithm=None):
        _pl_refuse("self.clip_gradients in manual optimization")

    def lr_schedulers(self):
        scheds = [s["scheduler"] for s in self.trainer.lr_scheduler_configs] if self.trainer is not None else []
        return None if not scheds else scheds[0] if len(scheds) == 1 else scheds

    def manual_backward(self, loss, *args, **kwargs):
        manual = self.trainer._manual if self.trainer is not None else None
        if manual is None:
            _pl_refuse("self.manual_backward outside a fit with automatic_optimization = False")
        if args or kwargs:
            _pl_refuse("manual_backward's backward arguments (retain_graph, create_graph, inputs)")
        manual.backward(loss)

    def configure_optimizers(self):
        _pl_refuse("a LightningModule without configure_optimizers")

    def training_step(self, *args, **kwargs):
        _pl_refuse("a LightningModule without training_step")

    def predict_step(self, batch, batch_idx=0, dataloader_idx=0):
        return self(batch)

    def _pl_hook(self, name, *args):
        hook = getattr(self, name, None)
        if hook is not None:
            return hook(*args)
        return None

    def on_train_start(self):
        pass

    def on_train_end(self):
        pass

    def on_train_epoch_start(self):
        pass

    def on_train_epoch_end(self):
        pass

    def on_validation_epoch_start(self):
        pass

    def on_validation_epoch_end(self):
        pass

    def on_test_epoch_end(self):
        pass

    def on_train_batch_start(self, batch, batch_idx):
        pass

    def on_train_batch_end(self, outputs, batch, batch_idx):
        pass

    @classmethod
    def load_from_checkpoint(cls, *args, **kwargs):
        _pl_refuse("LightningModule.load_from_checkpoint (the converted Trainer writes MindSpore checkpoints: "
                   "build the model and mindspore.load_checkpoint(path, net))")


class LightningDataModule:
    """lightning's LightningDataModule: the hooks the Trainer calls, none by default."""

    def __init__(self, *args, **kwargs):
        self.trainer = None
        self.hparams = AttributeDict()

    def prepare_data(self):
        pass

    def setup(self, stage=None):
        pass

    def teardown(self, stage=None):
        pass

    save_hyperparameters = LightningModule.save_hyperparameters


_PL_FIXED = {"accelerator": ("auto", "cpu", "gpu", "cuda", "tpu", "npu", "mps"), "devices": ("auto", 1, "1", [0], -1),
             "num_nodes": (1,), "precision": (32, "32", "32-true", None), "strategy": ("auto", None),
             "accumulate_grad_batches": (1,), "fast_dev_run": (False,),
             "gradient_clip_algorithm": (None, "norm", "value"), "profiler": (None,), "overfit_batches": (0, 0.0),
             "plugins": (None, []), "sync_batchnorm": (False,), "reload_dataloaders_every_n_epochs": (0,),
             "detect_anomaly": (False,), "barebones": (False,), "use_distributed_sampler": (True, False),
             "inference_mode": (True, False), "benchmark": (None, False, True), "deterministic": (None, False, True),
             "val_check_interval": (None, 1.0), "min_epochs": (None,), "min_steps": (None,), "max_time": (None,)}


class Trainer:
    """lightning's Trainer for one device and automatic optimization: fit, validate, test and predict."""

    def __init__(self, max_epochs=None, max_steps=-1, limit_train_batches=None, limit_val_batches=None,
                 limit_test_batches=None, limit_predict_batches=None, check_val_every_n_epoch=1,
                 num_sanity_val_steps=None, gradient_clip_val=None, logger=None, enable_checkpointing=None,
                 enable_progress_bar=None, enable_model_summary=None, log_every_n_steps=None, default_root_dir=None,
                 callbacks=None, **kwargs):
        for key, value in kwargs.items():
            if key not in _PL_FIXED:
                _pl_refuse(f"Trainer({key}=...)")
            if not any(value is v or (type(value) is type(v) and value == v) for v in _PL_FIXED[key]):
                _pl_refuse(f"Trainer({key}={value!r})")
        if logger not in (None, True, False):
            _pl_refuse("a logger object")
        self.clip_algorithm = kwargs.get("gradient_clip_algorithm") or "norm"
        self.max_epochs = max_epochs if max_epochs is not None else (1000 if max_steps in (-1, None) else -1)
        self.max_steps = -1 if max_steps is None else max_steps
        self.limits = {"train": limit_train_batches, "val": limit_val_batches, "test": limit_test_batches,
                       "predict": limit_predict_batches}
        self.check_val_every_n_epoch = check_val_every_n_epoch
        self.num_sanity_val_steps = 2 if num_sanity_val_steps is None else num_sanity_val_steps
        self.gradient_clip_val = gradient_clip_val
        self.log_every_n_steps = 50 if log_every_n_steps is None else log_every_n_steps
        self.logger_on = logger is not False
        self.checkpointing = enable_checkpointing is not False
        self.default_root_dir = default_root_dir or _pl_os.getcwd()
        self.current_epoch = 0
        self.global_step = 0
        self.optimizers = []
        self.lr_scheduler_configs = []
        self.callback_metrics = {}
        self.logged_metrics = {}
        self.should_stop = False
        self.sanity_checking = False
        self.training = False
        self._epoch_logs = {}
        self._log_dir = None
        self._metric_rows = []
        self._train_loader = None
        self.datamodule = None
        self._validates = False
        self._fitted = None
        self._manual = None       # _PLManualSteps while a fit with manual optimization runs
        self.callbacks = list(callbacks) if isinstance(callbacks, (list, tuple)) else [callbacks] if callbacks else []
        if self.checkpointing and not any(isinstance(c, ModelCheckpoint) for c in self.callbacks):
            self.callbacks.append(ModelCheckpoint())    # Lightning's default checkpoint
        self.checkpoint_callback = next((c for c in self.callbacks if isinstance(c, ModelCheckpoint)), None)
        self.early_stopping_callback = next(
            (c for c in self.callbacks if isinstance(c, LightningEarlyStopping)), None)

    # ------------------------------------------------------------------ self.log
    def _record(self, name, value, on_step, on_epoch, reduce_fx, batch_size):
        if self.sanity_checking:
            return
        on_step = self.training if on_step is None else on_step
        on_epoch = (not self.training) if on_epoch is None else on_epoch
        if on_step:     # both: Lightning keeps name_step and name_epoch apart (name is the epoch's)
            key = f"{name}_step" if on_epoch else name
            self.callback_metrics[key] = value
            self.logged_metrics[key] = value
            if self.training and self.logger_on and (self.global_step + 1) % self.log_every_n_steps == 0:
                self._metric_rows.append({"step": self.global_step, key: _pl_float(value)})
        if on_epoch:
            self._epoch_logs.setdefault(name, []).append((value, batch_size or 1, reduce_fx, on_step))

    def _close_epoch_logs(self):
        for name, entries in self._epoch_logs.items():
            values = [_pl_float(e[0]) for e in entries]
            fx = entries[0][2]
            if fx == "mean":
                weights = [e[1] for e in entries]
                value = sum(v * w for v, w in zip(values, weights)) / sum(weights)
            elif fx == "sum":
                value = sum(values)
            elif fx == "max":
                value = max(values)
            elif fx == "min":
                value = min(values)
            else:
                value = _pl_float(fx(ms.Tensor(np.array(values, np.float32))))
            self.callback_metrics[name] = ms.Tensor(value, ms.float32)
            key = f"{name}_epoch" if entries[0][3] else name
            self.callback_metrics[key] = self.logged_metrics[key] = self.callback_metrics[name]
            if self.logger_on:
                self._metric_rows.append({"epoch": self.current_epoch, "step": self.global_step, key: value})
        self._epoch_logs = {}

    # ------------------------------------------------------------------ set-up
    def _loaders(self, model, datamodule, stage, given):
        if given is not None:
            return given
        source = datamodule if datamodule is not None else model
        method = getattr(source, f"{stage}_dataloader", None)
        return method() if method is not None else None

    def _limited(self, loader, which):
        limit = self.limits[which]
        if limit is None or limit == 1.0:
            return loader, None
        if isinstance(limit, float):
            return loader, int(len(loader) * limit)
        return loader, int(limit)

    def _configure(self, model):
        found = model.configure_optimizers()
        opts, scheds = [], []
        if isinstance(found, dict):
            opts, scheds = [found["optimizer"]], [found["lr_scheduler"]] if "lr_scheduler" in found else []
        elif isinstance(found, (list, tuple)) and len(found) == 2 and isinstance(found[0], (list, tuple)):
            opts, scheds = list(found[0]), list(found[1])
        elif isinstance(found, (list, tuple)):
            opts = list(found)
        elif found is not None:
            opts = [found]
        if len(opts) != 1 and model.automatic_optimization:
            _pl_refuse(f"{len(opts)} optimizers (Lightning 2 needs manual optimization for several)")
        configs = []
        for s in scheds:
            config = dict(s) if isinstance(s, dict) else {"scheduler": s}
            config.setdefault("interval", "epoch")
            config.setdefault("frequency", 1)
            config.setdefault("monitor", "val_loss")
            configs.append(config)
        self.optimizers, self.lr_scheduler_configs = opts, configs

    def _step_schedulers(self, interval):
        for config in self.lr_scheduler_configs:
            if config["interval"] != interval:
                continue
            count = self.global_step if interval == "step" else self.current_epoch + 1
            if count % config["frequency"]:
                continue
            scheduler = config["scheduler"]
            if type(scheduler).__name__ == "ReduceLROnPlateau":
                if config["monitor"] not in self.callback_metrics:
                    raise MigrationError(f"PyTorch Lightning: ReduceLROnPlateau monitors {config['monitor']!r}, "
                                         "which nothing logged")
                scheduler.step(_pl_float(self.callback_metrics[config["monitor"]]))
            else:
                scheduler.step()

    def _attach(self, model, datamodule):
        model.trainer = self
        if datamodule is not None:
            datamodule.trainer = self
            self.datamodule = datamodule

    # ------------------------------------------------------------------ loops
    @property
    def estimated_stepping_batches(self):
        """The optimizer steps fit will take (OneCycleLR's total_steps), as Lightning estimates them."""
        loader = self._train_loader
        per_epoch = len(loader) if loader is not None and hasattr(loader, "__len__") else float("inf")
        limit = self._limited(loader, "train")[1] if loader is not None else None
        if limit is not None:
            per_epoch = min(per_epoch, limit)
        total = per_epoch * self.max_epochs if self.max_epochs != -1 else float("inf")
        return min(total, self.max_steps) if self.max_steps != -1 else total

    def _epoch_end(self, model, name, outputs):
        """Lightning 1.x's training_epoch_end / validation_epoch_end / test_epoch_end(outputs), where the model
        defines one: called with its step's outputs, as 1.x did (Lightning 2 refuses them)."""
        hook = getattr(model, name, None)
        if hook is not None:
            hook(outputs)

    def _eval_loop(self, model, loader, which, step_name, max_batches=None):
        model.set_train(False)
        training, self.training = self.training, False
        outputs = []
        step = getattr(model, step_name, None)
        if step is None:
            return outputs
        stage = {"val": "validation"}.get(which, which)
        for batch_idx, batch in enumerate(loader):
            if max_batches is not None and batch_idx >= max_batches:
                break
            model._pl_batch = batch
            model._pl_hook(f"on_{stage}_batch_start", batch, batch_idx)
            outputs.append(step(batch, batch_idx))
            model._pl_hook(f"on_{stage}_batch_end", outputs[-1], batch, batch_idx)
        model._pl_batch = None
        self.training = training
        return outputs

    def _validate_epoch(self, model, loader):
        _, limit = self._limited(loader, "val")
        if limit == 0:
            return
        model._pl_hook("on_validation_epoch_start")
        outputs = self._eval_loop(model, loader, "val", "validation_step", limit)
        self._epoch_end(model, "validation_epoch_end", outputs)
        _pl_callback_hook(self, model, "on_validation_epoch_end")
        model._pl_hook("on_validation_epoch_end")
        self._close_epoch_logs()
        _pl_callback_hook(self, model, "on_validation_end")
        model.set_train(True)

    def fit(self, model, train_dataloaders=None, val_dataloaders=None, datamodule=None, ckpt_path=None):
        # training_step runs Python (self.log, hooks) as Lightning's eager loop does: op by op whatever the mode
        mode = ms.get_context("mode")
        ms.set_context(mode=ms.PYNATIVE_MODE)
        try:
            self._fit(model, train_dataloaders, val_dataloaders, datamodule, ckpt_path)
        finally:
            ms.set_context(mode=mode)

    def _fit(self, model, train_dataloaders, val_dataloaders, datamodule, ckpt_path):
        if ckpt_path is not None:
            _pl_refuse("fit(ckpt_path=...)")
        if not model.automatic_optimization and self.gradient_clip_val:
            _pl_refuse("Trainer(gradient_clip_val=...) with manual optimization (Lightning refuses it too)")
        self._attach(model, datamodule)
        self.callback_metrics, self.logged_metrics = {}, {}
        if datamodule is not None:
            datamodule.prepare_data()
            datamodule.setup("fit")
        model._pl_hook("prepare_data")
        model._pl_hook("setup", "fit")
        train_loader = self._train_loader = self._loaders(model, datamodule, "train", train_dataloaders)
        val_loader = self._loaders(model, datamodule, "val", val_dataloaders)
        if val_loader is not None and getattr(model, "validation_step", None) is None:
            val_loader = None
        self._validates = val_loader is not None
        self._fitted = model
        _pl_callback_hook(self, model, "on_fit_start")
        self._configure(model)
        if val_loader is not None and self.num_sanity_val_steps:
            self.sanity_checking = True
            self._eval_loop(model, val_loader, "val", "validation_step",
                            None if self.num_sanity_val_steps == -1 else self.num_sanity_val_steps)
            self.sanity_checking = False
            self._epoch_logs = {}
        model.set_train(True)
        self.training = True
        if model.automatic_optimization:
            self._train_epochs(model, train_loader, val_loader, self._automatic_batch(model))
        else:
            self._manual = _PLManualSteps(self)
            try:
                self._train_epochs(model, train_loader, val_loader, self._manual_batch(model))
            finally:
                self._manual.close()
                self._manual = None
        self.training = False
        _pl_callback_hook(self, model, "on_train_end")
        model._pl_hook("on_train_end")
        self._write_metrics()

    def _automatic_batch(self, model):
        """Lightning's automatic optimization of one batch: training_step's loss differentiated over the optimizer's
        parameters, the gradients clipped, the optimizer and the "step" schedulers stepped. Returns training_step's
        output."""
        opt = self.optimizers[0]
        outputs = {}

        def forward(batch, batch_idx):
            out = model.training_step(batch, batch_idx)
            outputs["out"] = out
            if isinstance(out, dict):
                return out["loss"]
            if out is None:
                _pl_refuse("a training_step returning None (a skipped batch)")
            return out

        grad_fn = value_and_grad_reached(forward, opt.parameters)

        def run(batch, batch_idx):
            loss, grads = grad_fn(batch, batch_idx)
            if self.gradient_clip_val:
                if self.clip_algorithm == "value":
                    grads = clip_grad_value(grads, self.gradient_clip_val)
                else:
                    grads, _ = clip_grad_norm(grads, self.gradient_clip_val)
            opt(grads)
            self.global_step += 1
            self._step_schedulers("step")
            return outputs.get("out")
        return run

    def _manual_batch(self, model):
        """Manual optimization of one batch: training_step runs as written, on PyNative's tape; its optimizers'
        step() calls do the updates (_PLManualSteps), each counted in global_step as Lightning counts them."""
        def run(batch, batch_idx):
            return model.training_step(batch, batch_idx)
        return run

    def _train_epochs(self, model, train_loader, val_loader, run_batch):
        _pl_callback_hook(self, model, "on_train_start")
        model._pl_hook("on_train_start")
        while (self.max_epochs == -1 or self.current_epoch < self.max_epochs) and not self.should_stop:
            if self.max_steps != -1 and self.global_step >= self.max_steps:
                break
            _pl_callback_hook(self, model, "on_train_epoch_start")
            model._pl_hook("on_train_epoch_start")
            epoch_outputs = []
            _, limit = self._limited(train_loader, "train")
            total = len(train_loader) if hasattr(train_loader, "__len__") else None
            total = limit if total is None else total if limit is None else min(limit, total)
            cut_short = False   # max_steps reached before the epoch's last batch: Lightning validates no more
            for batch_idx, batch in enumerate(train_loader):
                if limit is not None and batch_idx >= limit:
                    break
                if model._pl_hook("on_train_batch_start", batch, batch_idx) == -1:
                    break
                model._pl_batch = batch
                out = run_batch(batch, batch_idx)
                model._pl_batch = None
                if out is not None:
                    epoch_outputs.append({k: ops.stop_gradient(v) if isinstance(v, ms.Tensor) else v
                                          for k, v in out.items()} if isinstance(out, dict)
                                         else {"loss": ops.stop_gradient(out)})
                _pl_callback_hook(self, model, "on_train_batch_end", out, batch, batch_idx)
                model._pl_hook("on_train_batch_end", out, batch, batch_idx)
                if self.max_steps != -1 and self.global_step >= self.max_steps:
                    cut_short = total is None or batch_idx + 1 < total
                    break
            self._close_epoch_logs()
            if val_loader is not None and not cut_short \
                    and (self.current_epoch + 1) % self.check_val_every_n_epoch == 0:
                self.training = False
                self._validate_epoch(model, val_loader)
                self.training = True
            self._epoch_end(model, "training_epoch_end", epoch_outputs)
            # as Lightning: the callbacks, the module's hook, then the monitoring callbacks (checkpoints, stopping)
            self.callbacks, monitors = ([c for c in self.callbacks if not getattr(c, "monitoring", False)],
                                        self.callbacks)
            _pl_callback_hook(self, model, "on_train_epoch_end")
            self.callbacks = monitors
            model._pl_hook("on_train_epoch_end")
            self._close_epoch_logs()
            self.callbacks, everything = [c for c in monitors if getattr(c, "monitoring", False)], monitors
            _pl_callback_hook(self, model, "on_train_epoch_end")
            self.callbacks = everything
            if model.automatic_optimization:    # manual optimization steps its schedulers itself
                self._step_schedulers("epoch")
            self.current_epoch += 1

    def validate(self, model=None, dataloaders=None, ckpt_path=None, verbose=True, datamodule=None):
        model = self._restored(model, ckpt_path)
        return self._evaluate(model, dataloaders, datamodule, "val", "validation_step", "on_validation_epoch_end",
                              "validate")

    def test(self, model=None, dataloaders=None, ckpt_path=None, verbose=True, datamodule=None):
        model = self._restored(model, ckpt_path)
        return self._evaluate(model, dataloaders, datamodule, "test", "test_step", "on_test_epoch_end", "test")

    def _restored(self, model, ckpt_path):
        """The model to run, with the weights `ckpt_path` names loaded, as Lightning's validate/test/predict:
        "best"/"last" are the ModelCheckpoint's, a path a MindSpore checkpoint; no model: fit's, at its best
        checkpoint where a ModelCheckpoint saved one."""
        if model is None:
            model = self._fitted
            if model is None:
                raise MigrationError("PyTorch Lightning: no model given and none fitted by this Trainer")
            if ckpt_path is None and self.checkpoint_callback is not None and self.checkpoint_callback.best_model_path:
                ckpt_path = "best"
        if ckpt_path is None:
            return model
        cb = self.checkpoint_callback
        if ckpt_path in ("best", "last"):
            path = (cb.best_model_path if ckpt_path == "best" else cb.last_model_path) if cb is not None else ""
            if not path:
                raise ValueError(f'`.test(ckpt_path="{ckpt_path}")` is set but `ModelCheckpoint` has not saved a '
                                 f"{ckpt_path} checkpoint")
        else:
            path = ckpt_path
        try:
            ms.load_checkpoint(path, model)
        except Exception as exc:    # a checkpoint Lightning wrote under torch: its weights convert first
            raise MigrationError(f"PyTorch Lightning: {path} is no MindSpore checkpoint ({type(exc).__name__}); a "
                                 "checkpoint torch wrote converts with `msmigrate weights`") from exc
        return model

    def _evaluate(self, model, dataloaders, datamodule, which, step_name, end_hook, stage):
        self._attach(model, datamodule)
        if datamodule is not None:
            datamodule.setup(stage)
        loader = self._loaders(model, datamodule, which, dataloaders)
        _, limit = self._limited(loader, which)
        self._epoch_logs = {}
        self.callback_metrics, self.logged_metrics = {}, {}     # a run's metrics are its own
        outputs = self._eval_loop(model, loader, which, step_name, limit)
        self._epoch_end(model, end_hook[len("on_"):], outputs)     # validation_epoch_end, test_epoch_end
        model._pl_hook(end_hook)
        names = list(self._epoch_logs)
        self._close_epoch_logs()
        return [{n: _pl_float(self.callback_metrics[n]) for n in names}]

    def predict(self, model=None, dataloaders=None, datamodule=None, return_predictions=None, ckpt_path=None):
        model = self._restored(model, ckpt_path)
        self._attach(model, datamodule)
        if datamodule is not None:
            datamodule.setup("predict")
        loader = self._loaders(model, datamodule, "predict", dataloaders)
        _, limit = self._limited(loader, "predict")
        return self._eval_loop(model, loader, "predict", "predict_step", limit)

    # ------------------------------------------------------------------ what Lightning writes
    @property
    def log_dir(self):
        if self._log_dir is None:
            root = _pl_os.path.join(self.default_root_dir, "lightning_logs")
            n = 0
            while _pl_os.path.exists(_pl_os.path.join(root, f"version_{n}")):
                n += 1
            self._log_dir = _pl_os.path.join(root, f"version_{n}")
        return self._log_dir

    def _write_metrics(self):
        if not self.logger_on or not self._metric_rows:
            return
        _pl_os.makedirs(self.log_dir, exist_ok=True)
        keys = sorted({k for row in self._metric_rows for k in row})
        with open(_pl_os.path.join(self.log_dir, "metrics.csv"), "w", newline="") as f:
            writer = _pl_csv.DictWriter(f, fieldnames=keys)
            writer.writeheader()
            writer.writerows(self._metric_rows)


class _PLOptimizer:
    """Lightning's LightningOptimizer in manual optimization: zero_grad() and step() as _PLManualSteps runs them;
    every other attribute the optimizer's own (param_groups, state)."""

    def __init__(self, manual, optimizer):
        self.__dict__["_manual"] = manual
        self.__dict__["optimizer"] = optimizer

    def __getattr__(self, name):
        return getattr(self.__dict__["optimizer"], name)

    def zero_grad(self, set_to_none=True):
        self._manual.zero_grad(self.optimizer)

    def step(self, closure=None, **kwargs):
        if kwargs:
            _pl_refuse("optimizer.step(...) with keyword arguments")
        out = closure() if closure is not None else None
        self._manual.step(self.optimizer)
        return out

    def toggle_model(self, *args, **kwargs):
        _pl_refuse("LightningOptimizer.toggle_model")


class _PLManualSteps:
    """A fit with manual optimization: training_step runs on PyNative's tape (taped_backward.py), opened here.
    manual_backward keeps the loss; an optimizer's step() differentiates the losses kept since the last step over
    its parameters and steps it (tape_step), as torch's .grad holds them after zero_grad(). Torch's .grad also holds
    what earlier backward() calls gave until zero_grad(): an optimizer whose parameters a loss reached (requiring a
    gradient: not toggled off by toggle_optimizer) while another optimizer's step used it, or whose own step used
    it, steps again only after its zero_grad(); else its step raises MigrationError naming the line (its gradients
    would differ from torch's)."""

    def __init__(self, trainer):
        self.trainer = trainer
        self.wrappers = [_PLOptimizer(self, o) for o in trainer.optimizers]
        self.pending = set()     # ids of the optimizers a loss kept on the tape reached
        self.held = set()        # ids of the optimizers whose torch .grad holds gradients the tape no longer has
        self.opened = not _TAPE["open"]
        open_tape()

    def _reaches(self, nodes, optimizer):
        return any(p.requires_grad and getattr(p, "_grad_node", None) is not None
                   and p._grad_node._unique_id() in nodes for p in optimizer.parameters)

    def backward(self, loss):
        nodes = _reached_nodes(loss)
        tape_backward(loss)
        self.pending |= {id(o) for o in self.trainer.optimizers if self._reaches(nodes, o)}

    def zero_grad(self, optimizer):
        if id(optimizer) in self.pending:
            where = calling_line()
            raise MigrationError(f"{where + ': ' if where else ''}zero_grad() between a manual_backward() and the "
                                 "step that would use it: the converted Trainer differentiates every loss kept "
                                 "since the last step; call zero_grad() before manual_backward()")
        self.held.discard(id(optimizer))

    def step(self, optimizer):
        if id(optimizer) in self.held:
            where = calling_line()
            raise MigrationError(f"{where + ': ' if where else ''}step() of an optimizer whose torch .grad still holds "
                                 "the gradients of a manual_backward() an earlier step used (no zero_grad() since, "
                                 "no toggle_optimizer around it): call its zero_grad() first, or toggle_optimizer, "
                                 "as Lightning's GAN example does")
        if _TAPE["losses"]:
            tape_step(optimizer)    # the recording ended, differentiated, the optimizer stepped, recording again
            self.held |= self.pending
            self.pending = set()
        # no loss kept and no gradient held: torch's step finds every .grad None and changes nothing
        self.trainer.global_step += 1

    def close(self):
        if self.opened:
            close_tape()


def _pl_float(value):
    return float(value.asnumpy()) if isinstance(value, ms.Tensor) else float(value)


# ---------------------------------------------------------------------- callbacks
class LightningCallback:
    """lightning's Callback: a user's subclass gets the hooks the converted Trainer calls (on_train_start,
    on_train_epoch_start/end, on_validation_epoch_end, on_validation_end, on_train_batch_end, on_train_end) with
    (trainer, pl_module, ...) as Lightning passes them."""


def _pl_callback_hook(trainer, model, name, *args):
    for cb in trainer.callbacks:
        hook = getattr(cb, name, None)
        if hook is not None:
            hook(trainer, model, *args)


class _PLMonitor(LightningCallback):
    """A monitoring callback: Lightning calls these after the LightningModule's on_train_epoch_end."""
    monitoring = True

    def _improved(self, current, best):
        if best is None:
            return True
        return current < best - self.min_delta if self.mode == "min" else current > best + self.min_delta


class LightningEarlyStopping(_PLMonitor):
    """lightning's EarlyStopping: after each validation (each training epoch where no validation runs, or where
    check_on_train_epoch_end asks), the monitored metric against the best by min_delta; `patience` checks with no
    improvement stop the fit at that epoch's end."""

    def __init__(self, monitor, min_delta=0.0, patience=3, verbose=False, mode="min", strict=True, check_finite=True,
                 stopping_threshold=None, divergence_threshold=None, check_on_train_epoch_end=None,
                 log_rank_zero_only=False):
        if mode not in ("min", "max"):
            raise ValueError(f"`mode` can be min or max, got {mode}")
        self.monitor, self.min_delta, self.patience, self.mode = monitor, abs(min_delta), patience, mode
        self.strict, self.check_finite = strict, check_finite
        self.stopping_threshold, self.divergence_threshold = stopping_threshold, divergence_threshold
        self.check_on_train_epoch_end = check_on_train_epoch_end
        self.wait_count, self.stopped_epoch, self.best_score = 0, 0, None

    def _check(self, trainer):
        if trainer.sanity_checking:
            return
        if self.monitor not in trainer.callback_metrics:
            if self.strict:
                raise RuntimeError(f"Early stopping conditioned on metric `{self.monitor}` which is not available. "
                                   f"Pass in or modify your `EarlyStopping` callback to use any of the following: "
                                   f"`{'`, `'.join(trainer.callback_metrics)}`")
            return
        current = _pl_float(trainer.callback_metrics[self.monitor])
        better = (lambda a, b: a < b) if self.mode == "min" else (lambda a, b: a > b)
        delta = -self.min_delta if self.mode == "min" else self.min_delta
        stop = False
        if self.check_finite and not np.isfinite(current):
            stop = True
        elif self.stopping_threshold is not None and better(current, self.stopping_threshold):
            stop = True
        elif self.divergence_threshold is not None and better(-current, -self.divergence_threshold):
            stop = True
        elif self.best_score is None or better(current - delta, self.best_score):
            self.best_score, self.wait_count = current, 0
        else:
            self.wait_count += 1
            stop = self.wait_count >= self.patience
        if stop:
            self.stopped_epoch = trainer.current_epoch
            trainer.should_stop = True

    def _on_train_epoch(self, trainer):
        # Lightning's default: at the training epoch's end when validation runs every epoch (or never)
        return self.check_on_train_epoch_end if self.check_on_train_epoch_end is not None \
            else trainer.check_val_every_n_epoch == 1

    def on_train_epoch_end(self, trainer, pl_module):
        if self._on_train_epoch(trainer):
            self._check(trainer)

    def on_validation_end(self, trainer, pl_module):
        if not self._on_train_epoch(trainer):
            self._check(trainer)


class ModelCheckpoint(_PLMonitor):
    """lightning's ModelCheckpoint: MindSpore checkpoints (ms.save_checkpoint of the model) in dirpath (Lightning's
    default: the logger's version folder's checkpoints/, or default_root_dir/checkpoints), named as Lightning names
    them (`epoch=0-step=4.ckpt`, or `filename` with its {epoch}, {step} and metric fields); the best save_top_k by
    the monitored metric (the last one without a monitor); save_last writes last.ckpt. best_model_path and
    best_model_score as Lightning's."""

    def __init__(self, dirpath=None, filename=None, monitor=None, verbose=False, save_last=None, save_top_k=1,
                 save_weights_only=False, mode="min", auto_insert_metric_name=True, every_n_train_steps=None,
                 train_time_interval=None, every_n_epochs=None, save_on_train_epoch_end=None,
                 enable_version_counter=True):
        if every_n_train_steps or train_time_interval is not None:
            _pl_refuse("ModelCheckpoint(every_n_train_steps/train_time_interval)")
        self.dirpath, self.filename, self.monitor, self.mode = dirpath, filename, monitor, mode
        self.save_last, self.save_top_k = save_last, save_top_k
        self.auto_insert_metric_name = auto_insert_metric_name
        self.every_n_epochs = 1 if every_n_epochs is None else every_n_epochs
        self.save_on_train_epoch_end = save_on_train_epoch_end
        self.min_delta = 0.0
        self.best_k_models = {}
        self.best_model_path, self.best_model_score = "", None
        self.last_model_path = ""
        self.kth_best_model_path = ""

    def _name(self, trainer):
        metrics = {"epoch": trainer.current_epoch, "step": trainer.global_step}
        metrics.update({k: _pl_float(v) for k, v in trainer.callback_metrics.items()})
        template = self.filename or "{epoch}-{step}"
        for field in _pl_re.findall(r"\{([^{}:]+)(?::[^{}]*)?\}", template):
            if self.auto_insert_metric_name:
                template = template.replace("{" + field, field + "={" + field, 1)
        template = _pl_re.sub(r"\{([^{}:]+)", lambda m: "{" + m.group(1).replace(".", "_").replace("/", "_"),
                              template)
        values = {k.replace(".", "_").replace("/", "_"): v for k, v in metrics.items()}
        for field in _pl_re.findall(r"\{([^{}:]+)", template):
            values.setdefault(field, 0)
        return template.format(**values)

    def _save(self, trainer, model):
        if trainer.sanity_checking or (trainer.current_epoch + 1) % self.every_n_epochs:
            return
        where = self.dirpath or (_pl_os.path.join(trainer.log_dir, "checkpoints") if trainer.logger_on
                                 else _pl_os.path.join(trainer.default_root_dir, "checkpoints"))
        _pl_os.makedirs(where, exist_ok=True)
        path = _pl_os.path.join(where, self._name(trainer) + ".ckpt")
        if self.monitor is None:
            if self.save_top_k != 0:
                for old in list(self.best_k_models):
                    if self.save_top_k == 1 and old != path and _pl_os.path.exists(old):
                        _pl_os.remove(old)
                self.best_k_models = {path: None}
                ms.save_checkpoint(model, path)
                self.best_model_path = self.kth_best_model_path = path
        elif self.save_top_k != 0:
            if self.monitor not in trainer.callback_metrics:
                raise MigrationError(f"ModelCheckpoint(monitor={self.monitor!r}) could not find the monitored key in "
                                     f"the returned metrics: {list(trainer.callback_metrics)}")
            score = _pl_float(trainer.callback_metrics[self.monitor])
            keep = self.save_top_k == -1 or len(self.best_k_models) < self.save_top_k
            worst = None
            if not keep:
                worst = max(self.best_k_models, key=self.best_k_models.get) if self.mode == "min" \
                    else min(self.best_k_models, key=self.best_k_models.get)
                keep = self._improved(score, self.best_k_models[worst])
            if keep:
                if worst is not None:
                    self.best_k_models.pop(worst)
                    if _pl_os.path.exists(worst):
                        _pl_os.remove(worst)
                self.best_k_models[path] = score
                ms.save_checkpoint(model, path)
                pick = min if self.mode == "min" else max
                self.best_model_path = pick(self.best_k_models, key=self.best_k_models.get)
                self.best_model_score = ms.Tensor(self.best_k_models[self.best_model_path], ms.float32)
        if self.save_last:
            self.last_model_path = _pl_os.path.join(where, "last.ckpt")
            ms.save_checkpoint(model, self.last_model_path)

    def _on_train_epoch(self, trainer):
        if self.save_on_train_epoch_end is not None:
            return self.save_on_train_epoch_end
        return trainer.check_val_every_n_epoch == 1 or not trainer._validates

    def on_train_epoch_end(self, trainer, pl_module):
        if self._on_train_epoch(trainer):
            self._save(trainer, pl_module)

    def on_validation_end(self, trainer, pl_module):
        if not self._on_train_epoch(trainer):
            self._save(trainer, pl_module)


class LearningRateMonitor(LightningCallback):
    """lightning's LearningRateMonitor: the learning rates written with the logged metrics (lr-<Optimizer>)."""

    def __init__(self, logging_interval=None, log_momentum=False, log_weight_decay=False):
        self.logging_interval = logging_interval

    def on_train_epoch_start(self, trainer, pl_module):
        for opt in trainer.optimizers:
            for i, group in enumerate(opt.param_groups):
                name = f"lr-{type(opt).__name__}" + (f"/pg{i + 1}" if len(opt.param_groups) > 1 else "")
                trainer.logged_metrics[name] = _pl_float(group["lr"])


class _PLNoOp(LightningCallback):
    """A callback that draws on the terminal only (progress bars, the model summary)."""

    def __init__(self, *args, **kwargs):
        pass


TQDMProgressBar = RichProgressBar = ModelSummary = RichModelSummary = _PLNoOp
