#!/usr/bin/env python3
"""Where the host's time of small calls goes, by clphmm function.

Reads `perf script -F comm,tid,ip,sym` (samples with frame-pointer call
chains) on stdin and counts each sample once, for the innermost frame that
is clphmm's own (the library, clphmm-bench): the OpenCL driver's time lands
on the clphmm function that called it (run_kernel: clEnqueueNDRangeKernel,
cph_collect: the waits, cph_submit_outputs: the copies out, ...). Samples
without such a frame (other threads, chains the driver breaks, the
kernel's) count as "(none)". Prints the threads' sample counts, then the
functions by samples, with microseconds per call when CALLS is given.

    perf script -i perf.data -F comm,tid,ip,sym | bench/perf_ours.py [CALLS HZ]
"""
import collections
import re
import sys

OURS = re.compile(
    r"^(cph_|clphmm_|run_kernel|launch|download|upload|flush|wait_event|"
    r"stage_|finish_|weights_|fill_|key_range|bin_range|radix_|sort_|"
    r"submit|main_pass|one_call|bench_|store_|unpack|pack|set_args|"
    r"prep_tables|account|copy_|read_weights|reset_stats)")


def main():
    calls = float(sys.argv[1]) if len(sys.argv) > 1 else 0
    hz = float(sys.argv[2]) if len(sys.argv) > 2 else 0
    count = collections.Counter()
    threads = collections.Counter()
    header, stack = None, []

    def sample():
        if header is None:
            return
        fields = header.split()
        threads[fields[1] if len(fields) > 1 else "?"] += 1
        count[next((f for f in stack if OURS.match(f)), "(none)")] += 1

    for line in sys.stdin:
        if not line.strip():
            sample()
            header, stack = None, []
        elif not line.startswith((" ", "\t")):
            sample()
            header, stack = line.strip(), []
        else:
            parts = line.strip().split(None, 1)
            if len(parts) > 1:
                sym = parts[1].rsplit(" (", 1)[0]
                stack.append(re.sub(r"\+0x[0-9a-f]+$", "", sym))
    sample()
    total = sum(count.values()) or 1
    print("threads (samples):", threads.most_common(8))
    print("samples:", total)
    for name, n in count.most_common(40):
        per = f"{n / hz / calls * 1e6:8.1f} us/call" if calls and hz else ""
        print(f"{n:8d} {100.0 * n / total:6.2f}% {per}  {name}")


if __name__ == "__main__":
    main()
