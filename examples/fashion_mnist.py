"""Train a CNN on Fashion-MNIST with Ember: the project's main job.

A PyTorch program with `import torch` changed to `import ember as torch`: a Dataset and a
DataLoader with worker processes and augmentation, an nn.Module CNN with batch norm and dropout,
AdamW (or SGD) with a one-cycle learning-rate schedule, train/eval modes, a checkpoint each epoch
(ember.save) that --resume continues from, a progress bar, and a PNG of the learning curves.

Data: Debian's dataset-fashion-mnist package (/usr/share/datasets/fashion-mnist), or --data DIR
holding the four IDX files (gzipped or not).

Data-parallel training: run it under the launcher (`python -m ember.distributed.run
--nproc-per-node 2 examples/fashion_mnist.py ...`, on one or several machines), or pass
--distributed [--nproc N] to have it start the launcher itself. Each process trains a
DistributedDataParallel copy of the model on its share of every epoch (DistributedSampler) with
--batch-size / world_size images per step, so the global batch and the schedule stay those of a
single-process run; evaluation is split across the processes; rank 0 prints, checkpoints and plots.
"""
import argparse
import os
import sys
import time

import ember as torch
import ember.nn as nn
import ember.nn.functional as F
from ember.utils.data import DataLoader, Dataset, Subset
from ember.vision import datasets

MEAN, STD = 0.2860, 0.3530  # Fashion-MNIST's pixel statistics (training set)


class ImageBatches(Dataset):
    """Images from one uint8 tensor (N, H, W), normalized, with optional augmentation: a random
    horizontal flip and a random shift of up to `shift` pixels (zero padding), each drawn per image.

    `__getitems__` makes a whole batch at once, so a DataLoader worker spends about 1 ms per batch of
    128 instead of ~6 ms on per-image transforms (ToTensor, Normalize, RandomCrop...): on a 2-core
    machine the workers share the cores with training, and per-image work would slow every step."""

    def __init__(self, images, targets, augment=False, shift=2):
        self.images, self.targets, self.augment, self.shift = images, targets, augment, shift
        h, w = images.shape[-2:]
        self.rows, self.cols = torch.arange(h).view(1, h, 1), torch.arange(w).view(1, 1, w)
        # zero padding on every side, so a shifted crop is one gather from the padded images
        self.padded = F.pad(images, (shift, shift, shift, shift)) if augment else None

    def __len__(self):
        return len(self.images)

    def __getitem__(self, index):
        return self.__getitems__([index])[0]

    def __getitems__(self, indices):
        idx = torch.as_tensor(indices, dtype=torch.int64)
        if self.augment:
            n, w = idx.numel(), self.cols.shape[-1]
            dy = torch.randint(0, 2 * self.shift + 1, (n, 1, 1))
            dx = torch.randint(0, 2 * self.shift + 1, (n, 1, 1))
            flip = torch.rand(n, 1, 1) < 0.5
            cols = torch.where(flip, (w - 1) - self.cols, self.cols) + dx
            x = self.padded[idx.view(n, 1, 1), self.rows + dy, cols]
        else:
            x = self.images[idx]
        x = (x.unsqueeze(1).float() - 255 * MEAN) * (1 / (255 * STD))
        return list(zip(x.unbind(0), self.targets[idx].unbind(0)))


class Net(nn.Module):
    """Three conv-BN-ReLU layers (two followed by max-pooling) and a two-layer classifier with dropout."""

    def __init__(self, width=32, num_classes=10, dropout=0.25):
        super().__init__()

        def conv(cin, cout):
            return [nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True)]

        self.features = nn.Sequential(
            *conv(1, width), nn.MaxPool2d(2),              # 28 -> 14
            *conv(width, 2 * width), nn.MaxPool2d(2),      # 14 -> 7
            *conv(2 * width, 2 * width))
        self.classifier = nn.Sequential(
            nn.Flatten(), nn.Dropout(dropout), nn.Linear(2 * width * 7 * 7, 128), nn.ReLU(inplace=True),
            nn.Dropout(dropout), nn.Linear(128, num_classes))

    def forward(self, x):
        return self.classifier(self.features(x))


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", default=None, help="directory with the Fashion-MNIST IDX files "
                   "(default: Debian's /usr/share/datasets/fashion-mnist)")
    p.add_argument("--epochs", type=int, default=9, help="training epochs (default: 9)")
    p.add_argument("--batch-size", type=int, default=128, help="training batch size (default: 128)")
    p.add_argument("--optimizer", choices=["adamw", "sgd"], default="adamw", help="optimizer (default: adamw)")
    p.add_argument("--lr", type=float, default=None,
                   help="peak learning rate of the one-cycle schedule (default: 3e-3 for AdamW, 0.1 for SGD)")
    p.add_argument("--weight-decay", type=float, default=5e-4, help="weight decay (default: 5e-4)")
    p.add_argument("--width", type=int, default=32, help="channels of the first conv block (default: 32)")
    p.add_argument("--workers", type=int, default=2, help="DataLoader worker processes (default: 2)")
    p.add_argument("--no-augment", action="store_true",
                   help="train without augmentation (default: random horizontal flips and 2-pixel shifts)")
    p.add_argument("--threads", type=int, default=None, help="intra-op threads (default: all cores)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    p.add_argument("--limit-train", type=int, default=None, help="use only the first N training images")
    p.add_argument("--limit-test", type=int, default=None, help="use only the first N test images")
    p.add_argument("--out", default="runs/fashion_mnist",
                   help="directory for checkpoints and the plot (default: runs/fashion_mnist)")
    p.add_argument("--resume", action="store_true", help="continue from OUT/checkpoint.pt if it exists")
    p.add_argument("--no-progress", action="store_true", help="no progress bar (one line per epoch only)")
    p.add_argument("--no-plot", action="store_true", help="do not write the PNG of the learning curves")
    p.add_argument("--profile", action="store_true",
                   help="profile one training step after a warm-up step: print ember.profiler's op table "
                        "(sorted by self CPU time), save a Chrome trace as OUT/profile_trace.json, and exit")
    p.add_argument("--tensorboard", metavar="DIR", default=None,
                   help="write TensorBoard scalars to DIR (loss and learning rate per step, losses, accuracy "
                        "and throughput per epoch)")
    p.add_argument("--distributed", action="store_true",
                   help="data-parallel training in --nproc processes (implied when run under the launcher)")
    p.add_argument("--nproc", type=int, default=2,
                   help="processes for --distributed when not already under the launcher (default: 2)")
    return p.parse_args(argv)


def launched():
    """True when ember.distributed.run (or torchrun-style variables) started this process."""
    return "RANK" in os.environ and int(os.environ.get("WORLD_SIZE", "1")) > 1


def relaunch(argv):
    """--distributed outside the launcher: run this script again under it, in --nproc processes."""
    import subprocess  # noqa: PLC0415
    args = sys.argv[1:] if argv is None else list(argv)
    nproc = parse_args(args).nproc
    cmd = [sys.executable, "-m", "ember.distributed.run", "--standalone", "--nproc-per-node", str(nproc),
           os.path.abspath(__file__), *args]
    return subprocess.call(cmd)


class Progress:
    """A tqdm bar when tqdm is installed, else a plain line rewritten in place."""

    def __init__(self, total, desc, disable):
        self.total, self.desc, self.disable, self.n = total, desc, disable, 0
        self.bar = None
        if not disable:
            try:
                from tqdm import tqdm  # noqa: PLC0415
                self.bar = tqdm(total=total, desc=desc, unit="batch", leave=False, dynamic_ncols=True)
            except ImportError:
                pass
        self.last = 0.0

    def update(self, **stats):
        self.n += 1
        if self.disable:
            return
        if self.bar is not None:
            self.bar.set_postfix(stats, refresh=False)
            self.bar.update(1)
        elif time.time() - self.last > 0.5 or self.n == self.total:
            self.last = time.time()
            info = " ".join(f"{k}={v}" for k, v in stats.items())
            sys.stderr.write(f"\r{self.desc} {self.n}/{self.total} {info}   ")
            sys.stderr.flush()

    def close(self):
        if self.bar is not None:
            self.bar.close()
        elif not self.disable:
            sys.stderr.write("\r" + " " * 100 + "\r")


def evaluate(model, loader, dist=None):
    """Mean loss and accuracy; with dist, each process has its share of the test set and the sums
    are all-reduced."""
    model.eval()
    total_loss, correct, n = 0.0, 0, 0
    with torch.no_grad():
        for x, y in loader:
            logits = model(x)
            total_loss += F.cross_entropy(logits, y, reduction="sum").item()
            correct += (logits.argmax(dim=1) == y).sum().item()
            n += y.numel()
    if dist is not None:
        sums = torch.tensor([total_loss, float(correct), float(n)], dtype=torch.float64)
        dist.all_reduce(sums)
        total_loss, correct, n = sums.tolist()
    return total_loss / n, correct / n


def save_plot(history, path):
    try:
        import matplotlib  # noqa: PLC0415
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt  # noqa: PLC0415
    except ImportError:
        print("matplotlib is not installed: no plot written (pip install matplotlib)")
        return None
    epochs = [h["epoch"] for h in history]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
    ax1.plot(epochs, [h["train_loss"] for h in history], "o-", label="train")
    ax1.plot(epochs, [h["test_loss"] for h in history], "o-", label="test")
    ax1.set_xlabel("epoch")
    ax1.set_ylabel("cross-entropy loss")
    ax1.legend()
    ax1.grid(alpha=0.3)
    ax2.plot(epochs, [100 * h["test_acc"] for h in history], "o-", color="tab:green")
    ax2.set_xlabel("epoch")
    ax2.set_ylabel("test accuracy (%)")
    ax2.grid(alpha=0.3)
    fig.suptitle("Ember: CNN on Fashion-MNIST")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def profile_step(model, opt, loader, out_dir, warmup=1):
    """Profiles one training step (fetch, forward, backward, optimizer step) after `warmup` steps."""
    from ember.profiler import ProfilerActivity, profile, record_function  # noqa: PLC0415
    model.train()
    it = iter(loader)

    def step():
        x, y = next(it)
        with record_function("forward"):
            loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        with record_function("backward"):
            loss.backward()
        opt.step()
        return loss

    for _ in range(warmup):
        step()
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True, profile_memory=True,
                 with_flops=True) as prof:
        with record_function("train_step"):
            step()
    print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=40))
    path = os.path.join(out_dir, "profile_trace.json")
    prof.export_chrome_trace(path)
    print(f"Chrome trace of the step: {path} (open it in https://ui.perfetto.dev)")
    return prof


def main(argv=None):
    args = parse_args(argv)
    if args.distributed and not launched():
        sys.exit(relaunch(argv))
    dist = None
    rank, world = 0, 1
    if launched():
        import ember.distributed as dist  # noqa: PLC0415
        dist.init_process_group("gloo")
        rank, world = dist.get_rank(), dist.get_world_size()
        if args.batch_size % world:
            sys.exit(f"error: --batch-size {args.batch_size} is not divisible by the {world} processes")
    lead = rank == 0  # prints, checkpoints and plots
    torch.manual_seed(args.seed)
    if args.threads:
        torch.set_num_threads(args.threads)
    if lead:
        os.makedirs(args.out, exist_ok=True)

    try:
        train_raw = datasets.FashionMNIST(args.data, train=True)
        test_raw = datasets.FashionMNIST(args.data, train=False)
    except RuntimeError as e:
        sys.exit(f"error: {e}")
    train_set = ImageBatches(train_raw.data, train_raw.targets, augment=not args.no_augment)
    test_set = ImageBatches(test_raw.data, test_raw.targets)
    if args.limit_train:
        train_set = Subset(train_set, range(min(args.limit_train, len(train_set))))
    if args.limit_test:
        test_set = Subset(test_set, range(min(args.limit_test, len(test_set))))

    g = torch.Generator()
    g.manual_seed(args.seed)
    sampler = None
    if dist is not None:  # each process its share of every epoch, and of the test set
        from ember.utils.data import DistributedSampler  # noqa: PLC0415
        sampler = DistributedSampler(train_set, num_replicas=world, rank=rank, shuffle=True, seed=args.seed,
                                     drop_last=True)
        test_set = Subset(test_set, range(rank, len(test_set), world))
    train_loader = DataLoader(train_set, batch_size=args.batch_size // world, shuffle=sampler is None,
                              sampler=sampler, drop_last=True, num_workers=args.workers, generator=g,
                              persistent_workers=args.workers > 0)
    test_loader = DataLoader(test_set, batch_size=1000, num_workers=0)
    if len(train_loader) == 0:
        sys.exit("error: fewer training images than one batch (lower --batch-size or raise --limit-train)")

    model = Net(width=args.width)
    net = model  # what is checkpointed: the plain module, so runs of any size can resume each other
    if dist is not None:
        model = nn.parallel.DistributedDataParallel(model)
    if args.optimizer == "adamw":
        opt = torch.optim.AdamW(model.parameters(), lr=args.lr or 3e-3, weight_decay=args.weight_decay)
    else:
        opt = torch.optim.SGD(model.parameters(), lr=args.lr or 0.1, momentum=0.9, nesterov=True,
                              weight_decay=args.weight_decay)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=opt.param_groups[0]["lr"], epochs=args.epochs,
                                                steps_per_epoch=len(train_loader))

    ckpt_path = os.path.join(args.out, "checkpoint.pt")
    start_epoch, history = 0, []
    if args.resume and os.path.exists(ckpt_path):
        ckpt = torch.load(ckpt_path)
        net.load_state_dict(ckpt["model"])
        opt.load_state_dict(ckpt["optimizer"])
        sched.load_state_dict(ckpt["scheduler"])
        start_epoch, history = ckpt["epoch"], ckpt["history"]
        if lead:
            print(f"resumed from {ckpt_path} after epoch {start_epoch}")

    if args.profile:
        if lead:
            profile_step(model, opt, train_loader, args.out)
        if dist is not None:
            dist.destroy_process_group()
        return []
    writer = None
    if args.tensorboard and lead:
        from ember.utils.tensorboard import SummaryWriter  # noqa: PLC0415
        writer = SummaryWriter(args.tensorboard)

    n_params = sum(p.numel() for p in net.parameters())
    if lead:
        procs = f", {world} processes (DDP, {args.batch_size // world} per process)" if dist is not None else ""
        print(f"Fashion-MNIST: {len(train_set)} training / {len(test_loader.dataset) * world} test images; model "
              f"{n_params:,} parameters; {args.optimizer}, batch {args.batch_size}{procs}, {args.workers} workers, "
              f"{torch.get_num_threads()} threads")
    run_start = time.time()
    for epoch in range(start_epoch, args.epochs):
        model.train()
        if sampler is not None:
            sampler.set_epoch(epoch)
        t0 = time.time()
        bar = Progress(len(train_loader), f"epoch {epoch + 1}/{args.epochs}", args.no_progress or not lead)
        running, seen = 0.0, 0
        for x, y in train_loader:
            loss = F.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            step_loss = loss.item()
            running += step_loss * y.numel()
            seen += y.numel()
            if writer is not None:
                step_num = epoch * len(train_loader) + bar.n
                writer.add_scalar("train/loss", step_loss, step_num)
                writer.add_scalar("train/lr", opt.param_groups[0]["lr"], step_num)
            bar.update(loss=f"{running / seen:.4f}", samples_per_s=f"{world * seen / (time.time() - t0):.0f}")
        bar.close()
        train_time = time.time() - t0
        if dist is not None:  # every process's share of the epoch
            sums = torch.tensor([running, float(seen)], dtype=torch.float64)
            dist.all_reduce(sums)
            running, seen = sums.tolist()
        test_loss, test_acc = evaluate(net, test_loader, dist)
        history.append({"epoch": epoch + 1, "train_loss": running / seen, "test_loss": test_loss,
                        "test_acc": test_acc, "seconds": time.time() - t0, "samples_per_s": seen / train_time})
        if lead:
            print(f"epoch {epoch + 1:2d}/{args.epochs}  train loss {running / seen:.4f}  test loss {test_loss:.4f}  "
                  f"test acc {100 * test_acc:.2f}%  {time.time() - t0:.1f}s  ({seen / train_time:.0f} samples/s)",
                  flush=True)
            torch.save({"model": net.state_dict(), "optimizer": opt.state_dict(), "scheduler": sched.state_dict(),
                        "epoch": epoch + 1, "history": history}, ckpt_path)
        if writer is not None:
            for key in ("train_loss", "test_loss", "test_acc", "samples_per_s"):
                writer.add_scalar(f"epoch/{key}", history[-1][key], epoch + 1)
            writer.flush()
    if writer is not None:
        writer.close()

    if lead:
        model_path = os.path.join(args.out, "model.pt")
        torch.save(net.state_dict(), model_path)
        if history:
            print(f"final test accuracy {100 * history[-1]['test_acc']:.2f}% after {len(history)} epochs "
                  f"({time.time() - run_start:.0f}s this run)")
        print(f"model saved to {model_path}; checkpoint {ckpt_path}")
        if not args.no_plot and history:
            plot = save_plot(history, os.path.join(args.out, "curves.png"))
            if plot:
                print(f"learning curves: {plot}")
    if dist is not None:
        dist.destroy_process_group()
    return history


if __name__ == "__main__":
    main()
