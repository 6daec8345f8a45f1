#!/usr/bin/env python3
"""Extract the cubins that the NVIDIA driver's JIT cached (CUDA_CACHE_PATH).

NVIDIA's OpenCL compiles a program to PTX and the driver compiles the PTX
to machine code when the kernel is first used, with its own ptxas, whose
register allocation can differ from the toolkit's. Its compute cache keeps
the result: each entry is a header followed by an ELF image. This writes
the images of the entries found under DIR as OUT/jitN.cubin and prints
their names, for cuobjdump -res-usage / -sass.

    bench/jit_cubins.py DIR OUT
"""
import os
import sys


def main(src, out):
    n = 0
    for root, _, files in os.walk(src):
        for f in sorted(files):
            data = open(os.path.join(root, f), 'rb').read()
            at = data.find(b'\x7fELF')
            if at < 0:
                continue
            n += 1
            path = os.path.join(out, 'jit%d.cubin' % n)
            with open(path, 'wb') as o:
                o.write(data[at:])
            print(path)


if __name__ == '__main__':
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
