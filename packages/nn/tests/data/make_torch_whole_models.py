"""Writes tests/data/torch_whole_models.pt with torch 2.13: whole modules
(pickled classes) with an input and torch's outputs for each."""
import sys
import torch
import torch.nn as nn
torch.manual_seed(0)
cnn = nn.Sequential(nn.Conv2d(1, 4, 3), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2),
                    nn.Dropout2d(0.1), nn.Flatten(), nn.Linear(16, 3), nn.LogSoftmax(dim=1)).eval()
lm = nn.ModuleDict({"emb": nn.Embedding(7, 4), "rnn": nn.LSTM(4, 5, batch_first=True),
                    "gru": nn.GRU(5, 3), "norm": nn.LayerNorm(3)}).eval()
enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(4, 2, 8, dropout=0.0, batch_first=True),
                            num_layers=1, enable_nested_tensor=False).eval()
up = nn.Sequential(nn.ConvTranspose2d(2, 4, 2), nn.PixelShuffle(2), nn.InstanceNorm2d(1),
                   nn.GroupNorm(1, 1), nn.Upsample(scale_factor=2), nn.ReflectionPad2d(1),
                   nn.AdaptiveAvgPool2d(3), nn.Sigmoid()).eval()
x_cnn = torch.randn(2, 1, 6, 6)
tokens = torch.tensor([[1, 2, 3], [4, 5, 6]])
x_enc = torch.randn(2, 5, 4)
x_up = torch.randn(1, 2, 3, 3)
with torch.no_grad():
    h, _ = lm["rnn"](lm["emb"](tokens))
    g, _ = lm["gru"](h)
    out = {"cnn": (cnn, x_cnn, cnn(x_cnn)), "lm": (lm, tokens, lm["norm"](g)),
           "enc": (enc, x_enc, enc(x_enc)), "up": (up, x_up, up(x_up))}
torch.save(out, sys.argv[1])
