#!/usr/bin/python3
"""Deterministic HDF5 fixtures + independent oracle (h5py) for stemflow.

  /usr/bin/python3 scripts/make_fixtures.py            # write test/fixtures/ and public/demo/
  /usr/bin/python3 scripts/make_fixtures.py --out DIR  # write DIR/fixtures/ and DIR/demo/ instead
  /usr/bin/python3 scripts/make_fixtures.py --check    # re-read committed files, diff against oracle.json

Needs Debian python3-h5py, python3-hdf5plugin, python3-numpy and bitshuffle (HDF5 plugin 32008).
See test/fixtures/README.md for the file list and the oracle schema.
"""
import argparse
import hashlib
import json
import os
import sys
import zlib

import h5py
import hdf5plugin
import numpy as np
from h5py import h5d, h5f, h5p, h5s, h5t, h5z

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fixture_data as fd  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BSLZ4 = hdf5plugin.Bitshuffle(cname="lz4")
BSZSTD = hdf5plugin.Bitshuffle(cname="zstd", clevel=3)
DS = "/entry/data/data"
MASK = "/entry/instrument/detector/detectorSpecific/pixel_mask"
# Filters stemflow decodes: bitshuffle without compression or with LZ4, deflate, shuffle.
SUPPORTED = {1, 2, 32008}
ACQS = {  # name -> (dir key, stem, scan, detector, shard sizes, seed)
    "arina": ("fixtures", "arina", (6, 10), (96, 96), (24, 24, 12), 1),
    "demo": ("demo", "demo", (48, 48), (96, 96), (1500, 804), 7),
}
# Values written to the masters, in the file's units; the oracle gets SI (wavelength in metres).
WAVELENGTH_A = 0.025079  # 200 kV electrons
CALIB = {"x_pixel_size": (1e-4, "m"), "y_pixel_size": (1e-4, "m"), "detector_distance": (0.12, "m"),
         "count_time": (9.5e-5, "s"), "frame_time": (1e-4, "s"), "beam_center_x": (47.3, "pixel"),
         "beam_center_y": (47.8, "pixel"), "sensor_thickness": (4.5e-4, "m")}


def seed(name):
    return np.random.default_rng(zlib.crc32(name.encode()))


def dset(g, name, **kw):
    return g.create_dataset(name, track_times=False, **kw)


# ------------------------------------------------------------------------------------------ writers


def acquisition_data(name):
    _, stem, scan, det, shards, s = ACQS[name]
    rng = np.random.default_rng(s)
    sample = fd.smooth_sample(*scan) if name == "arina" else fd.demo_sample(*scan, rng)
    data = fd.render_frames(rng, sample, det, np.uint16, **({} if name == "arina" else {"bf": 11.0, "bragg": 2.5}))
    mask = np.zeros(det, np.uint32)
    h, w = det
    for (r, c), bit in zip([(0, 0), (3, 70), (40, 11), (47, 48), (60, 90), (95, 95), (88, 2)],
                           [1, 2, 8, 16, 2, 1, 8 | 16]):
        mask[r * h // 96, c * w // 96] = bit
    if name == "arina":  # exact counts: a 65535 at the first frame of shard 2, a few 256..2000
        fd.plant(data, [(24, 47, 47, 65535), (0, 50, 40, 256), (23, 30, 60, 2000), (36, 46, 48, 1023),
                        (36, 47, 49, 257), (59, 10, 10, 1999)])
    else:
        fd.plant(data, [(1500, 47, 47, 65535), (100, 48, 48, 700)])
    data[:, mask != 0] = 65535  # EIGER "mask applied": flagged pixels carry the saturation value
    return data, mask


def write_acquisition(name, outdir):
    _, stem, scan, det, shards, _ = ACQS[name]
    data, mask = acquisition_data(name)
    start = 0
    with h5py.File(os.path.join(outdir, f"{stem}_master.h5"), "w") as m:
        e = m.create_group("entry")
        e.attrs["NX_class"] = "NXentry"
        dg = e.create_group("data")
        dg.attrs["NX_class"] = "NXdata"
        for n, cnt in enumerate(shards, 1):
            fn = f"{stem}_data_{n:06d}.h5"
            with h5py.File(os.path.join(outdir, fn), "w") as f:
                g = f.create_group("entry/data")
                d = dset(g, "data", data=data[start:start + cnt], chunks=(1, *det), **BSLZ4)
                d.attrs["image_nr_low"] = np.int32(start + 1)
                d.attrs["image_nr_high"] = np.int32(start + cnt)
            dg[f"data_{n:06d}"] = h5py.ExternalLink(fn, DS)
            start += cnt
        ins = e.create_group("instrument")
        ins.attrs["NX_class"] = "NXinstrument"
        beam = ins.create_group("beam")
        beam.attrs["NX_class"] = "NXbeam"
        dset(beam, "incident_wavelength", data=np.float32(WAVELENGTH_A)).attrs["units"] = "angstrom"
        dt = ins.create_group("detector")
        dt.attrs["NX_class"] = "NXdetector"
        dset(dt, "description", data=np.bytes_("Dectris ARINA (stemflow synthetic)"))
        for k, (v, u) in CALIB.items():
            dset(dt, k, data=np.float32(v)).attrs["units"] = u
        sp = dt.create_group("detectorSpecific")
        sp.attrs["NX_class"] = "NXcollection"
        dset(sp, "pixel_mask", data=mask, chunks=mask.shape, compression="gzip", compression_opts=2)
        for k, v in [("nimages", len(data)), ("ntrigger", 1), ("x_pixels_in_detector", det[1]),
                     ("y_pixels_in_detector", det[0]), ("bit_depth_image", 16), ("saturation_value", 65534)]:
            dset(sp, k, data=np.uint32(v))


def generic(name, n, det, dtype, items=()):
    return fd.plant(fd.stem_stack(seed(name), n, det, dtype), items)


U16_PLANT = [(1, 5, 5, 256), (2, 10, 11, 1234), (3, 16, 16, 65535)]


def write_fixtures(out):
    def f(name, libver=None):
        """New file without object times anywhere (the root group's header included) so reruns are
        byte-identical; libver='latest' => superblock v3, layout message v4 (new chunk indexes)."""
        fapl, fcpl = h5p.create(h5p.FILE_ACCESS), h5p.create(h5p.FILE_CREATE)
        fcpl.set_obj_track_times(False)
        if libver == "latest":
            fapl.set_libver_bounds(h5f.LIBVER_LATEST, h5f.LIBVER_LATEST)
        return h5py.File(h5f.create(os.path.join(out, name).encode(), h5f.ACC_TRUNC, fcpl=fcpl, fapl=fapl))

    write_acquisition("arina", out)
    with f("latest_fixed_u16_192.h5", libver="latest") as h:
        dset(h, "data", data=generic("fixed192", 20, (192, 192), np.uint16, U16_PLANT), chunks=(1, 192, 192), **BSLZ4)
    with f("latest_ext_u16_96.h5", libver="latest") as h:
        dset(h, "data", data=generic("ext96", 30, (96, 96), np.uint16, U16_PLANT), chunks=(1, 96, 96),
             maxshape=(None, 96, 96), **BSLZ4)
    with f("latest_btree2_u16_32.h5", libver="latest") as h:
        dset(h, "data", data=generic("bt2", 300, (32, 32), np.uint16, U16_PLANT), chunks=(1, 32, 32),
             maxshape=(None, None, None), **BSLZ4)
    with f("many_v1_u8_32.h5") as h:
        dset(h, "data", data=generic("v1u8", 320, (32, 32), np.uint8, [(7, 16, 16, 255)]), chunks=(1, 32, 32), **BSLZ4)
    with f("many_fixed_u32_32.h5", libver="latest") as h:
        d = generic("fixu32", 1100, (32, 32), np.uint32, [(1030, 15, 16, 70000), (1099, 31, 31, 4294967295),
                                                           (5, 3, 3, 65536)])
        dset(h, "data", data=d, chunks=(1, 32, 32), **BSLZ4)
    with f("many_ext_u16_32.h5", libver="latest") as h:
        dset(h, "data", data=generic("extmany", 1000, (32, 32), np.uint16, U16_PLANT), chunks=(1, 32, 32),
             maxshape=(None, 32, 32), **BSLZ4)
    with f("odd_u16_33x35.h5") as h:
        dset(h, "data", data=generic("odd", 12, (33, 35), np.uint16, U16_PLANT + [(11, 32, 34, 4095)]),
             chunks=(1, 33, 35), **BSLZ4)
    g = generic("gzip", 16, (32, 32), np.uint16, U16_PLANT)
    with f("gzip_u16_32.h5") as h:
        dset(h, "gzip", data=g, chunks=(1, 32, 32), compression="gzip", compression_opts=4)
        dset(h, "gzip_shuffle", data=g, chunks=(1, 32, 32), compression="gzip", compression_opts=4, shuffle=True)
    with f("raw_u16_32.h5") as h:
        dset(h, "raw", data=generic("raw", 10, (32, 32), np.uint16, U16_PLANT), chunks=(1, 32, 32))
    with f("latest_implicit_u16_32.h5", libver="latest") as h:
        low_level(h, "implicit", generic("implicit", 10, (32, 32), np.uint16, U16_PLANT), (1, 32, 32))
        dset(h, "single", data=generic("single", 4, (32, 32), np.uint16, U16_PLANT), chunks=(4, 32, 32), **BSLZ4)
    with f("contiguous_u16.h5") as h:
        dset(h, "data", data=generic("contig", 8, (32, 32), np.uint16, U16_PLANT))
        dcpl = h5p.create(h5p.DATASET_CREATE)
        dcpl.set_layout(h5d.COMPACT)
        low_level(h, "compact", generic("compact", 2, (16, 16), np.uint16, [(1, 3, 4, 300)]), None, dcpl)
    with f("unsupported_filters.h5") as h:
        z = generic("zstd", 6, (32, 32), np.uint16, U16_PLANT)
        dset(h, "zstd", data=z, chunks=(1, 32, 32), **BSZSTD)
        dcpl = h5p.create(h5p.DATASET_CREATE)
        dcpl.set_chunk((1, 32, 32))
        dcpl.set_filter(31999, h5z.FLAG_OPTIONAL, (1, 2, 3))
        d = low_level(h, "unknown", None, None, dcpl, shape=(3, 32, 32))
        for i in range(3):  # bytes that no filter 31999 exists to decode; h5py must fail to read them
            d.write_direct_chunk((i, 0, 0), bytes(seed(f"unk{i}").integers(0, 256, 64 + i, np.uint8)), 0)


def low_level(h, name, data, chunks, dcpl=None, shape=None):
    """Dataset made through the low-level API (implicit index: early allocation; compact; unknown filter)."""
    shape = shape or data.shape
    if dcpl is None:
        dcpl = h5p.create(h5p.DATASET_CREATE)
        dcpl.set_chunk(chunks)
        dcpl.set_alloc_time(h5d.ALLOC_TIME_EARLY)
    dcpl.set_obj_track_times(False)
    d = h5d.create(h.id, name.encode(), h5t.STD_U16LE, h5s.create_simple(shape), dcpl=dcpl)
    if data is not None:
        d.write(h5s.ALL, h5s.ALL, np.ascontiguousarray(data))
    return d


# ------------------------------------------------------------------------------------------ oracle


def sha(b):
    return hashlib.sha256(b).hexdigest()


def le_bytes(a):
    a = np.asarray(a)
    return np.ascontiguousarray(a.astype(a.dtype.newbyteorder("<"))).tobytes()


def stats(a):
    a = np.asarray(a)
    s = {"max": int(a.max()), "count_gt_255": int((a > 255).sum()), "count_eq_65535": int((a == 65535).sum())}
    if a.ndim == 3:
        s = {"frame_sums": [int(x) for x in a.reshape(len(a), -1).sum(1, dtype=np.uint64)], **s}
    return s


def describe_dataset(ds, buf):
    dcpl = ds.id.get_create_plist()
    layout = {h5d.CHUNKED: "chunked", h5d.CONTIGUOUS: "contiguous", h5d.COMPACT: "compact"}[dcpl.get_layout()]
    filters = [dcpl.get_filter(i) for i in range(dcpl.get_nfilters())]
    index, _ = fd.probe_index(buf, h5py.h5o.get_info(ds.id).addr) if layout == "chunked" else (None, None)
    r = {"shape": list(ds.shape), "maxshape": list(ds.maxshape) if ds.maxshape is not None else None,
         "dtype": ds.dtype.name, "chunks": list(ds.chunks) if ds.chunks else None, "layout": layout,
         "index": index, "filters": [{"id": f[0], "cd_values": list(f[2])} for f in filters],
         "num_chunks": None, "chunk_info": None}
    if layout == "chunked":
        n = ds.id.get_num_chunks()
        infos = [ds.id.get_chunk_info(i) for i in range(n)]
        r["num_chunks"] = n
        r["chunk_info"] = [[list(c.chunk_offset), c.byte_offset, c.size, c.filter_mask] for c in infos]
    ok = all(f[0] in SUPPORTED and (f[0] != 32008 or len(f[2]) < 5 or f[2][4] in (0, 2)) for f in filters)
    r["readable"] = ok
    if not ok:
        r["expected_error"] = "unsupported"
    try:
        a = ds[()]
    except (OSError, ValueError):
        return r
    r["sha256"] = sha(le_bytes(a))
    if a.dtype.kind in "ui" and a.ndim:
        r.update(stats(a))
    return r


def describe_file(path):
    with open(path, "rb") as fh:
        buf = fh.read()
    out = {"size": len(buf), "sha256": sha(buf), "datasets": {}, "external_links": {}}
    with h5py.File(path, "r") as f:
        def walk(g, prefix):
            for k in g:
                p, link = f"{prefix}/{k}", g.get(k, getlink=True)
                if isinstance(link, h5py.ExternalLink):
                    out["external_links"][p] = [link.filename, link.path]
                elif isinstance(link, h5py.HardLink):
                    o = g[k]
                    if isinstance(o, h5py.Group):
                        walk(o, p)
                    else:
                        out["datasets"][p] = describe_dataset(o, buf)
        walk(f, "")
    return out


def describe_acquisition(name, d):
    _, stem, scan, det, shards, _ = ACQS[name]
    master = f"{stem}_master.h5"
    with h5py.File(os.path.join(d, master), "r") as m:
        links = sorted(k for k in m["entry/data"] if k.startswith("data_"))
        files = [m["entry/data"].get(k, getlink=True).filename for k in links]
        data = np.concatenate([m[f"entry/data/{k}"][()] for k in links])
        mask = m[MASK][()]
        dt = m["entry/instrument/detector"]
        calib = {k: float(str(dt[k][()])) for k in CALIB}  # float32 in the file: shortest repr
        calib["incident_wavelength"] = float(str(m["entry/instrument/beam/incident_wavelength"][()]) + "e-10")  # file: Å
        for k in ("nimages", "ntrigger"):
            calib[k] = int(dt["detectorSpecific"][k][()])
    un = data[:, mask == 0]
    return {"master": master, "shards": files, "dataset": DS, "scan": list(scan), "detector": list(data.shape[1:]),
            "dtype": data.dtype.name, "frames": len(data), "sha256": sha(le_bytes(data)), **stats(data),
            "pixel_mask": {"path": MASK, "flagged": int((mask != 0).sum()), "sha256": sha(le_bytes(mask)),
                           "flagged_indices": [int(i) for i in np.flatnonzero(mask)]},
            "unflagged": {"max": int(un.max()), "count_gt_255": int((un > 255).sum()),
                          "frame_sums": [int(x) for x in un.sum(1, dtype=np.uint64)]},
            "calibration": calib}


def oracle(d, names):
    files = sorted(x for x in os.listdir(d) if x.endswith(".h5"))
    return {"generator": "scripts/make_fixtures.py", "h5py": h5py.version.version, "hdf5": h5py.version.hdf5_version,
            "files": {x: describe_file(os.path.join(d, x)) for x in files},
            "acquisitions": {n: describe_acquisition(n, d) for n in names}}


def dump(obj, path):
    """Indented JSON, but lists of scalars and chunk_info rows on one line (diffable, small)."""
    def enc(o, ind):
        pad = " " * ind
        if isinstance(o, dict) and o:
            items = [f'{pad} {json.dumps(k)}: {enc(v, ind + 1)}' for k, v in o.items()]
            return "{\n" + ",\n".join(items) + f"\n{pad}}}"
        if isinstance(o, list) and o and all(isinstance(x, list) for x in o):
            return "[\n" + ",\n".join(f"{pad} {json.dumps(x)}" for x in o) + f"\n{pad}]"
        return json.dumps(o)
    with open(path, "w") as fh:
        fh.write(enc(obj, 0) + "\n")


# What each chunked dataset was written to use; asserted against the header probe on write and check.
EXPECTED_INDEX = {"latest_fixed_u16_192.h5": "fixed-array", "latest_ext_u16_96.h5": "extensible-array",
                  "latest_btree2_u16_32.h5": "btree-v2", "many_fixed_u32_32.h5": "fixed-array",
                  "many_ext_u16_32.h5": "extensible-array", "latest_implicit_u16_32.h5/implicit": "implicit",
                  "latest_implicit_u16_32.h5/single": "single"}


def check_indexes(o):
    errs = []
    for fn, f in o["files"].items():
        for p, ds in f["datasets"].items():
            want = EXPECTED_INDEX.get(f"{fn}{p}", EXPECTED_INDEX.get(fn, "btree-v1"))
            if ds["layout"] == "chunked" and ds["index"] != want:
                errs.append(f"{fn}{p}: index {ds['index']}, intended {want}")
    return errs


def diff(a, b, path="", out=None):
    out = [] if out is None else out
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                out.append(f"{path}/{k}: {'missing in committed' if k not in a else 'missing in recomputed'}")
            else:
                diff(a[k], b[k], f"{path}/{k}", out)
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            diff(x, y, f"{path}[{i}]", out)
    elif a != b:
        out.append(f"{path}: committed {json.dumps(a)[:120]} != recomputed {json.dumps(b)[:120]}")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", help="write DIR/fixtures and DIR/demo instead of test/fixtures and public/demo")
    ap.add_argument("--check", action="store_true", help="verify committed files against their oracle.json")
    ap.add_argument("--no-demo", action="store_true", help="skip the demo acquisition")
    a = ap.parse_args()
    dirs = ({"fixtures": os.path.join(a.out, "fixtures"), "demo": os.path.join(a.out, "demo")} if a.out else
            {"fixtures": os.path.join(ROOT, "test/fixtures"), "demo": os.path.join(ROOT, "public/demo")})
    groups = {"fixtures": ["arina"]} if a.no_demo else {"fixtures": ["arina"], "demo": ["demo"]}
    bad = 0
    for key, names in groups.items():
        d = dirs[key]
        if a.check:
            with open(os.path.join(d, "oracle.json")) as fh:
                committed = json.load(fh)
            fresh = oracle(d, names)
            problems = diff(committed, json.loads(json.dumps(fresh))) + check_indexes(fresh)
            for p in problems[:50]:
                print(f"{d}: {p}", file=sys.stderr)
            print(f"{d}: {'OK' if not problems else f'{len(problems)} differences'}")
            bad += len(problems)
            continue
        os.makedirs(d, exist_ok=True)
        for x in os.listdir(d):
            if x.endswith(".h5"):
                os.remove(os.path.join(d, x))
        write_fixtures(d) if key == "fixtures" else write_acquisition("demo", d)
        o = oracle(d, names)
        errs = check_indexes(o)
        if errs:
            sys.exit("\n".join(errs))
        dump(o, os.path.join(d, "oracle.json"))
        print(f"wrote {d}")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
