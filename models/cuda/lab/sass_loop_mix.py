# Opcode mix of the largest loop (backward BRA) per kernel in cuobjdump -sass output.
import re, sys, collections, subprocess
txt = open(sys.argv[1]).read() if sys.argv[1].endswith('.sass') else subprocess.run(['cuobjdump', '-sass', sys.argv[1]], capture_output=True, text=True).stdout
flt = sys.argv[2] if len(sys.argv) > 2 else ''
for fn in re.split(r'\n\s+Function : ', txt)[1:]:
    name = fn.split('\n', 1)[0]
    if flt not in name: continue
    ins = []
    for line in fn.split('\n'):
        m = re.match(r'\s+/\*([0-9a-f]{4,})\*/\s+(.*?);', line)
        if m: ins.append((int(m.group(1), 16), m.group(2)))
    best = None
    for k, (addr, s) in enumerate(ins):
        m = re.search(r'BRA\s+(?:`\(\.L_x_\d+\)|0x([0-9a-f]+))', s)
        if 'BRA' in s:
            t = re.search(r'0x([0-9a-f]+)', s)
            if t:
                tgt = int(t.group(1), 16)
                if tgt < addr:
                    body = [x for a, x in ins if tgt <= a <= addr]
                    if best is None or len(body) > len(best): best = body
    if not best: continue
    c = collections.Counter()
    for s in best:
        s = re.sub(r'^@!?U?P\w+\s+', '', s)
        op = s.split()[0]
        c[op] += 1
    fp = sum(v for k, v in c.items() if k.split('.')[0] in ('FADD', 'FMUL', 'FFMA'))
    fp64 = sum(v for k, v in c.items() if k.split('.')[0] in ('DADD', 'DMUL', 'DFMA'))
    mufu = sum(v for k, v in c.items() if k.startswith('MUFU'))
    print(name[:90], 'loop instrs', len(best), 'FP32', fp, 'FP64', fp64, 'MUFU', mufu, 'ratio FP/MUFU %.2f' % ((fp + fp64) / max(mufu, 1)), 'total/MUFU %.2f' % (len(best) / max(mufu, 1)))
    print('   ', ' '.join('%s:%d' % kv for kv in c.most_common(14)))
