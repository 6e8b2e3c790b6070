"""fxgen's library: torch 1.13 tracing into torch.export-shaped programs and the
PT2 archive writer (schema 8.20, torch >= 2.9 layout), plus the torch >= 2.6
torch.export path. See tools/fxgen/README.md."""
