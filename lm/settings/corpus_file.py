"""The corpus file: its hash and its text, and a text of your own read for the hash and vocabulary its run's config
records. Where a pinned corpus is, and its download, are lm/model/download.py.

Apart from lm/model/data.py, which needs torch and Lightning, so that a command checks your own text before it loads
either: an empty, binary or too short file is one line in a fraction of a second (see `make bench`'s start-up rows).
"""
import hashlib
import math
from functools import lru_cache
from pathlib import Path

from lm.settings.errors import DataError


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def read_text(path: Path) -> str:
    """A corpus file's text; an empty, binary or non-UTF-8 file is one line."""
    raw = path.read_bytes()
    if not raw.strip():
        raise DataError(f"{path} is empty: a corpus needs UTF-8 text to train on")
    if b"\0" in raw:
        raise DataError(f"{path} is a binary file (it holds NUL bytes), not UTF-8 text")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise DataError(f"{path} is not UTF-8 text (byte {e.start} is not valid UTF-8): save it as UTF-8") from None


def own_text(c, block_size: int) -> tuple[str, int]:
    """Your own text (`data=text data.path=FILE`): the SHA-256 and vocabulary size that the config records, read
    from the file, which must hold one window of block_size + 1 characters in each split. c is a DataConfig or the
    config node it comes from."""
    if not c.path:
        raise DataError(f"data={c.corpus} trains on a file of your own: give data.path=FILE")
    path = Path(c.path).expanduser().resolve()
    if not path.is_file():
        raise DataError(f"data.path={c.path}: no such file")
    stat = path.stat()
    digest, chars, n_train, n_val = _read_own(path, stat.st_mtime_ns, stat.st_size, c.documents, c.val_fraction)
    if c.documents and min(n_train, n_val) < 1:
        raise DataError(f"{path} has {n_train + n_val} non-empty lines: too few documents for a training and a "
                        f"validation split; give it at least {math.ceil(1 / min(c.val_fraction, 1 - c.val_fraction))}")
    if not c.documents and min(n_train, n_val) < block_size + 2:
        need = math.ceil((block_size + 2) / min(c.val_fraction, 1 - c.val_fraction))
        raise DataError(f"{path} has {n_train + n_val:,} characters: too short for one window of "
                        f"model.block_size={block_size} in both splits (the last {c.val_fraction:.0%} is validation); "
                        f"it needs about {need:,}")
    return digest, chars + bool(c.documents)


@lru_cache(maxsize=8)
def _read_own(path: Path, mtime_ns: int, size: int, documents: bool, val_fraction: float):
    """(SHA-256, distinct characters, training size, validation size), once per version of the file: a suite
    configures many runs on it."""
    text = read_text(path)
    if documents:
        docs = [line.strip() for line in text.splitlines() if line.strip()]
        n_val = max(1, int(len(docs) * val_fraction)) if len(docs) > 1 else 0
        return sha256(path), len(set("".join(docs))), len(docs) - n_val, n_val
    split = int((1 - val_fraction) * len(text))
    return sha256(path), len(set(text)), split, len(text) - split
