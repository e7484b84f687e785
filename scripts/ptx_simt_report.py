#!/usr/bin/env python3
"""SIMT private memory per function in the PTX of GCC's nvptx offload compiler.

Inside a `simd` region GCC 12 gives every lane-private value that is not a register (an array,
a Vec, a variable whose address is taken, including the non-register locals of a function inlined
into the loop) a slot in per-lane local memory: GOMP_SIMT_ENTER_ALLOC, printed as

    cvta.local.u64 %rK, %simtstack_ar + 136;   // every simd region declares %simtstack_ar[136]
    sub.u64 %rK, %rK, BYTES;                   // BYTES: the lane's private data (0: none)

and the values are then loaded and stored at [%rK+offset]. This script reports, per function of
the PTX written by `-foffload-options=-save-temps` (FILE.xnvptx-none.mkoffload*.s): the SIMT
regions entered, the largest private allocation in bytes, the loads and stores through it (the
save of %stack at -8 excluded), other `.local` arrays, and a summary per kernel (the $_omp_fn$N
functions of each target region, summed over the variants' workloads).

usage: ptx_simt_report.py FILE.s [--all]   (--all: list every function, not only those with
                                             private bytes)
"""
import re
import subprocess
import sys
from collections import defaultdict

HEAD = re.compile(r'^(?:\.visible |\.weak )?\.(entry|func)\s+(?:\([^)]*\)\s*)?(\S+)\s*\(.*\)\s*$')
ENTER = re.compile(r'cvta\.local\.u64\s+(%r\d+),\s*%simtstack_ar\s*\+\s*\d+;\s*sub\.u64\s+\1,\s*\1,\s*(\d+);')


def functions(text):
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        m = HEAD.match(lines[i])
        if m and i + 1 < len(lines) and lines[i + 1].startswith('{'):
            body = []
            i += 1
            depth = 0
            while i < len(lines):
                body.append(lines[i])
                depth += lines[i].count('{') - lines[i].count('}')
                if depth == 0 and lines[i].startswith('}'):
                    break
                i += 1
            yield m.group(2), body
        i += 1


def analyse(body):
    text = '\n'.join(body)
    enters = [(m.group(1), int(m.group(2))) for m in ENTER.finditer(text)]
    regs = {r for r, _ in enters}
    ld = st = 0
    for line in body:
        s = line.strip()
        for reg in regs:
            if re.search(r'\[' + re.escape(reg) + r'(\+\d+)?\]', s):
                if s.startswith('ld'):
                    ld += 1
                elif s.startswith('st'):
                    st += 1
    return {
        'enters': len(enters),
        'alloc': max((b for _, b in enters), default=0),
        'ld': ld,
        'st': st,
        'local_arrays': len(re.findall(r'\.local[^;]*%(?!simtstack_ar)\w+\[\d+\]', text)),
    }


def describe(name):
    base = name.split('$')[0]
    suffix = name[len(base):]
    demangled = subprocess.run(['c++filt'], input=base, capture_output=True, text=True).stdout.strip()
    m = re.search(r'\(anonymous namespace\)::(\w+(?:<\d+>)?)::pulls<(\w+), (\d)>', demangled)
    if m:
        return f'force {m.group(1)}', f'{m.group(2)} {m.group(3)}d', suffix
    m = re.search(r'OmpTargetSimulation<(\w+), (\d), nbody::omp_target::\(anonymous namespace\)::(\w+(?:<\d+>)?)\s*>::(\w+)',
                  demangled)
    if m:
        return m.group(4), f'{m.group(1)} {m.group(2)}d [{m.group(3)}]', suffix
    return demangled, '', suffix


def main():
    path = sys.argv[1]
    show_all = '--all' in sys.argv
    summary = defaultdict(lambda: [0, 0, 0, 0, 0, 0, 0])
    for name, body in functions(open(path).read()):
        a = analyse(body)
        what, workload, suffix = describe(name)
        s = summary[f'{what} {suffix}']
        s[0] += 1
        s[1] += a['enters'] > 0
        s[2] += a['alloc'] > 0
        s[3] = max(s[3], a['alloc'])
        s[4] += a['ld']
        s[5] += a['st']
        s[6] += a['local_arrays']
        if show_all or a['alloc'] or a['local_arrays']:
            print(f"{what:32} {workload:30} {suffix:16} simt_enters={a['enters']} private_bytes={a['alloc']:4} "
                  f"ld={a['ld']:3} st={a['st']:3} local_arrays={a['local_arrays']}")
    print()
    header = ('kernel function', 'funcs', 'simd', 'private', 'max B', 'simt ld', 'simt st', '.local[]')
    print(f'{header[0]:48} ' + ' '.join(f'{h:>8}' for h in header[1:]))
    for key in sorted(summary):
        print(f'{key:48} ' + ' '.join(f'{v:8}' for v in summary[key]))
    total = [sum(v[i] for v in summary.values()) for i in range(7)]
    total[3] = max((v[3] for v in summary.values()), default=0)
    print(f"{'total':48} " + ' '.join(f'{v:8}' for v in total))


if __name__ == '__main__':
    main()
