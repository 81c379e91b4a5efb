#!/usr/bin/python3
"""Extra HDF5 files for the reader's own tests (what test/fixtures/ does not cover), with an h5py oracle.

  /usr/bin/python3 src/io/hdf5/testdata/make-testdata.py && npx biome format --write src/io/hdf5/testdata

Covers: dense groups (fractal heap, name-index v2 B-tree of depth >= 1), soft and external links, a user block
(base address 512), superblocks v0/v2/v3, 4-byte addresses, a version-1 B-tree of depth 2, paged and sparse fixed and
extensible arrays, an extensible array whose unlimited dimension is not the first, a version-2 B-tree of
depth 2, big-endian, signed and float data, fill values, a committed datatype. Deterministic (no timestamps).
oracle.json has the schema of test/fixtures/oracle.json; "index" is what each dataset was written to use.
"""
import hashlib
import json
import os
import zlib

import h5py
import numpy as np
from h5py import h5d, h5f, h5p

HERE = os.path.dirname(os.path.abspath(__file__))
INDEX = {}  # (file, path) -> intended chunk index


def rng(s):
    return np.random.default_rng(abs(hash(s)) % 2**32 if False else sum(map(ord, s)))


def dset(g, name, index=None, **kw):
    d = g.create_dataset(name, track_times=False, **kw)
    INDEX[(os.path.basename(g.file.filename), d.name)] = index
    return d


def new(name, libver=None, fcpl=None, **kw):
    path = os.path.join(HERE, name)
    if os.path.exists(path):
        os.remove(path)
    if fcpl is not None:
        fapl = h5p.create(h5p.FILE_ACCESS)
        if libver:
            fapl.set_libver_bounds(*libver)
        fid = h5f.create(path.encode(), h5f.ACC_TRUNC, fcpl=fcpl, fapl=fapl)
        return h5py.File(fid)
    return h5py.File(path, "w", libver=libver, track_order=False, **kw)


def data(name, shape, dtype):
    a = rng(name).integers(0, 1000, size=shape)
    return a.astype(dtype)


def write_all():
    # Dense groups, links of every kind, superblock v3.
    with new("dense_groups.h5", libver="latest") as h:
        g = h.create_group("many", track_order=False)
        for i in range(30):
            dset(g, f"d{i:02d}", data=np.full((2,), i, np.int16))
        dset(g, "frames", "fixed-array", data=data("frames", (4, 8, 8), np.uint16), chunks=(1, 8, 8))
        g["soft_to_frames"] = h5py.SoftLink("/many/frames")
        g["relative_soft"] = h5py.SoftLink("d03")
        g["ext"] = h5py.ExternalLink("other_file.h5", "/entry/data/data")
        links = h.create_group("links")
        for i in range(2000):  # soft links only: a big fractal heap and a deep name index, little else
            links[f"link_{i:05d}_with_a_longer_name"] = h5py.SoftLink(f"/many/d{i % 30:02d}")
    # User block of 512 bytes: every address is relative to byte 512.
    with new("userblock.h5", userblock_size=512) as h:
        dset(h, "gzip", "btree-v1", data=data("ub", (6, 16, 16), np.uint16), chunks=(1, 16, 16), compression="gzip")
        dset(h, "contig", data=data("ubc", (5, 7), np.int32))
    # 4-byte addresses and lengths (superblock v0): an old-style group of several symbol table nodes, and a
    # chunk B-tree of depth 2 (more than 64 leaves).
    fcpl = h5p.create(h5p.FILE_CREATE)
    fcpl.set_sizes(4, 4)
    with new("small_offsets.h5", fcpl=fcpl) as h:
        dset(h, "deep", "btree-v1", data=data("deep", (4500,), np.uint8), chunks=(1,))
        dset(h, "gzip2d", "btree-v1", data=data("deep2", (20, 21), np.float64), chunks=(3, 4), compression="gzip")
        grp = h.create_group("old_style")
        for i in range(24):
            dset(grp, f"s{i:02d}", data=np.arange(i + 1, dtype=np.uint8))
        grp["soft"] = h5py.SoftLink("/old_style/s05")
    # Superblock v2 (libver v108 low bound).
    with new("superblock_v2.h5", libver=("v108", "v110")) as h:
        dset(h, "x", "btree-v1", data=data("v2", (3, 4), np.uint32), chunks=(1, 4))
    # Newer chunk indexes, paged and sparse; superblock v3.
    with new("latest_indexes.h5", libver="latest") as h:
        d = dset(h, "ea_paged_sparse", "extensible-array", shape=(100000,), maxshape=(None,), chunks=(1,),
                 dtype=np.uint8, fillvalue=9)
        d[0:20] = np.arange(20, dtype=np.uint8)
        d[90000:90010] = 7
        d[95000] = 5
        d = dset(h, "ea_swizzled", "extensible-array", shape=(3, 50), maxshape=(3, None), chunks=(1, 5),
                 dtype=np.uint16)
        d[...] = data("sw", (3, 50), np.uint16)
        d = dset(h, "fa_paged_sparse", "fixed-array", shape=(3000,), chunks=(1,), dtype=np.uint16, fillvalue=3)
        d[0:10] = 1
        d[2500:2510] = 2
        d = dset(h, "bt2_deep", "btree-v2", shape=(150, 150), maxshape=(None, None), chunks=(2, 2), dtype=np.uint8)
        d[...] = data("bt2", (150, 150), np.uint8)
        d = dset(h, "bt2_filtered_partial", "btree-v2", shape=(10, 33), maxshape=(None, None), chunks=(4, 8),
                 dtype=np.int16, compression="gzip", shuffle=True, fillvalue=-5)
        d[0:6, 0:20] = data("bfp", (6, 20), np.int16)
        dset(h, "big_endian", "fixed-array", data=data("be", (4, 6), ">u2"), chunks=(2, 3), compression="gzip")
        dset(h, "float32", "single", data=data("f32", (5, 5), np.float32) / 7, chunks=(5, 5))
        h["named_u16"] = np.dtype("<u2")
        dset(h, "committed", data=data("cm", (3, 3), np.uint16), dtype=h["named_u16"])
        d = dset(h, "fill_int16", "fixed-array", shape=(8, 8), chunks=(4, 4), dtype=np.int16, fillvalue=-5)
        d[0:4, 4:8] = 11


# ------------------------------------------------------------------------------------------ oracle


def describe(fname, ds):
    dcpl = ds.id.get_create_plist()
    layout = {h5d.CHUNKED: "chunked", h5d.CONTIGUOUS: "contiguous", h5d.COMPACT: "compact"}[dcpl.get_layout()]
    filters = [dcpl.get_filter(i) for i in range(dcpl.get_nfilters())]
    a = ds[()]
    r = {"shape": list(ds.shape), "maxshape": list(ds.maxshape), "dtype": ds.dtype.newbyteorder("<").name,
         "chunks": list(ds.chunks) if ds.chunks else None, "layout": layout,
         "index": INDEX.get((fname, ds.name)) if layout == "chunked" else None,
         "filters": [{"id": f[0], "cd_values": list(f[2])} for f in filters],
         "num_chunks": None, "chunk_info": None, "readable": True,
         "sha256": hashlib.sha256(np.ascontiguousarray(a.astype(a.dtype.newbyteorder("<"))).tobytes()).hexdigest()}
    if layout == "chunked":
        # HDF5 1.10's get_chunk_info(i) and get_chunk_info_by_coord both misplace the chunks of an extensible
        # array whose unlimited dimension is not the first. For unfiltered datasets each chunk's coordinates
        # are therefore checked against its bytes in the file, and taken from a unique content match if wrong.
        n = ds.id.get_num_chunks()
        infos = [ds.id.get_chunk_info(i) for i in range(n)]
        raw = open(os.path.join(HERE, fname), "rb").read()
        grid = [-(-s // c) for s, c in zip(ds.shape, ds.chunks)]
        full = [np.ndindex(*grid)] and list(np.ndindex(*grid))

        def content(idx):
            sl = tuple(slice(i * c, (i + 1) * c) for i, c in zip(idx, ds.chunks))
            part = a[sl]
            if part.shape != tuple(ds.chunks):
                return None
            return np.ascontiguousarray(part).tobytes()

        rows = []
        for c in infos:
            off = list(c.chunk_offset)
            if not filters:
                stored = raw[c.byte_offset:c.byte_offset + c.size]
                idx = tuple(o // k for o, k in zip(off, ds.chunks))
                if any(i >= g for i, g in zip(idx, grid)) or content(idx) != stored:
                    hits = [j for j in full if content(j) == stored]
                    assert len(hits) == 1, (ds.name, off)
                    off = [i * k for i, k in zip(hits[0], ds.chunks)]
            # HDF5 1.10 reports chunk addresses relative to the user block; the oracle holds absolute offsets.
            at = c.byte_offset + ds.file.userblock_size
            if filters and filters[-1][0] == 1:  # the deflate stream really starts there
                zlib.decompressobj().decompress(raw[at:at + c.size])
            rows.append([off, at, c.size, c.filter_mask])
        r["num_chunks"] = n
        r["chunk_info"] = rows
    if ds.dtype.byteorder == ">":
        r["little_endian"] = False
    return r


def describe_file(name):
    out = {"size": os.path.getsize(os.path.join(HERE, name)), "datasets": {}, "external_links": {}}
    with h5py.File(os.path.join(HERE, name), "r") as f:
        def walk(g, prefix):
            for k in g:
                p, link = f"{prefix}/{k}", g.get(k, getlink=True)
                if isinstance(link, h5py.ExternalLink):
                    out["external_links"][p] = [link.filename, link.path]
                elif isinstance(link, h5py.HardLink):
                    o = g[k]
                    if isinstance(o, h5py.Group):
                        walk(o, p)
                    elif isinstance(o, h5py.Dataset):
                        out["datasets"][p] = describe(name, o)
        walk(f, "")
    return out


def dump(o, ind):
    """Indented JSON with chunk_info rows and lists of scalars on one line each."""
    pad = " " * ind
    if isinstance(o, dict) and o:
        return "{\n" + ",\n".join(f"{pad} {json.dumps(k)}: {dump(v, ind + 1)}" for k, v in o.items()) + f"\n{pad}}}"
    if isinstance(o, list) and o and all(isinstance(x, list) for x in o):
        return "[\n" + ",\n".join(f"{pad} {json.dumps(x)}" for x in o) + f"\n{pad}]"
    return json.dumps(o)


if __name__ == "__main__":
    write_all()
    names = sorted(x for x in os.listdir(HERE) if x.endswith(".h5"))
    oracle = {"generator": "src/io/hdf5/testdata/make-testdata.py", "h5py": h5py.version.version,
              "hdf5": h5py.version.hdf5_version, "files": {n: describe_file(n) for n in names}}
    with open(os.path.join(HERE, "oracle.json"), "w") as fh:
        fh.write(dump(oracle, 0) + "\n")
