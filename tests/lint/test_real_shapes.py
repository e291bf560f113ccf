"""The false-alarm shapes and the misses that real scripts showed (issue 13), one test each.

Each source is a minimal reduction of the public script named in its test's docstring.
"""

from __future__ import annotations

import textwrap

from torchwise.lint.config import LintConfig
from torchwise.lint.engine import lint_paths, lint_source


def found(source: str, code: str) -> list[int]:
    """The lines where ``code`` fires in ``source``."""
    text = textwrap.dedent(source)
    return [f.line for f in lint_source(text, "train.py", config=LintConfig(select=(code,)))]


# --- false alarms that are gone ------------------------------------------------------------


def test_cuda_behind_an_availability_check_is_fine():
    """pytorch/examples imagenet: ``model.cuda()`` under ``if device.type == 'cuda':``."""
    source = """
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        if device.type == "cuda":
            model.cuda()
        images = images.cuda(args.gpu) if args.gpu is not None else images.to(device)
        stray = labels.cuda()
    """
    assert found(source, "TW108") == [6]


def test_cuda_in_an_nccl_script_pinned_to_its_rank_is_fine():
    """ddp-tutorial-series multigpu_torchrun: NCCL + set_device, so .cuda() is the rank's GPU."""
    source = """
        init_process_group(backend="nccl")
        torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
        device = torch.device("cuda")
        model = Net().cuda()
        source = batch.to(device)
    """
    assert found(source, "TW108") == []
    assert found(source.replace("torch.cuda.set_device", "print"), "TW108") == [5]


def test_gan_n_critic_generator_update_is_not_accumulation():
    """PyTorch-GAN wgan/wgan_gp/wgan_div: ``if i % opt.n_critic == 0:`` trains the generator."""
    source = """
        for epoch in range(n_epochs):
            for i, (imgs, _) in enumerate(dataloader):
                optimizer_D.zero_grad()
                loss_D = -torch.mean(discriminator(imgs)) + torch.mean(discriminator(fake))
                loss_D.backward()
                optimizer_D.step()
                if i % opt.n_critic == 0:
                    optimizer_G.zero_grad()
                    loss_G = -torch.mean(discriminator(generator(z)))
                    loss_G.backward()
                    optimizer_G.step()
    """
    assert found(source, "TW116") == []


def test_accelerate_backward_of_a_divided_loss_is_not_undivided():
    """accelerate nlp_example: ``loss = loss / steps; accelerator.backward(loss)``."""
    source = """
        for step, batch in enumerate(train_dataloader):
            loss = model(**batch).loss
            loss = loss / gradient_accumulation_steps
            accelerator.backward(loss)
            if step % gradient_accumulation_steps == 0:
                optimizer.step()
                optimizer.zero_grad()
    """
    assert found(source, "TW116") == []
    assert found(source.replace("loss = loss / gradient_accumulation_steps", "pass"), "TW116") == [5]


def test_map_location_not_asked_for_a_file_reloaded_in_the_same_run():
    """pytorch/examples word_language_model: saves the best model, reloads it after training."""
    source = """
        model = Net().to(device)
        with open(args.save, "wb") as f:
            torch.save(model.state_dict(), f)
        with open(args.save, "rb") as f:
            model.load_state_dict(torch.load(f))
    """
    assert found(source, "TW110") == []


def test_map_location_not_asked_for_host_data_in_a_cpu_script():
    """pytorch/examples time_sequence_prediction: numpy data saved by another CPU script."""
    source = """
        data = torch.load("traindata.pt")
        plt.xlabel("x")
        model.load_state_dict(torch.load("weights.pt"))
    """
    assert found(source, "TW110") == [4]


def test_clip_in_the_non_amp_else_branch_is_fine():
    """minGPT-ddp trainer: ``if use_amp: scaler... else: loss.backward(); clip(...)``."""
    source = """
        def _run_batch(self, source, targets):
            loss = self.model(source, targets)
            if self.config.use_amp:
                self.scaler.scale(loss).backward()
                torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
                self.scaler.step(self.optimizer)
                self.scaler.update()
            else:
                loss.backward()
                torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
                self.optimizer.step()
    """
    assert found(source, "TW106") == [6]


def test_a_dataloader_built_at_module_level_starts_no_worker():
    """Loaders built at import time but only iterated in main() under the guard."""
    source = """
        train_loader = DataLoader(train_set, batch_size=64, shuffle=True, num_workers=4)

        def main():
            for x, y in train_loader:
                pass

        if __name__ == "__main__":
            main()
    """
    assert found(source, "TW109") == []


def test_dataloader_kwargs_holding_shuffle_are_trusted():
    """mnist_hogwild: ``DataLoader(dataset, **dataloader_kwargs)`` with shuffle=True in them."""
    source = """
        def train(rank, args, model, dataset, dataloader_kwargs):
            train_loader = torch.utils.data.DataLoader(dataset, **dataloader_kwargs)

        kwargs = {"batch_size": 64, "shuffle": True}
        train_loader = DataLoader(train_set, **kwargs)
    """
    assert found(source, "TW122") == []


def test_shuffle_only_on_the_accelerator_path_is_reported():
    """pytorch/examples mnist: shuffle=True sits only in ``accel_kwargs``."""
    source = """
        train_kwargs = {"batch_size": args.batch_size}
        if use_accel:
            train_kwargs.update({"num_workers": 1, "shuffle": True})
        train_loader = torch.utils.data.DataLoader(dataset1, **train_kwargs)
    """
    assert found(source, "TW122") == [5]


def test_dataloader_subclass_brings_its_own_sampler():
    source = """
        class BucketLoader(DataLoader):
            def __init__(self, ds):
                super().__init__(ds, batch_sampler=Buckets(ds))

        train_loader = BucketLoader(train_set)
    """
    assert found(source, "TW122") == []


def test_checkpoint_without_optimizer_state_is_fine_for_plain_sgd():
    """ddp-tutorial-series: ``SGD(lr=1e-3)`` keeps no state; momentum does."""
    source = """
        optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
        torch.save({"MODEL_STATE": model.state_dict(), "EPOCHS_RUN": epoch}, path)
        snapshot = torch.load(path, map_location="cpu")
        model.load_state_dict(snapshot["MODEL_STATE"])
    """
    assert found(source, "TW119") == []
    assert found(source.replace("lr=1e-3", "lr=1e-3, momentum=0.9"), "TW119") == [3]


def test_no_seed_needed_when_nothing_is_random():
    """yunjey neural_style_transfer: a pretrained VGG optimises a copy of the content image."""
    source = """
        from torchvision import models

        class VGGNet(nn.Module):
            def __init__(self):
                super().__init__()
                self.vgg = models.vgg19(pretrained=True).features

        vgg = VGGNet().to(device).eval()
        target = content.clone().requires_grad_(True)
        optimizer = torch.optim.Adam([target], lr=0.003)
        for step in range(2000):
            loss = style_loss(vgg(target))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    """
    assert found(source, "TW115") == []
    assert found(source.replace("pretrained=True", "weights=None"), "TW115") == []
    assert found(source.replace("(pretrained=True)", "()"), "TW115") == [1]


def test_one_finding_per_statement():
    """PyTorch-GAN cyclegan: one per-step print of five ``.item()`` over five lines."""
    source = """
        model = model.cuda()
        for i, batch in enumerate(dataloader):
            optimizer.zero_grad()
            loss_G.backward()
            optimizer.step()
            print(
                loss_D.item(),
                loss_G.item(),
                loss_GAN.item(),
            )
    """
    assert found(source, "TW107") == [8]


def test_eval_mode_not_asked_for_a_model_without_dropout_or_batch_norm():
    """yunjey feedforward / logistic regression: Linear and ReLU only."""
    source = """
        import torch.nn as nn

        class NeuralNet(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc1 = nn.Linear(784, 500)
                self.relu = nn.ReLU()
                self.fc2 = nn.Linear(500, 10)

        model = NeuralNet().to(device)
        with torch.no_grad():
            for images, labels in test_loader:
                model(images)
    """
    assert found(source, "TW103") == []
    assert found(source.replace("nn.ReLU()", "nn.Dropout(0.2)"), "TW103") == [13]


# --- misses that are caught ----------------------------------------------------------------


def test_shared_run_epoch_evaluating_without_eval_mode():
    """minGPT-ddp trainer: ``self._run_epoch(epoch, self.test_loader, train=False)``."""
    source = """
        class Trainer:
            def _run_batch(self, source, targets, train=True):
                with torch.set_grad_enabled(train):
                    _, loss = self.model(source, targets)
                if train:
                    self.optimizer.zero_grad()
                    loss.backward()
                    self.optimizer.step()

            def _run_epoch(self, epoch, dataloader, train=True):
                for source, targets in dataloader:
                    self._run_batch(source, targets, train)

            def train(self):
                for epoch in range(self.max_epochs):
                    self._run_epoch(epoch, self.train_loader, train=True)
                    self._run_epoch(epoch, self.test_loader, train=False)
    """
    assert found(source, "TW103") == [18]
    evaluating = "self._run_epoch(epoch, self.test_loader"
    fixed = source.replace(evaluating, f"self.model.eval()\n{' ' * 20}{evaluating}")
    assert found(fixed, "TW103") == []


def test_workers_from_argparse_started_at_import_time():
    """PyTorch-GAN srgan: ``num_workers=opt.n_cpu`` and a module-level training loop."""
    source = """
        parser.add_argument("--n_cpu", type=int, default=8)
        opt = parser.parse_args()
        dataloader = DataLoader(ImageDataset(path), batch_size=4, shuffle=True, num_workers=opt.n_cpu)
        for epoch in range(opt.n_epochs):
            for i, imgs in enumerate(dataloader):
                pass
    """
    assert found(source, "TW109") == [4]
    assert found(source.replace("default=8", "default=0"), "TW109") == []


def test_torch_load_of_a_whole_module():
    """legacy/snli: ``model = torch.load(args.resume_snapshot)`` then ``model.parameters()``."""
    source = """
        model = torch.load(args.resume_snapshot, map_location=device)
        opt = torch.optim.Adam(model.parameters(), lr=args.lr)
        with torch.serialization.safe_globals([SNLIClassifier]):
            allowed = torch.load(args.other)
        allowed.eval()
    """
    findings = lint_source(textwrap.dedent(source), config=LintConfig(select=("TW125",)))
    assert [f.line for f in findings] == [2]
    assert "weights_only=False" in findings[0].fix and "state_dict" in findings[0].fix


def test_unconditional_cuda_float_tensor():
    source = """
        dtype = torch.cuda.FloatTensor
        Tensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor
    """
    assert found(source, "TW128") == [2]


def test_second_backward_on_the_same_graph():
    """A new user's script that raises "Trying to backward through the graph a second time"."""
    source = """
        x = torch.randn(3, requires_grad=True)
        y = (x * x).sum()
        y.backward()
        y.backward()
    """
    assert found(source, "TW126") == [5]


def test_in_place_update_of_a_leaf_outside_no_grad():
    """A new user's script that raises "a leaf Variable that requires grad is being used in an
    in-place operation"."""
    source = """
        w = torch.randn(3, requires_grad=True)
        for step in range(10):
            loss = (w * w).sum()
            loss.backward()
            w -= 0.1 * w.grad
            with torch.no_grad():
                w -= 0.1 * w.grad
    """
    assert found(source, "TW127") == [6]


def test_zeroed_grads_kept_when_the_file_adds_into_them():
    """pytorch/examples rpc/batch parameter_server: ``p.grad += g`` needs zeros, not None."""
    source = """
        def update(model, optimizer, grads):
            for p, g in zip(model.parameters(), grads):
                p.grad += g
            optimizer.step()
            optimizer.zero_grad(set_to_none=False)
    """
    assert found(source, "TW123") == []
    assert found(source.replace("p.grad += g", "p.grad = g"), "TW123") == [6]


def test_distributed_autograd_needs_no_zero_grad():
    """pytorch/examples rpc/ddp_rpc: gradients live in the dist_autograd context."""
    source = """
        import torch.distributed.autograd as dist_autograd

        for inputs, target in batches:
            with dist_autograd.context() as context_id:
                loss = criterion(model(inputs), target)
                dist_autograd.backward(context_id, [loss])
                opt.step(context_id)
    """
    assert found(source, "TW101") == []


def test_deepspeed_engine_backward_is_not_a_second_backward():
    """accelerate fp8 benchmarks: ``model.backward(loss)`` on a DeepSpeed engine, every step."""
    source = """
        model, optimizer, _, _ = deepspeed.initialize(model=model, optimizer=optimizer)
        for batch in train_dataloader:
            loss = model(**batch).loss
            model.backward(loss)
            model.step()
    """
    assert found(source, "TW126") == []


def test_from_pretrained_models_start_in_eval_mode():
    """accelerate distributed_speech_generation: a Hugging Face model is returned in eval mode."""
    source = """
        model = VitsModel.from_pretrained("kakao-enterprise/vits-ljs")
        for batch in tqdm(batches):
            with torch.no_grad():
                outputs = model(input_ids=batch["input_ids"])
    """
    assert found(source, "TW103") == []


def test_gradients_set_by_hand_need_no_backward():
    """timm's optimizer tests: ``param.grad = torch.ones_like(param)`` then ``step()``."""
    source = """
        for _ in range(2):
            param.grad = torch.ones_like(param)
            reference_optimizer.step()
        for _ in range(2):
            reference_optimizer.step()
    """
    assert found(source, "TW102") == [6]


def test_a_weights_file_is_not_read_as_another_functions_checkpoint():
    """accelerate fsdp_utils: ``state_dict = get_state(model); torch.save(state_dict, f)``,
    while another function builds a dict under the same name."""
    source = """
        optimizer = torch.optim.AdamW(model.parameters())

        def save_weights(model, path):
            state_dict = get_model_state_dict(model)
            torch.save(state_dict, path)

        def save_checkpoint(model, path):
            state_dict = {"model": model.state_dict(), "epoch": 3}
            torch.save(state_dict, path)

        def resume(model, path):
            model.load_state_dict(torch.load(path, map_location="cpu")["model"])
    """
    assert found(source, "TW119") == [10]


def test_eval_mode_not_asked_for_a_mode_free_model_in_the_file_beside(tmp_path):
    """pytorch/examples super_resolution: ``from model import Net``, convs and ReLUs only."""
    (tmp_path / "model.py").write_text(
        "import torch.nn as nn\n\n"
        "class Net(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.conv = nn.Conv2d(1, 64, 5)\n"
        "        self.relu = nn.ReLU()\n"
    )
    train = (
        "from model import Net\n"
        "model = Net().to(device)\n"
        "with torch.no_grad():\n"
        "    for batch in testing_data_loader:\n"
        "        model(batch)\n"
    )
    (tmp_path / "main.py").write_text(train)
    assert [f.code for f in lint_paths([tmp_path / "main.py"], select=["TW103"])] == []
    (tmp_path / "model.py").write_text((tmp_path / "model.py").read_text().replace("nn.ReLU()", "nn.Dropout()"))
    assert [f.line for f in lint_paths([tmp_path / "main.py"], select=["TW103"])] == [4]
