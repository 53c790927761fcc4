"""The same small model trained with PyTorch Lightning on a GPU, over ``ShardDataset``.

``python -m corpus.gen.lightning_run --fault cuda --num-workers 2``: Lightning's own output (its
accelerator banner, ``LOCAL_RANK: 0 - CUDA_VISIBLE_DEVICES``, the model summary, its progress bar)
around the failure, as users paste it. Lightning moves the model to the GPU before the fit loop
starts the loader's workers, so CUDA is initialised in the main process when they fork. Needs a
GPU and ``lightning`` (or ``pytorch_lightning``); ``corpus.gen`` skips it where there is no GPU.
"""
import argparse

import torch
from torch import nn
from torch.utils.data import DataLoader

try:
    import lightning as L
except ImportError:  # the older package name
    import pytorch_lightning as L

from corpus.gen.datasets import FAULTS, ShardDataset


class Net(L.LightningModule):
    def __init__(self, lr=0.05):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 2))
        self.loss_fn = nn.CrossEntropyLoss()
        self.lr = lr

    def training_step(self, batch, batch_idx):
        loss = self.loss_fn(self.net(batch["x"]), batch["y"])
        self.log("train_loss", loss, prog_bar=True)
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=self.lr, momentum=0.9)


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m corpus.gen.lightning_run")
    p.add_argument("--fault", choices=FAULTS, default="none")
    p.add_argument("--num-workers", type=int, default=2)
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--samples", type=int, default=512)
    args = p.parse_args(argv)
    L.seed_everything(0)
    loader = DataLoader(ShardDataset(n=args.samples, fault=args.fault), batch_size=16, shuffle=True,
                        num_workers=args.num_workers)
    trainer = L.Trainer(accelerator="gpu", devices=1, max_epochs=args.epochs, logger=False,
                        enable_checkpointing=False, log_every_n_steps=8)
    trainer.fit(Net(), loader)


if __name__ == "__main__":
    main()
