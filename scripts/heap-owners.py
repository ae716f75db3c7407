#!/usr/bin/env python3
"""The heap of N idle connections, by owner (BENCHMARKS.md, "Scale").

Reads a heaptrack_print flame-graph stack file (`-F FILE --flamegraph-cost-type leaked`: the
bytes still allocated when the process exited, which for the scale bench's idle child is the
heap of its N idle connections) and prints KiB per connection:

- by holder: the innermost frame of the allocating stack in our crate, rmcp or reqwest: whose
  code asked for the memory, directly or through a library below it;
- by allocating site: the innermost frame outside the standard library and the allocators
  (a tokio channel, hyper's dispatcher, serde_json's maps), with its holder.

    python3 scripts/heap-owners.py STACKS N [--minus BASELINE_STACKS]

With `--minus`, the baseline's bytes (the same process with no connections) are taken off
holder by holder and site by site before dividing by N.
"""
import collections
import re
import sys

STD = ('alloc', 'core', 'std', 'hashbrown', '__rustc', '__rust_alloc', 'malloc', 'calloc',
       'realloc', 'operator new', '??', '<unresolved function>', 'heaptrack', 'alloc_',
       'posix_memalign', 'aligned_alloc')
HOLDERS = ('mcp_resilient', 'rmcp', 'reqwest', 'axum')


def crate(frame):
    """The crate of a demangled frame: the first path segment, generics and impls peeled."""
    f = frame.strip()
    while f and (f[0] in '<&(' or f.startswith('dyn ') or f.startswith('mut ')):
        f = f[1:] if f[:1] in '<&(' else f.split(' ', 1)[1]
    return re.split(r'::|<| ', f, 1)[0]


def owners(path):
    """Bytes by holder and by (site, holder) in one stack file, and their total."""
    by_holder = collections.Counter()
    by_site = collections.Counter()
    total = 0
    for line in open(path, errors='replace'):
        stack, _, count = line.rstrip('\n').rpartition(' ')
        if not count.isdigit():
            continue
        cost = int(count)
        frames = stack.split(';')
        total += cost
        # A stack with none of the three is a task of its own: hyper's connection tasks
        # (spawned by reqwest's pool) and the runtime's.
        holder = 'spawned task (hyper connection, runtime)'
        for frame in frames:
            if crate(frame) in HOLDERS:
                holder = crate(frame)
        site = 'std/alloc'
        for frame in reversed(frames):
            c = crate(frame)
            if '(alloc.rs)' in frame or frame.startswith('_R') or '___rdl_alloc' in frame:
                continue
            if c and not c.startswith(STD) and c not in STD:
                name = re.sub(r'<.*', '', frame.strip().lstrip('<&'))
                site = '::'.join(name.split('::')[:4])
                break
        by_holder[holder] += cost
        by_site[(site, holder)] += cost
    return by_holder, by_site, total


def main():
    path, n = sys.argv[1], int(sys.argv[2])
    by_holder, by_site, total = owners(path)
    if '--minus' in sys.argv:
        base_holder, base_site, base_total = owners(sys.argv[sys.argv.index('--minus') + 1])
        by_holder.subtract(base_holder)
        by_site.subtract(base_site)
        total -= base_total
    print(f'total still allocated: {total / 1024 / n:.1f} KiB per connection (N={n})\n')
    print('| holder | KiB per connection | share |\n|---|---|---|')
    for holder, cost in by_holder.most_common():
        print(f'| {holder} | {cost / 1024 / n:.1f} | {100 * cost / total:.0f} % |')
    print('\n| allocating site | holder | KiB per connection |\n|---|---|---|')
    for (site, holder), cost in by_site.most_common(15):
        print(f'| `{site}` | {holder} | {cost / 1024 / n:.2f} |')


if __name__ == '__main__':
    main()
