"""Score the heuristics' real picks (over the whole candidate space) on measured tune logs, for two builds.

    python bench/score_picks.py OLD/hopgemm NEW/hopgemm

bench/fit_heuristics.py scores the model's argmin over the candidates a log measured, which flatters a model whose
pick lies outside them. Here each build's `hopgemm explain --shape role:MxNxK --top 1` gives the model's own top pick
(the tuned table ignored); a pick is scored by its measured time over the best measured, and picks the log never
measured are counted apart. The sets are the 2026-11-22 tune logs in bench/results.
"""
import importlib.util
import math
import re
import subprocess
import sys
spec=importlib.util.spec_from_file_location('fh', __file__.replace('score_picks.py', 'fit_heuristics.py')); fh=importlib.util.module_from_spec(spec); spec.loader.exec_module(fh)
R=__file__.replace('score_picks.py', 'results/')
sets={'mid-m':fh.load(R+'h100-2026-11-22-tune-mid-m-candidates.log',R+'h100-2026-11-22-mid-m.txt',80),
'decode':fh.load(R+'h100-2026-11-22-tune-decode-candidates.log',R+'h100-2026-11-22-decode-m.txt',80),
'tune40':fh.load(R+'h100-2026-11-22-tune40-fwd-candidates.log',R+'h100-2026-11-22-tune40-fwd.log',40),
'heldout':fh.load(R+'h100-2026-11-22-heldout-candidates.log',R+'h100-2026-11-22-heldout-summary.txt',40),
'heldout2':fh.load(R+'h100-2026-11-22-heldout2-candidates.log',R+'h100-2026-11-22-heldout2-summary.txt',40),
'wgrad-held':fh.load(R+'h100-2026-11-22-heldout-wgrad-candidates.log',R+'h100-2026-11-22-heldout-wgrad-summary.txt',150)}
def picks(cli, rows):
    out = []
    for r in rows:
        text = subprocess.run([cli, "explain", "--shape", f"{r['role']}:{r['m']}x{r['n']}x{r['k']}", "--top", "1"],
                              capture_output=True, text=True, check=True).stdout
        line = next(l for l in text.splitlines() if "model #1:" in l)
        bm, bn = re.search(r"block_m=(\d+), block_n=(\d+)", line).groups()
        cm, cn = re.search(r"cluster=(\d)x(\d)", line).groups()
        ks = re.search(r"k_splits=(\d+)", line).group(1)
        out.append([f"{bm}x{bn}", f"c{cm}x{cn}", f"k{ks}"])
    return out


for name,rows in sets.items():
    uniq={};
    for r in rows: uniq.setdefault((r['role'],r['m'],r['n'],r['k']),r)
    rows=list(uniq.values())
    res={}
    for tag,b in [('old',sys.argv[1]),('new',sys.argv[2])]:
        pk=picks(b,rows); ratios=[]; missing=[]
        for r,p in zip(rows,pk):
            tile,cl,ks=p; bm,bn=map(int,tile.split('x')); cm,cn=map(int,cl[1:].split('x')); ks=int(ks[1:])
            best=min(c['us'] for c in r['cands'])
            match=[c['us'] for c in r['cands'] if (c['bm'],c['bn'],c['cm'],c['cn'],c['ks'])==(bm,bn,cm,cn,ks)]
            if match: ratios.append(match[0]/best)
            else: missing.append(f"{r['m']}x{r['n']}x{r['k']}:{tile} {cl} k{ks}")
        g=math.exp(sum(map(math.log,ratios))/len(ratios)) if ratios else 0
        res[tag]=(g,max(ratios) if ratios else 0,len(missing),len(rows),missing)
    print(f"{name:10s} old {res['old'][0]:.3f} worst {res['old'][1]:.2f} unmeasured {res['old'][2]}/{res['old'][3]} | new {res['new'][0]:.3f} worst {res['new'][1]:.2f} unmeasured {res['new'][2]}/{res['new'][3]}", res['new'][4][:4])
