"""A statement between `loss.backward()` and `optimizer.step()` that runs the network again (DCGAN-style logging:
`D_x = netD(real).mean().item()` after the critic's backward()): torch runs it on the weights before the update.
The converted train step computes the gradients and updates in one call, so the statement runs just before that
call instead (msmigrate/train_loop.py _reads_before_step), which is the same network. It is also before the
step's own forward: a BatchNorm in training mode would move its running statistics in the other order, a Dropout
would draw its masks in the other order; that is refused here."""


def network_read_before_step(where, *objects):
    """MigrationError naming the original line where one of the objects (a network, or an object holding one in
    an attribute) holds a BatchNorm or Dropout in training mode; nothing otherwise."""
    for obj in objects:
        for cell in _cells_of(obj):
            why = _stateful_in_training(cell)
            if why:
                _network_read_before_step_refused(where, type(cell).__name__)
    return 0


def _network_read_before_step_refused(where, layer):
    raise MigrationError(
        f"{where}: this statement runs the network between backward() and step(); the converted train step "
        f"computes the gradients and updates in one call, so it runs before that call, and a {layer} in training "
        "mode would then update its statistics (or draw its masks) in another order than torch. Put the network "
        "in eval mode for this statement, or move it before the loss's forward")
