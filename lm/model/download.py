"""Where a run's corpus file is: data.path, $TINYGPT_DATA_DIR, or the cache, where a pinned corpus is downloaded
from its URL and held to its SHA-256. No torch: the network and the file system only."""
import hashlib
import os
import urllib.request
from pathlib import Path

from lm.settings.corpus_file import sha256
from lm.settings.errors import DataError
from lm.settings.schema import DataConfig


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
