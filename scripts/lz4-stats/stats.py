"""LZ4 sequence statistics of the benchmarks' bitshuffle/LZ4 chunks (our encoder, src/codec) against the
bitshuffle library's (liblz4, Debian's python3 package `bitshuffle`) on the same raw frames: sequences, literal
and match bytes per 8 KiB block, and the share of small match offsets, which set the GPU decode's work.
Input: the folder written by scripts/lz4-stats/gen.ts. Run with Debian's /usr/bin/python3."""
import json
import sys

import bitshuffle
import numpy as np

folder = sys.argv[1] if len(sys.argv) > 1 else '/tmp/lz4-stats'
raw = np.fromfile(f'{folder}/raw.bin', dtype='<u2').reshape(-1, 192 * 192)
ours = open(f'{folder}/ours.bin', 'rb').read()
sizes = json.load(open(f'{folder}/ours.json'))


def extended(block, ip, length):
    # A 4-bit length of 15 continues in bytes until one below 255; returns (length, next ip).
    if length == 15:
        while True:
            b = block[ip]
            ip += 1
            length += b
            if b != 255:
                break
    return length, ip


def sequences(block):
    ip = n = lit = mat = 0
    offsets = []
    while ip < len(block):
        token = block[ip]
        length, ip = extended(block, ip + 1, token >> 4)
        ip += length
        lit += length
        n += 1
        if ip >= len(block):
            break
        offsets.append(block[ip] | (block[ip + 1] << 8))
        ip += 2
        m, ip = extended(block, ip, token & 15)
        mat += m + 4
    return n, lit, mat, offsets


def blocks(chunk, header):
    # Our chunks carry the HDF5 filter's 12-byte header; bitshuffle.compress_lz4's output starts at the blocks.
    p = 12 if header else 0
    while p < len(chunk):
        length = int.from_bytes(chunk[p:p + 4], 'big')
        yield sequences(chunk[p + 4:p + 4 + length])
        p += 4 + length


def summarize(name, chunks, header):
    stats = [s for c in chunks for s in blocks(c, header)]
    n = np.array([s[0] for s in stats])
    lit = np.array([s[1] for s in stats])
    mat = np.array([s[2] for s in stats])
    offsets = np.concatenate([np.array(s[3]) for s in stats if s[3]])
    size = sum(len(c) - (12 if header else 0) for c in chunks)
    print(f'{name}: {size / len(chunks):.0f} bytes a frame (without header), {len(stats)} blocks, sequences a block '
          f'{n.mean():.1f} (median {np.median(n):.0f}), literal bytes {lit.mean():.0f}, match bytes {mat.mean():.0f}, '
          f'offsets <= 3: {np.mean(offsets <= 3) * 100:.1f} %, <= 8: {np.mean(offsets <= 8) * 100:.1f} %')


at = 0
ours_chunks = []
for s in sizes:
    ours_chunks.append(ours[at:at + s])
    at += s
summarize('ours (src/codec)', ours_chunks, True)
summarize('bitshuffle (liblz4)', [bytes(bitshuffle.compress_lz4(f.copy(), 0)) for f in raw], False)
