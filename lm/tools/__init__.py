"""Tools around the harness: make bench, the plain PyTorch loop it is held against, the collector's clock and make
gpu-check. They use the library; the library never imports them."""
