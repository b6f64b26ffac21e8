"""What a Keras 3 `.weights.h5` may hold before a byte of its arrays is read: every byte from inside the
file, no more memory than its declared arrays take.

HDF5 follows indirections of its own (soft and external links, external storage, virtual datasets: other
files, a FIFO or /dev/zero included) and inflates a chunk into whatever size the file declares, through as
many filters as the file lists. So a file is read only when (load_weights, before any array is read)
- every link is a hard link, every dataset's bytes are inside the file (no external storage, no virtual
  dataset), and nesting and object counts are those of a model file;
- every dataset is float32 of a fixed shape, and its storage cannot hold more than that shape: a contiguous
  dataset stores at most its own bytes; a chunked one has chunks no larger than the array (a 1 GiB chunk
  for 10 floats is refused), at most MAX_CHUNKS of them, each stored in at most its own bytes plus
  deflate's overhead, through at most one gzip and one shuffle (nothing deflated twice; no other filter);
- each gzip chunk inflates, here (zlib, at most the chunk's own bytes), to exactly the chunk's size before
  HDF5 is asked to read it: HDF5's own inflater grows its buffer as long as the stream goes on.
Keras itself writes every array contiguous and unfiltered (all 87 committed weights files).
"""

from __future__ import annotations

import math
import zlib

import h5py
import numpy as np

from vitcore.model import anatomy

# layer name -> its variables in Keras order (attention: "blockK_attention/query" ...)
Weights = dict[str, list[np.ndarray]]

# HDF5 filters a weights file may use, each at most once: built in, and checkable here (gzip: inflated by zlib
# with a bound before HDF5 reads it; shuffle: reorders bytes). Any other (lzf, whose inflation Python cannot
# bound; a plugin; a user-defined filter) runs code or reads bytes this reader cannot vouch for.
SAFE_FILTERS = {h5py.h5z.FILTER_DEFLATE: "gzip", h5py.h5z.FILTER_SHUFFLE: "shuffle"}
MAX_CHUNKS = 4096  # chunks in a whole file (Keras writes none); each is looked at before the arrays are read
MAX_DEPTH, MAX_ARRAYS, MAX_OBJECTS = 8, 256, 1024  # Keras 3 nests a ViT's ~100 arrays 4 groups deep, in ~150 objects
MAX_VALUES = 1 << 24  # 64 MiB of float32, vitcore.store.files.CEILING; the switch grid's largest model has ~0.2 M


def load_weights(path, expected: dict[str, list[tuple[int, ...]]] | None = None) -> Weights:
    """Every variable of a Keras 3 `.weights.h5` (a path or a file object) by layer name. The file's
    groups are named by layer class (layers/dense_3, each variable at <layer>/vars/<i>); the layer's
    own name is the `name` attribute of its `vars` group, nested layers joined by "/". Only a
    self-contained file is read (ValueError otherwise): hard links only (no soft or external link),
    no dataset stored outside the file (HDF5 external storage, a virtual dataset) or through a filter
    other than SAFE_FILTERS, only float32 arrays, finite values. `expected` ({layer: shapes},
    vitcore.model.anatomy.layer_shapes): the layers it must hold exactly, checked before any array is
    read; without it, at most MAX_VALUES values are read."""
    with h5py.File(path, "r") as file:
        datasets = _self_contained(file)
        arrays: dict[str, dict[int, h5py.Dataset]] = {}
        for where, item in datasets.items():
            parts = where.split("/")
            if parts[0] != "layers" or len(parts) < 4 or parts[-2] != "vars" or not parts[-1].isdigit():
                raise ValueError(f"{where} is not a layer's variable (layers/.../vars/<i>)")
            layer = "/".join(_layer_name(file, "/".join(parts[:end])) for end in range(2, len(parts) - 1))
            arrays.setdefault(layer, {})[int(parts[-1])] = item
        if any(sorted(items) != list(range(len(items))) for items in arrays.values()):
            raise ValueError("a layer's variables are not numbered 0, 1, ...")
        ordered = {name: [items[i] for i in range(len(items))] for name, items in arrays.items()}
        found = {name: [item.shape for item in items] for name, items in ordered.items()}
        values = sum(math.prod(shape) for shapes in found.values() for shape in shapes)
        if expected is not None and found != expected:
            raise ValueError(f"{values:,} values, but not the layers of the config's model "
                             f"({anatomy.shape_difference(expected, found)})")
        if values > MAX_VALUES:
            raise ValueError(f"{values:,} values, over the {MAX_VALUES:,} of any model of this project")
        weights = {name: [np.asarray(item[()], dtype=np.float32) for item in items] for name, items in ordered.items()}
    bad = [name for name, variables in weights.items() if not all(np.isfinite(a).all() for a in variables)]
    if bad:
        raise ValueError(f"weights of {bad[:4]} are not finite (NaN or infinity)")
    return weights


def _self_contained(file: h5py.File) -> dict[str, h5py.Dataset]:
    """{path: dataset} of every array of the file, or ValueError unless every link is a hard link to a
    group or a float32 dataset whose bytes are inside the file, within MAX_DEPTH groups and
    MAX_ARRAYS arrays (MAX_OBJECTS objects). Only metadata is read here."""
    links = []  # (path, link type), from HDF5's own walk (H5Lvisit never crosses a soft or external link)
    file.id.links.visit(lambda name, info: links.append((name, info.type)) if len(links) <= MAX_OBJECTS else 1,
                        info=True)
    if len(links) > MAX_OBJECTS:
        raise ValueError(f"over {MAX_OBJECTS} objects: not a weights file of this project")
    kinds = {}  # path -> object type of every hard-linked object
    h5py.h5o.visit(file.id, lambda name, info: kinds.__setitem__(name, info.type) if len(kinds) <= MAX_OBJECTS else 1,
                   info=True)
    for name, kind in links:
        if kind != h5py.h5l.TYPE_HARD:
            raise ValueError(f"{name.decode(errors='replace')!r} is a soft or external link (never followed)")
        if name.count(b"/") >= MAX_DEPTH:
            raise ValueError(f"groups nested over {MAX_DEPTH} deep")
    datasets, chunks = {}, 0
    for raw, kind in kinds.items():
        if kind == h5py.h5o.TYPE_GROUP:
            continue
        name = raw.decode(errors="replace")
        if kind != h5py.h5o.TYPE_DATASET:
            raise ValueError(f"{name!r} is not a group or an array")
        datasets[name] = item = file[raw]
        if len(datasets) > MAX_ARRAYS or item.dtype != np.float32:
            raise ValueError("not the float32 arrays of a model of this project")
        plist = item.id.get_create_plist()
        if plist.get_layout() == h5py.h5d.VIRTUAL or plist.get_external_count():
            raise ValueError(f"{name} is stored outside the file (never read)")
        filters = [plist.get_filter(i)[0] for i in range(plist.get_nfilters())]
        if any(code not in SAFE_FILTERS for code in filters):
            raise ValueError(f"{name} needs HDF5 filters {filters} (allowed: {', '.join(SAFE_FILTERS.values())})")
        if len(set(filters)) != len(filters):
            raise ValueError(f"{name} is filtered {len(filters)} times ({filters}): each filter at most once")
        chunks += _bounded_storage(name, item, plist, filters)
        if chunks > MAX_CHUNKS:
            raise ValueError(f"over {MAX_CHUNKS} chunks: not a weights file of this project")
    return datasets


def _bounded_storage(name: str, item: h5py.Dataset, plist, filters: list[int]) -> int:
    """The number of chunks of `item` (0 when not chunked), or ValueError unless reading it can produce
    no more bytes than its declared shape holds (see the module docstring). Only metadata and the stored
    (compressed) chunks are read, each at most its own declared size."""
    if item.maxshape != item.shape:
        raise ValueError(f"{name} may grow (shape {item.shape}, up to {item.maxshape}): not a saved array")
    itemsize, layout = item.dtype.itemsize, plist.get_layout()
    nbytes = itemsize * math.prod(item.shape)
    if layout == h5py.h5d.COMPACT:  # inside the object header, at most 64 KB
        return 0
    if layout == h5py.h5d.CONTIGUOUS:
        if item.id.get_storage_size() > nbytes:
            raise ValueError(f"{name} stores {item.id.get_storage_size():,} bytes for {nbytes:,}")
        return 0
    if layout != h5py.h5d.CHUNKED:
        raise ValueError(f"{name} has an HDF5 layout this reader does not know ({layout})")
    chunk = plist.get_chunk()
    if len(chunk) != len(item.shape) or any(size > max(dim, 1) for size, dim in zip(chunk, item.shape)):
        raise ValueError(f"{name} is stored in chunks of {chunk}, larger than its shape {item.shape}")
    chunk_bytes = itemsize * math.prod(chunk)
    most = math.prod(-(-dim // size) for dim, size in zip(item.shape, chunk))  # chunks the shape can need
    count = item.id.get_num_chunks()
    if count > min(most, MAX_CHUNKS):
        raise ValueError(f"{name} has {count:,} chunks, its shape {item.shape} at most {most:,}")
    stored_most = chunk_bytes + chunk_bytes // 1000 + 64  # zlib's worst expansion: 5 bytes per 16 KB + header
    deflate = filters.index(h5py.h5z.FILTER_DEFLATE) if h5py.h5z.FILTER_DEFLATE in filters else None
    for index in range(count):
        info = item.id.get_chunk_info(index)
        if info.size > stored_most:
            raise ValueError(f"{name} stores a chunk in {info.size:,} bytes, for {chunk_bytes:,}")
        if deflate is not None and not info.filter_mask & (1 << deflate):
            _, raw = item.id.read_direct_chunk(info.chunk_offset)
            inflate = zlib.decompressobj()
            try:
                size = len(inflate.decompress(raw, chunk_bytes))
            except zlib.error:
                raise ValueError(f"{name} has a chunk that is not a deflate stream") from None
            if size != chunk_bytes or not inflate.eof or inflate.unconsumed_tail:
                raise ValueError(f"{name} has a chunk that does not inflate to its {chunk_bytes:,} bytes "
                                 "(a decompression bomb, or damaged)")
    return count


def _layer_name(file: h5py.File, group: str) -> str:
    """The name Keras gave the layer saved in `group`: its vars group's `name` attribute, else the group's own."""
    variables = file.get(group + "/vars")
    name = variables.attrs.get("name", group.rsplit("/", 1)[-1]) if isinstance(variables, h5py.Group) else \
        group.rsplit("/", 1)[-1]
    if not isinstance(name, str) or not name.isprintable() or not 0 < len(name) <= 64:
        raise ValueError(f"{group} has a layer name that is not one: {str(name)[:64]!r}")
    return name
