#!/usr/bin/env python3
"""Import circles between the files of each crate's sources (issue 18): prints each circle with
its edges and exits 1 when there is one, 0 when there is none. tests/shape.rs runs the same check
in `cargo test`; this one is for reading the graph (`FILE...` prints a file's edges).

    python3 scripts/circles.py [--root DIR]... [FILE...]

--root DIR (relative to the repository, repeatable): the source roots to check, each a crate of
its own; by default src/ and mock-server/src/. FILE: also print its edges; relative to the
repository (`mock-server/src/lib.rs`), or to src/ (`supervisor/live.rs`) when it names no root.

Edges come from the top-level `use` lines of each file (the binary under src/bin/ and test
files are left out). A `use` of an item a module re-exports is followed to the file that
defines it, and a file's own `pub use` lines are not counted as its dependencies. Paths written
out in code without a `use` (`crate::a::b::f()`) are not seen. Circles are the strongly
connected components of more than one file (Tarjan).
"""
import os, re, sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_ROOTS = ["src", "mock-server/src"]
sys.setrecursionlimit(10000)


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


def graph(root):
    """The files of the crate whose sources are in `root`, and their edges (relative to it)."""
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
    return mods, edges


def circles(mods, edges):
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
    return sccs


def main(argv):
    roots, files = [], []
    while argv:
        arg = argv.pop(0)
        if arg == '--root':
            if not argv: sys.exit('--root needs a directory')
            roots.append(argv.pop(0).rstrip('/'))
        elif arg.startswith('--root='):
            roots.append(arg.split('=', 1)[1].rstrip('/'))
        else:
            files.append(arg)
    roots = roots or DEFAULT_ROOTS
    def place(f):
        for root in sorted(roots, key=len, reverse=True):
            if f.startswith(root + '/'):
                return root, f[len(root)+1:]
        return 'src', f
    found = 0
    for root in roots:
        mods, edges = graph(os.path.join(REPO, root))
        sccs = circles(mods, edges)
        for s in sccs:
            print(len(s),f'files in a circle in {root}/:')
            for f in s: print('   ',f,'->',sorted(x for x in edges.get(f,()) if x in s))
        if not sccs:
            print(f'no import circle between the files of {root}/')
        found += len(sccs)
        for f in files:
            at, rel = place(f)
            if at == root:
                print(f'{root}/{rel}','->',sorted(edges.get(rel,())))
    sys.exit(1 if found else 0)


if __name__ == '__main__':
    main(sys.argv[1:])
