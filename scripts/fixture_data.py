"""Synthetic 4D-STEM frames and a tiny HDF5 chunk-index probe for scripts/make_fixtures.py.

Everything here is deterministic given a numpy Generator. Run only with /usr/bin/python3 (Debian h5py).
"""
import struct

import numpy as np

# --------------------------------------------------------------------------------------------
# Sample maps: per scan position, what the beam sees.
# --------------------------------------------------------------------------------------------


def smooth_sample(rows, cols):
    """A smooth phase/thickness map with one crystalline region (fixtures)."""
    y, x = np.mgrid[0:rows, 0:cols].astype(np.float64)
    y /= max(rows - 1, 1)
    x /= max(cols - 1, 1)
    thick = 0.35 + 0.25 * np.sin(2.1 * np.pi * x + 0.7) * np.cos(1.6 * np.pi * y) + 0.3 * x * y
    cryst = np.clip(1.5 * (x + 0.6 * y) - 0.6, 0.0, 1.0)
    theta = 0.25 + 0.5 * y  # lattice rotation (rad), bends slowly
    return {"thick": thick, "cryst": cryst, "theta": theta, "diffuse": 0.5 + thick, "heavy": 0 * thick}


def demo_sample(rows, cols, rng):
    """Polycrystalline film (Voronoi grains, each its own lattice rotation), a vacuum hole and a
    few heavy nanoparticles: BF, ADF and Bragg-disk virtual images all show structure."""
    y, x = np.mgrid[0:rows, 0:cols].astype(np.float64)
    seeds = rng.uniform(0, 1, size=(7, 2)) * [rows, cols]
    d2 = (y[..., None] - seeds[:, 0]) ** 2 + (x[..., None] - seeds[:, 1]) ** 2
    grain = np.argmin(d2, axis=-1)
    srt = np.sort(d2, axis=-1)
    boundary = np.exp(-(np.sqrt(srt[..., 1]) - np.sqrt(srt[..., 0])) ** 2 / 1.5)
    theta = rng.uniform(0, np.pi / 3, size=7)[grain]
    thick = 0.45 + 0.12 * np.sin(x / 7.0) * np.cos(y / 9.0) + 0.25 * boundary
    cryst = (0.35 + 0.65 * rng.uniform(0.2, 1.0, size=7)[grain]) * (1 - 0.8 * boundary)
    hole = ((y - 0.78 * rows) ** 2 + (x - 0.2 * cols) ** 2) < (0.13 * rows) ** 2
    thick[hole] = 0.02
    cryst[hole] = 0.0
    diffuse = 0.4 + thick
    heavy = np.zeros_like(thick)
    for cy, cx, r in [(0.2, 0.25, 3.2), (0.3, 0.7, 4.5), (0.62, 0.55, 2.6), (0.85, 0.8, 3.8), (0.5, 0.15, 2.2)]:
        rr = np.sqrt((y - cy * rows) ** 2 + (x - cx * cols) ** 2)
        p = np.clip(r - rr + 0.5, 0, 1) * np.sqrt(np.clip(1 - (rr / (r + 0.5)) ** 2, 0, 1))
        thick += 1.6 * p
        diffuse += 2.0 * p
        heavy += p
        cryst *= 1 - 0.7 * p
    return {"thick": thick, "cryst": cryst, "theta": theta, "diffuse": diffuse, "heavy": heavy}


# --------------------------------------------------------------------------------------------
# Frames
# --------------------------------------------------------------------------------------------


def _disk(yy, xx, cy, cx, r):
    return np.clip(r - np.sqrt((yy - cy) ** 2 + (xx - cx) ** 2) + 0.5, 0.0, 1.0)


def render_frames(rng, sample, det, dtype, bf=14.0, bragg=3.0, bg=0.45, tds=0.5):
    """Poisson-sampled CBED frames, one per scan position (row-major), shape (rows*cols, H, W).

    Bright-field disk (radius ~ det/6) whose centre drifts sub-pixel across the scan (descan),
    interior mean bf*exp(-thick) counts; six first-order Bragg disks of the same radius on a hexagonal
    lattice rotated by theta, intensity bragg*cryst; diffuse background decaying with radius, plus a
    broad high-angle (thermal diffuse, Z-contrast) term where the sample has heavy atoms."""
    h, w = det
    rows, cols = sample["thick"].shape
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float64)
    r = min(h, w) / 6.0
    gmag = 2.25 * r
    c0y, c0x = (h - 1) / 2 + 0.3, (w - 1) / 2 - 0.2
    out = np.empty((rows * cols, h, w), dtype=dtype)
    for k in range(rows * cols):
        i, j = divmod(k, cols)
        cy = c0y + 0.7 * i / max(rows - 1, 1) - 0.35  # descan: < 1 px over the scan
        cx = c0x - 0.5 * j / max(cols - 1, 1) + 0.25
        rad = np.sqrt((yy - cy) ** 2 + (xx - cx) ** 2)
        lam = bg * sample["diffuse"][i, j] * np.exp(-rad / (min(h, w) / 9.0))
        if sample["heavy"][i, j] > 0:
            lam += tds * sample["heavy"][i, j] * np.exp(-rad / (min(h, w) / 3.0))
        lam += bf * np.exp(-sample["thick"][i, j]) * _disk(yy, xx, cy, cx, r)
        a = sample["cryst"][i, j] * bragg
        if a > 0:
            for n in range(6):
                t = sample["theta"][i, j] + n * np.pi / 3
                lam += a * (0.8 + 0.4 * (n % 2)) * _disk(yy, xx, cy + gmag * np.sin(t), cx + gmag * np.cos(t), r)
        out[k] = rng.poisson(lam)
    return out


def stem_stack(rng, n, det, dtype, **kw):
    """n frames of a line-wrapped scan over the smooth sample (for the generic fixtures)."""
    cols = int(np.ceil(np.sqrt(n)))
    rows = -(-n // cols)
    return render_frames(rng, smooth_sample(rows, cols), det, dtype, **kw)[:n]


def plant(data, items):
    """items: (frame, row, col, value). Writes exact values into the stack."""
    for f, r, c, v in items:
        data[f, r, c] = v
    return data


# --------------------------------------------------------------------------------------------
# Chunk-index probe: reads the data layout message from the object header (offsets/lengths 8 bytes,
# no user block: h5py defaults). Returns (index_name, details) for chunked datasets.
# --------------------------------------------------------------------------------------------

_INDEX = {1: "single", 2: "implicit", 3: "fixed-array", 4: "extensible-array", 5: "btree-v2"}


def _messages(buf, addr):
    """Yield (type, body) of every header message, following continuation messages."""
    blocks, out = [], []
    if buf[addr:addr + 4] == b"OHDR":
        flags = buf[addr + 5]
        p = addr + 6 + (16 if flags & 0x20 else 0) + (4 if flags & 0x10 else 0)
        n = 1 << (flags & 3)
        size = int.from_bytes(buf[p:p + n], "little")
        blocks.append((p + n, p + n + size, 2, flags))
    else:
        size = struct.unpack_from("<I", buf, addr + 8)[0]
        blocks.append((addr + 16, addr + 16 + size, 1, 0))
    while blocks:
        p, end, ver, flags = blocks.pop(0)
        if ver == 2 and buf[p:p + 4] == b"OCHK":
            p += 4
        while p + (4 if ver == 2 else 8) <= end - (4 if ver == 2 else 0):
            if ver == 2:
                mtype, msize, mflags = buf[p], struct.unpack_from("<H", buf, p + 1)[0], buf[p + 3]
                p += 4 + (2 if flags & 0x04 else 0)
            else:
                mtype, msize = struct.unpack_from("<HH", buf, p)
                p += 8
            body = buf[p:p + msize]
            p += msize
            if mtype == 0x10:
                caddr, clen = struct.unpack_from("<QQ", body)
                blocks.append((caddr, caddr + clen, ver, flags))
            out.append((mtype, body))
    return out


def probe_index(buf, addr):
    """Chunk index of the dataset whose object header is at addr in the file bytes buf."""
    for mtype, b in _messages(buf, addr):
        if mtype != 0x08:
            continue
        ver, cls = b[0], b[1]
        if cls != 2:
            return None, {"layout_version": ver}
        if ver == 3:
            iaddr = struct.unpack_from("<Q", b, 3)[0]
            return "btree-v1", {"layout_version": 3, "depth": buf[iaddr + 5]}  # "TREE", type, level
        flags, ndim, enc = b[2], b[3], b[4]
        p = 5 + ndim * enc
        itype = b[p]
        p += 1
        det = {"layout_version": ver}
        if itype == 1 and flags & 2:
            p += 8 + 4
        elif itype == 3:
            det["page_bits"] = b[p]
            p += 1
        elif itype == 4:
            p += 5
        elif itype == 5:
            p += 6
        iaddr = struct.unpack_from("<Q", b, p)[0]
        if itype == 3:  # FAHD: sig, ver, client, entry size, page bits, max entries
            det["entries"] = struct.unpack_from("<Q", buf, iaddr + 8)[0]
            det["paged"] = det["entries"] > (1 << det["page_bits"])
        elif itype == 4:  # EAHD ... statistics: nsuper? nsec blocks, size, ndata blocks, size, max idx, nelmts
            det["secondary_blocks"], _, det["data_blocks"], _, _, det["elements"] = struct.unpack_from(
                "<6Q", buf, iaddr + 12)
        elif itype == 5:  # BTHD: sig, ver, type, node size, record size, depth, ..., nrecords at +26
            det["depth"] = struct.unpack_from("<H", buf, iaddr + 12)[0]
            det["records"] = struct.unpack_from("<Q", buf, iaddr + 26)[0]
        return _INDEX[itype], det
    return None, {}
