"""MNIST digit pairs (``source.kind: mnist``): training and test images pooled, two digits kept.

Files (cache and mirror layout ``mnist/<file>``, checksums below, from ``../shared/datasets/MANIFEST.md`` and the
published MNIST values):

- ``t10k-images-idx3-ubyte.gz``, ``t10k-labels-idx1-ubyte.gz``, ``train-labels-idx1-ubyte.gz``: the originals;
- the training images either as the original ``train-images-idx3-ubyte.gz`` (cache, mirror or download), or as
  the 20 ConvNetJS batch PNGs ``convnetjs-train-png/mnist_batch_{0..19}.png`` (the mirror's form): grayscale,
  784 wide x 3000 high, row k of batch b = training image 3000*b + k. Decoded and stacked behind the 16-byte IDX
  header they give the uncompressed ``train-images-idx3-ubyte`` exactly, whose SHA-256 is checked on every load
  whichever form was used.

Decoding the PNGs takes about half a second, so no decoded copy is written to disk; the decoded images are kept
in memory for the process (one entry) so that the four pairs share them.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from forestlab.datasets._base import Dataset, as_list, check_shape, make_dataset, require
from forestlab.datasets._fetch import FileSpec, fetch_files, resolve_mirror
from forestlab.errors import DatasetError

DEFAULT_URLS = ("https://storage.googleapis.com/cvdf-datasets/mnist/", "https://ossci-datasets.s3.amazonaws.com/mnist/")
TEST_IMAGES = ("mnist/t10k-images-idx3-ubyte.gz", "8d422c7b0a1c1c79245a5bcf07fe86e33eeafee792b84584aec276f5a2dbc4e6")
TEST_LABELS = ("mnist/t10k-labels-idx1-ubyte.gz", "f7ae60f92e00ec6debd23a6088c31dbd2371eca3ffa0defaefb259924204aec6")
TRAIN_LABELS = ("mnist/train-labels-idx1-ubyte.gz", "3552534a0a558bbed6aed32b30c495cca23d567ec52cac8be1a0730e8010255c")
TRAIN_IMAGES = ("mnist/train-images-idx3-ubyte.gz", "440fcabf73cc546fa21475e81ea370265605f56be210a4024d2ca8f203523609")
# SHA-256 of the uncompressed train-images-idx3-ubyte (47,040,016 bytes; md5 6bbc9ace898e44ae57da46a324031adb).
TRAIN_IMAGES_IDX_SHA256 = "ba891046e6505d7aadcbbe25680a0738ad16aec93bde7f9b65e87a2fc25776db"
PNG_DIR = "mnist/convnetjs-train-png"
PNG_SHA256 = (
    "54d39dfaf0057158346bcabe733a4a93a8a02595adf2496abe8123c7eed85457",
    "de5ff3ee0fb8052d80c8124a61dbd9896a10cec11237ceae61cd4d8053288bb0",
    "14578a89cd497e00403c345c7b6523995f84f7a30561de28b238483364f6c1cd",
    "2d6161d591840118584158b98df72203b16373a92602a1597d837333181de55b",
    "cd84689bd8dfc3737b821097fc604d3b7e8bc125d3cd6a3bb30a7507ef4d7ce5",
    "abf32f587873280bb38c1593d4555b74eac743156569a2e380effd944732102c",
    "20ae1fc9d7381ae9f3f8e93e6f717a829b9c5f2648ab90d859359c34f6df370b",
    "b601118422f7c8cbea0a8daf008b10bbe10c17a3e3162d69db7068bd0f81aadb",
    "b4f82b66b9f155c7ee00e1265ad3f6d6fa10dcf48134f5b7ec650a719e0c07b9",
    "3578cf8893f90d94909250faa124d26df2a015a936bf38e93c8294ea262c74f4",
    "0e115b0b2618bd472aec7aca32a0614ff6804a00c91414ca1ab8926bec1d9d82",
    "47b3c7da91a1a6f6d2be559b7b34144a2b7098dc6e131432b0bed4607f95e5cb",
    "708bb164b1a0fb3ab07ebc57e63ba324af3f311d57f0849a1e105f4ae90f11ad",
    "708bffa630556b78d1954b66198bbb706afefce7c96268970b67c69c1a71968e",
    "1dae86b58155d10c39c9a1103851cc3e830ae4f1d6d8d436dcc8aea24f99eff8",
    "f4e1ba671eaa6cde349d21be84b53967aba199e51dc43358b4ee0defb62a4018",
    "1a6e9e424fab5c1ab0f6df455e8dbda94a132db99a199f27c576babc15b21317",
    "bc37aca4047ce38258e1cce2357d0267dd2bdce930743dd111ee9944081b5cd4",
    "c1a0167b5a8489408ec955a5c3b82f8b9238174ba63006758bd1d8352dac2b98",
    "dcc5166de8a1155640ea4afd5bd4cfef547608d3dea82aeade74bc5e03927dcd",
)
N_TRAIN, N_TEST, SIDE = 60000, 10000, 28
BATCH_ROWS = 3000

_raw_lock = threading.Lock()
_raw: dict[tuple[str, ...], tuple[np.ndarray, np.ndarray]] = {}


def png_specs() -> list[FileSpec]:
    """The 20 ConvNetJS batch PNGs (no download URL: they exist only in a mirror or a cache)."""
    return [FileSpec(f"{PNG_DIR}/mnist_batch_{b}.png", sha) for b, sha in enumerate(PNG_SHA256)]


def mnist_files(cfg: Mapping[str, Any] | None = None) -> list[str]:
    """The original MNIST files (relative paths); see the module docstring for the PNG alternative."""
    return [rel for rel, _ in (TEST_IMAGES, TEST_LABELS, TRAIN_LABELS, TRAIN_IMAGES)]


def idx_header(n: int, magic: int = 0x00000803) -> bytes:
    """The IDX header of ``n`` 28x28 images (or of ``n`` labels with magic 0x801)."""
    dims = [n, SIDE, SIDE] if magic == 0x00000803 else [n]
    return np.array([magic, *dims], dtype=">u4").tobytes()


def read_idx(data: bytes, magic: int, count: int, label: str) -> np.ndarray:
    """Images (count, 784) or labels (count,) as uint8 from IDX bytes, checking the header."""
    head_len = 16 if magic == 0x00000803 else 8
    if data[:head_len] != idx_header(count, magic) or len(data) != head_len + count * (784 if head_len == 16 else 1):
        raise DatasetError(f"{label} is not an IDX file of {count} {'images' if head_len == 16 else 'labels'}")
    arr = np.frombuffer(data, dtype=np.uint8, offset=head_len)
    return arr.reshape(count, 784) if head_len == 16 else arr


def decode_png_batches(paths: list[Path]) -> np.ndarray:
    """The 60000 x 784 uint8 training images from the 20 batch PNGs, in order."""
    from PIL import Image

    out = np.empty((N_TRAIN, SIDE * SIDE), dtype=np.uint8)
    for b, path in enumerate(paths):
        with Image.open(path) as img:
            if img.mode != "L" or img.size != (SIDE * SIDE, BATCH_ROWS):
                raise DatasetError(f"{path} is not a {SIDE * SIDE} x {BATCH_ROWS} grayscale PNG "
                                   f"(mode {img.mode}, size {img.size})")
            out[b * BATCH_ROWS:(b + 1) * BATCH_ROWS] = np.asarray(img, dtype=np.uint8)
    return out


def _train_image_specs(root: Path, mirror_root: Path | None, urls: tuple[str, ...]) -> list[FileSpec]:
    """The form the training images will come from: the .gz if the cache or mirror has it, else the PNGs if
    every batch is in the cache or the mirror, else the .gz (downloaded, or reported missing)."""
    gz = FileSpec(TRAIN_IMAGES[0], TRAIN_IMAGES[1], tuple(u.rstrip("/") + "/" + Path(TRAIN_IMAGES[0]).name
                                                          for u in urls))
    pngs = png_specs()
    roots = [root] + ([mirror_root] if mirror_root is not None else [])
    if (root / gz.rel).is_file():
        return [gz]
    if all((root / p.rel).is_file() for p in pngs):
        return pngs
    if mirror_root is not None and (mirror_root / gz.rel).is_file():
        return [gz]
    if all(any((r / p.rel).is_file() for r in roots) for p in pngs):
        return pngs
    return [gz]


def load_raw(name: str, *, data_dir: str | os.PathLike[str], mirror: str | os.PathLike[str] | None,
             download: bool, urls: tuple[str, ...] = DEFAULT_URLS,
             fresh: bool = False) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """All 70000 images (uint8, training then test) and labels, verified; plus the relative files used.

    The result is kept in memory for the process (one entry); ``fresh`` reads and verifies the files again."""
    root = Path(os.path.expanduser(str(data_dir))).resolve()
    mirror_root = resolve_mirror(mirror)
    key = (str(root), str(mirror_root))
    base = [FileSpec(rel, sha, tuple(u.rstrip("/") + "/" + Path(rel).name for u in urls))
            for rel, sha in (TEST_IMAGES, TEST_LABELS, TRAIN_LABELS)]
    train_specs = _train_image_specs(root, mirror_root, urls)
    used = [s.rel for s in base + train_specs]
    with _raw_lock:
        if key in _raw and not fresh:
            return (*_raw[key], used)
    try:
        paths = fetch_files(name, base + train_specs, data_dir=root, mirror=mirror_root, download=download)
    except DatasetError as exc:
        if "needs" in str(exc) and train_specs[0].rel == TRAIN_IMAGES[0]:
            raise DatasetError(f"{exc} (a mirror may hold the training images as {PNG_DIR}/mnist_batch_0.png .. "
                               "mnist_batch_19.png instead of mnist/train-images-idx3-ubyte.gz)") from None
        raise
    test_images = read_idx(gzip.decompress(paths[0].read_bytes()), 0x803, N_TEST, TEST_IMAGES[0])
    test_labels = read_idx(gzip.decompress(paths[1].read_bytes()), 0x801, N_TEST, TEST_LABELS[0])
    train_labels = read_idx(gzip.decompress(paths[2].read_bytes()), 0x801, N_TRAIN, TRAIN_LABELS[0])
    if len(train_specs) == 1:
        raw = gzip.decompress(paths[3].read_bytes())
        train_images = read_idx(raw, 0x803, N_TRAIN, TRAIN_IMAGES[0])
        digest = hashlib.sha256(raw).hexdigest()
    else:
        train_images = decode_png_batches(paths[3:])
        h = hashlib.sha256(idx_header(N_TRAIN))
        h.update(train_images.tobytes())
        digest = h.hexdigest()
    if digest != TRAIN_IMAGES_IDX_SHA256:
        raise DatasetError(f"dataset '{name}': the decoded MNIST training images have SHA-256 {digest}, expected "
                           f"{TRAIN_IMAGES_IDX_SHA256} (that of the uncompressed train-images-idx3-ubyte)")
    images = np.concatenate([train_images, test_images])
    labels = np.concatenate([train_labels, test_labels])
    images.flags.writeable = False
    labels.flags.writeable = False
    with _raw_lock:
        _raw.clear()  # one entry: the images of one cache/mirror pair (55 MB)
        _raw[key] = (images, labels)
    return images, labels, used


def load_mnist(cfg: Mapping[str, Any], *, name: str, data_dir: str | os.PathLike[str],
               mirror: str | os.PathLike[str] | None, download: bool,
               fresh: bool = False) -> tuple[Dataset, list[str]]:
    """A binary digit pair (``digits: [a, b]``, a = +1) or a multiclass subset of the pooled 70000 images."""
    source = cfg["source"]
    digits_cfg = require(source, "digits", "source.", name)
    digits = list(range(10)) if digits_cfg == "all" else [int(d) for d in as_list(digits_cfg)]
    if len(set(digits)) != len(digits) or not all(0 <= d <= 9 for d in digits):
        raise DatasetError(f"dataset '{name}': `source.digits` must list distinct digits 0-9, got {digits_cfg!r}")
    task = cfg["task"]
    if task == "binary" and len(digits) != 2:
        raise DatasetError(f"dataset '{name}': a binary MNIST task needs two digits (first = positive), "
                           f"got {digits}")
    urls = tuple(str(u) for u in as_list(source.get("url"))) or DEFAULT_URLS
    images, labels, used = load_raw(name, data_dir=data_dir, mirror=mirror, download=download, urls=urls,
                                    fresh=fresh)
    mask = np.isin(labels, digits)
    X = images[mask].astype(np.float64)
    kept = labels[mask]
    if task == "binary":
        y = np.where(kept == digits[0], 1, -1)
        classes = (str(digits[1]), str(digits[0]))
    else:
        index = np.full(10, -1)
        index[digits] = np.arange(len(digits))
        y = index[kept]
        classes = tuple(str(d) for d in digits)
    check_shape(name, X, cfg.get("shape"), "the MNIST files")
    names = [f"px{r}_{c}" for r in range(SIDE) for c in range(SIDE)]
    return make_dataset(name, X, y, task, names, classes), used


def clear_raw_cache() -> None:
    """Forget the decoded images kept in memory."""
    with _raw_lock:
        _raw.clear()


def reconstructed_train_idx(images: np.ndarray) -> bytes:
    """The uncompressed ``train-images-idx3-ubyte`` bytes of the first 60000 pooled images (for checks)."""
    buf = io.BytesIO()
    buf.write(idx_header(N_TRAIN))
    buf.write(np.ascontiguousarray(images[:N_TRAIN]).tobytes())
    return buf.getvalue()
