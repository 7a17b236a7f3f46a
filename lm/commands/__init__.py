"""The command lines: each command's input checked before its heavy imports (cli.py), then its main. The only
layer that reads sys.argv; nothing in the library imports it."""
