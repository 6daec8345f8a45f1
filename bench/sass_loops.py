#!/usr/bin/env python3
"""Instruction counts of the loops in a cuobjdump -sass listing.

A loop is the span from a backward branch's target to the branch. For each
one, print its length, its FP32 arithmetic (FFMA/FMUL/FADD) and its other
opcodes by count: the per-step cost of a kernel's inner loops, which
divided by steps x rows gives instructions per cell.

    bench/sass_loops.py kernel.sass
"""
import re
import sys


def main(path):
    ins = []
    for line in open(path).read().splitlines():
        m = re.match(r'\s*/\*([0-9a-f]{4,})\*/\s*(.*?);', line)
        if m:
            ins.append((int(m.group(1), 16), m.group(2)))
    index = {a: i for i, (a, _) in enumerate(ins)}
    for i, (a, text) in enumerate(ins):
        if 'BRA' not in text:
            continue
        m = re.search(r'0x([0-9a-f]+)', text)
        if not m:
            continue
        target = int(m.group(1), 16)
        if target > a or target not in index:
            continue
        counts = {}
        for _, op_text in ins[index[target]:i + 1]:
            words = op_text.split()
            op = (words[1] if words[0].startswith('@') else words[0])
            op = op.split('.')[0]
            counts[op] = counts.get(op, 0) + 1
        fp = sum(v for k, v in counts.items() if k in ('FFMA', 'FMUL', 'FADD'))
        rest = ", ".join(f"{k}:{v}" for k, v in
                         sorted(counts.items(), key=lambda kv: -kv[1])
                         if k not in ('FFMA', 'FMUL', 'FADD'))
        print(f"loop {target:x}-{a:x}: {i + 1 - index[target]} instr, "
              f"FP32 {fp}, {rest[:300]}")


if __name__ == '__main__':
    main(sys.argv[1])
