#!/usr/bin/env python3
"""Import circles between the files of src/ (issue 18): prints each circle with its edges and
exits 1 when there is one, 0 when there is none. tests/shape.rs runs the same check in
`cargo test`; this one is for reading the graph (`FILE...` prints a file's edges).

    python3 scripts/circles.py [FILE...]    # FILE (relative to src/): also print its edges

Edges come from the top-level `use` lines of each file (the binary under src/bin/ and test
files are left out). A `use` of an item a module re-exports is followed to the file that
defines it, and a file's own `pub use` lines are not counted as its dependencies. Paths written
out in code without a `use` (`crate::a::b::f()`) are not seen. Circles are the strongly
connected components of more than one file (Tarjan).
"""
import os, re, sys

root = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")
sys.setrecursionlimit(10000)
mods={}
for d,_,fs in os.walk(root):
    for f in fs:
        if not f.endswith('.rs'): continue
        rel=os.path.relpath(os.path.join(d,f),root)
        if rel.startswith('bin/'): continue
        parts=rel[:-3].split('/')
        if parts[-1]=='mod': parts=parts[:-1]
        if parts==['lib']: parts=[]
        mods[tuple(parts)]=rel
rev={v:k for k,v in mods.items()}
def is_test(rel): return rel.endswith('tests.rs') or '/tests/' in rel
def expand(s):
    s=s.strip(); i=s.find('{')
    if i<0: return [s]
    prefix=s[:i]; body=s[i+1:s.rfind('}')]
    items=[];depth=0;cur=''
    for ch in body:
        if ch=='{': depth+=1
        if ch=='}': depth-=1
        if ch==',' and depth==0: items.append(cur);cur=''
        else: cur+=ch
    if cur.strip(): items.append(cur)
    return [prefix+e.strip() for it in items for e in expand(it)]
def stmts(rel):
    src=open(os.path.join(root,rel)).read()
    out=[]
    for pub,st in re.findall(r'^(pub(?:\([a-z]+\))? )?use ([^;]+);',src,re.M):
        for p in expand(' '.join(st.split())):
            name=p.split(' as ')[-1].split('::')[-1].strip()
            out.append((bool(pub),p.split(' as ')[0].strip(),name))
    return out
def absol(mp,path):
    segs=[x for x in path.split('::') if x]
    if not segs: return None
    if segs[0]=='crate': base=[];segs=segs[1:]
    elif segs[0]=='super':
        base=list(mp)
        while segs and segs[0]=='super': base=base[:-1];segs=segs[1:]
    elif segs[0]=='self': base=list(mp);segs=segs[1:]
    elif tuple(list(mp)+[segs[0]]) in mods: base=list(mp)
    else: return None
    return base+segs
reexp={}  # (modfile,name)-> abs path
for mp,rel in mods.items():
    for pub,p,name in stmts(rel):
        if True:
            a=absol(mp,p)
            if a: reexp[(rel,name)]=a
def resolve(full,depth=0):
    for k in range(len(full),-1,-1):
        if tuple(full[:k]) in mods:
            f=mods[tuple(full[:k])]
            rest=full[k:]
            if rest and (f,rest[0]) in reexp and depth<10 and rest[0]!='*':
                return resolve(reexp[(f,rest[0])]+rest[1:],depth+1)
            return f
edges={}
for mp,rel in mods.items():
    if is_test(rel): continue
    for pub,p,name in stmts(rel):
        if pub: continue  # re-exports are not dependencies of the index
        a=absol(mp,p)
        if not a: continue
        t=resolve(a)
        if t and t!=rel: edges.setdefault(rel,set()).add(t)
idx={};low={};st=[];on=set();sccs=[];c=[0]
def sc(v):
    idx[v]=low[v]=c[0];c[0]+=1;st.append(v);on.add(v)
    for w in edges.get(v,()):
        if w not in idx: sc(w);low[v]=min(low[v],low[w])
        elif w in on: low[v]=min(low[v],idx[w])
    if low[v]==idx[v]:
        comp=[]
        while True:
            w=st.pop();on.discard(w);comp.append(w)
            if w==v:break
        if len(comp)>1: sccs.append(sorted(comp))
for v in sorted(mods.values()):
    if v not in idx: sc(v)
for s in sccs:
    print(len(s),'files in a circle:')
    for f in s: print('   ',f,'->',sorted(x for x in edges.get(f,()) if x in s))
if len(sys.argv)>1:
    for f in sys.argv[1:]: print(f,'->',sorted(edges.get(f,())))
if not sccs:
    print('no import circle between the files of src/')
sys.exit(1 if sccs else 0)
