"""The corpus file: where it is (data.path, $TINYGPT_DATA_DIR or the pinned download), its hash and its text.

Apart from lm/model/data.py, which needs torch and Lightning, so that a command checks its corpus before it loads either:
a corrupt, empty or missing file is one line in a fraction of a second (see `make bench`'s start-up rows).
"""
import hashlib
import math
import os
import urllib.request
from functools import lru_cache
from pathlib import Path

from lm.spec.errors import DataError
from lm.spec.schema import DataConfig


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def locate(c: DataConfig) -> Path:
    """The verified corpus file: from data.path, $TINYGPT_DATA_DIR or the cache, downloading it if need be."""
    if c.path:
        path, where = Path(c.path).expanduser(), "data.path"
    elif os.environ.get("TINYGPT_DATA_DIR"):
        path, where = Path(os.environ["TINYGPT_DATA_DIR"]).expanduser() / c.filename, "$TINYGPT_DATA_DIR"
    else:
        path, where = Path(c.cache_dir).expanduser() / c.filename, None
    # data.path on a pinned corpus must hold that corpus: a text of one's own is its own data group
    own = f"; a text of your own is data=text data.path={c.path}" if where == "data.path" and c.pinned else ""
    if not path.is_file():
        if where:
            raise DataError(f"{c.filename} not found at {path} (from {where}); fix {where} or unset it to "
                            f"download{own}")
        download(c, path)
    digest = sha256(path)
    if digest != c.sha256:
        if not c.pinned:  # your own text, hashed when the run was configured
            raise DataError(f"{path} changed since the run was configured (SHA-256 {digest[:12]}…, then "
                            f"{c.sha256[:12]}…): start it again")
        raise DataError(f"{path} has SHA-256 {digest[:12]}…, expected {c.sha256[:12]}…: the file is corrupt or "
                        f"not {c.corpus}; delete it{' (the next run downloads it again)' if not where else ''} "
                        f"or point data.path at a good copy{own}")
    return path


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


def download(c: DataConfig, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    part = path.with_suffix(".part")
    try:
        with urllib.request.urlopen(c.url, timeout=30) as response:
            part.write_bytes(response.read())
    except OSError as e:
        part.unlink(missing_ok=True)
        raise DataError(f"could not download {c.corpus} from {c.url} ({getattr(e, 'reason', e)}); with no network, "
                        f"put {c.filename} in {path.parent} or set TINYGPT_DATA_DIR to a folder holding it") from None
    if hashlib.sha256(part.read_bytes()).hexdigest() != c.sha256:
        part.unlink()
        raise DataError(f"the download from {c.url} does not match the pinned SHA-256 {c.sha256[:12]}…; "
                        f"put a verified {c.filename} in {path.parent}")
    part.replace(path)  # only a verified file ever has the final name
