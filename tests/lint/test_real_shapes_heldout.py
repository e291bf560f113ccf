"""False-alarm shapes and misses from a second, held-out set of public scripts (lint2).

Each source is a minimal reduction of the public script named in its test's docstring; the
scripts themselves are in ``tests/lint/real/`` with their verdicts. test_real_shapes.py holds
the shapes of the first set.
"""

from __future__ import annotations

from .test_real_shapes import found


def test_host_sync_on_a_failure_path_that_exits_is_fine():
    """DETR engine / DINO main_dino: ``print(loss_dict)`` before ``sys.exit(1)`` on a NaN loss
    runs once; the ``loss.item()`` in the check itself runs every step and stays reported."""
    source = """
        device = "cuda"
        for samples, targets in data_loader:
            loss = criterion(model(samples), targets)
            loss_value = loss.item()
            if not math.isfinite(loss_value):
                print("Loss is {}, stopping training".format(loss_value))
                print(loss_dict_reduced)
                sys.exit(1)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    """
    assert found(source, "TW107") == [5]
    assert found(source.replace("sys.exit(1)", "pass"), "TW107") == [5, 8]


def test_action_handed_to_the_environment_is_fine():
    """cleanrl dqn / sac_continuous_action: the action goes back to the host for
    ``envs.step(actions)`` every step; a value read back only to log is still reported."""
    source = """
        device = torch.device("cuda")
        for global_step in range(args.total_timesteps):
            actions, _, _ = actor.get_action(torch.Tensor(obs).to(device))
            actions = actions.detach().cpu().numpy()
            next_obs, rewards, terminations, truncations, infos = envs.step(actions)
            qf_loss = F.mse_loss(qf1(obs, actions), target)
            q_optimizer.zero_grad()
            qf_loss.backward()
            q_optimizer.step()
    """
    assert found(source, "TW107") == []
    assert found(source.replace("envs.step(actions)", "envs.step(policy)"), "TW107") == [5]


def test_reload_of_a_formatted_path_this_run_saved_is_fine():
    """pyGAT train: ``torch.save(..., '{}.pkl'.format(epoch))`` every epoch, then
    ``torch.load('{}.pkl'.format(best_epoch))`` of the best one, on the device that wrote it."""
    source = """
        model.cuda()
        for epoch in range(args.epochs):
            loss_values.append(train(epoch))
            torch.save(model.state_dict(), '{}.pkl'.format(epoch))
        model.load_state_dict(torch.load('{}.pkl'.format(best_epoch)))
    """
    assert found(source, "TW110") == []
    assert found(source.replace("'{}.pkl'.format(best_epoch)", "'{}.pt'.format(best_epoch)"), "TW110") == [6]


def test_checkpoint_without_optimizer_in_a_file_that_never_loads_is_fine():
    """attention-is-all-you-need train: ``{'epoch', 'settings', 'model'}`` saved for
    translate.py's inference; the script has no resume, so no optimizer state is lost."""
    source = """
        optimizer = torch.optim.Adam(model.parameters(), betas=(0.9, 0.98), eps=1e-09)
        checkpoint = {'epoch': epoch_i, 'settings': opt, 'model': model.state_dict()}
        torch.save(checkpoint, 'model.chkpt')
        RESUME
    """
    assert found(source.replace("RESUME", "pass"), "TW119") == []
    resume = "model.load_state_dict(torch.load(opt.resume)['model'])"
    assert found(source.replace("RESUME", resume), "TW119") == [4]


def test_an_entry_of_a_loaded_checkpoint_used_as_a_module():
    """sgrvinod a-PyTorch-Tutorial-to-Object-Detection eval: ``checkpoint = torch.load(f)``,
    ``model = checkpoint['model']``, ``model.eval()``: a pickled module that
    ``weights_only=True`` (default since torch 2.6) refuses. Missed before."""
    source = """
        checkpoint = torch.load(checkpoint)
        model = checkpoint['model']
        model = model.to(device)
        model.eval()
    """
    assert found(source, "TW125") == [2]
    assert found(source.replace("model.eval()", "net.load_state_dict(model)"), "TW125") == []


# --- second held-out set: measured with the fixes above, then fixed ------------------------


def test_host_sync_under_a_flag_set_from_a_modulo_or_a_clock_is_periodic():
    """stylegan2 train: ``g_regularize = i % args.g_reg_every == 0; if g_regularize: ...item()``;
    vicreg main: ``if args.rank == 0 and current_time - last_logging > args.log_freq_time:``."""
    source = """
        scaler = torch.cuda.amp.GradScaler()
        for step, ((x, y), _) in enumerate(loader, start=epoch * len(loader)):
            optimizer.zero_grad()
            loss = model.forward(x, y)
            loss.backward()
            optimizer.step()
            regularize = step % args.reg_every == 0
            if regularize:
                mean_path_length_avg = reduce_sum(mean_path_length).item()
            current_time = time.time()
            if args.rank == 0 and current_time - last_logging > args.log_freq_time:
                stats = dict(epoch=epoch, step=step, loss=loss.item())
    """
    assert found(source, "TW107") == []
    every_step = source.replace("step % args.reg_every == 0", "step > 0").replace(
        " and current_time - last_logging > args.log_freq_time", ""
    )
    assert found(every_step, "TW107") == [10, 13]


def test_dataset_that_draws_its_own_window_needs_no_shuffle():
    """x-transformers train_enwik8: ``TextSamplerDataset.__getitem__(self, index)`` picks a
    random start and never reads ``index``, so the loader's order means nothing."""
    source = """
        class TextSamplerDataset(Dataset):
            def __getitem__(self, index):
                rand_start = torch.randint(0, self.data.size(0) - self.seq_len - 1, (1,))
                return self.data[rand_start: rand_start + self.seq_len + 1].long()

        train_dataset = TextSamplerDataset(data_train, seq_len)
        train_loader = cycle(DataLoader(train_dataset, batch_size=batch_size, drop_last=True))
    """
    assert found(source, "TW122") == []
    assert found(source.replace("rand_start = torch", "rand_start = index + 0 * torch"), "TW122") == [8]


def test_loader_handed_to_opacus_make_private_is_resampled():
    """opacus examples/mnist: ``privacy_engine.make_private(data_loader=train_loader)`` returns
    a Poisson-sampled loader in its place; without it the plain loader is reported."""
    source = """
        train_loader = torch.utils.data.DataLoader(datasets.MNIST(root, train=True), batch_size=64)
        model, optimizer, train_loader = privacy_engine.make_private(
            module=model, optimizer=optimizer, data_loader=train_loader, noise_multiplier=1.0
        )
    """
    assert found(source, "TW122") == []
    assert found(source.replace("make_private", "attach"), "TW122") == [2]


def test_ema_copy_left_in_eval_is_fine():
    """stylegan2 train: ``g_ema.eval()`` before sampling under no_grad; only ``generator`` and
    ``discriminator`` are optimised, so the EMA copy is never trained."""
    source = """
        from torch import optim

        g_optim = optim.Adam(generator.parameters(), lr=args.lr)
        d_optim = optim.Adam(discriminator.parameters(), lr=args.lr)
        for idx in pbar:
            generator.zero_grad()
            g_loss = g_nonsaturating_loss(discriminator(generator(noise)))
            g_loss.backward()
            g_optim.step()
            accumulate(g_ema, g_module, accum)
            if i % 100 == 0:
                with torch.no_grad():
                    g_ema.eval()
                    sample, _ = g_ema([sample_z])
    """
    assert found(source, "TW105") == []
    trained = source.replace("optim.Adam(discriminator", "optim.Adam(g_ema")
    assert found(trained, "TW105") == [14]


# --- third held-out set: measured with both sets' fixes, then fixed -------------------------


def test_sync_on_the_validation_branch_of_a_shared_loop_is_fine():
    """pytorch-original-transformer training_script: one loop trains under ``if is_train:``
    and validates under its ``else:``; the else-branch ``loss.item()`` is no training step."""
    source = """
        for batch_idx, token_ids_batch in enumerate(token_ids_loader):
            loss = kl_div_loss(transformer(token_ids_batch.cuda()), target)
            if is_train:
                loss.backward()
                custom_lr_optimizer.step()
            if is_train:
                writer.add_scalar('training_loss', loss.item(), global_train_step)
            else:
                writer.add_scalar('val_loss', loss.item(), global_val_step)
    """
    assert found(source, "TW107") == [8]
    training_always = source.replace("if is_train:\n                loss", "if True:\n                loss")
    assert found(training_always, "TW107") == [8, 10]


def test_detectron2_default_setup_seeds():
    """detectron2 tools/plain_train_net: ``default_setup(cfg, args)`` seeds every RNG from
    ``cfg.SEED``; a script without it is still asked for a seed."""
    source = """
        from detectron2.engine import default_setup

        def main(args):
            cfg = setup(args)
            default_setup(cfg, args)
            model = torch.nn.Linear(4, 2)
            for data in loader:
                loss = model(data).sum()
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()

        if __name__ == "__main__":
            main(args)
    """
    assert found(source, "TW115") == []
    assert found(source.replace("default_setup(cfg, args)", "print(cfg)"), "TW115") == [1]
