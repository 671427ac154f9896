#!/usr/bin/env python3
"""test_check.py — the layering check's own test: the tree as it is passes;
copies of src/ with a use against the layer order, or a circle among the
gateway's files, fail, naming the file and the name (or the include).  Usage: test_check.py [--src DIR]"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
CHECK = os.path.join(HERE, 'check.py')


def run(src):
    """Run the check on a source tree, as make test does: (exit code, output)."""
    p = subprocess.run([sys.executable, CHECK, '--src', src, '--circles', 'gateway'], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, universal_newlines=True)
    return p.returncode, p.stdout


def copy_src(src):
    """A scratch copy of src/ (sources and headers only)."""
    tmp = tempfile.mkdtemp(prefix='dynindex-layers-')
    dst = os.path.join(tmp, 'src')
    shutil.copytree(src, dst, ignore=lambda d, names: [n for n in names
                                                      if os.path.isfile(os.path.join(d, n))
                                                      and not n.endswith(('.c', '.h'))])
    return tmp, dst


def append(path, text):
    with open(path, 'a') as f:
        f.write(text)


# (what, file to change, text appended, strings the failure must name)
CASES = [
    ('an upward call (storage calls the GSI capture of indexes/)',
     'storage/storage.c',
     '\nvoid\nDynLayersTestUpward(void)\n{\n\tDynGsiCapture(NULL, NULL);\n}\n',
     ['src/storage/storage.c:', 'DynGsiCapture', 'upward (storage -> indexes)']),
    ('an upward include (types includes an api/ header)',
     'types/types.c',
     '\n#include "api/api.h"\n',
     ['src/types/types.c:', '#include "api/api.h"', 'upward (types -> api)']),
    ('an upward use of a variable (common reads a worker setting)',
     'common/errors.c',
     '\nint\nDynLayersTestVariable(void)\n{\n\treturn dynindex_worker_naptime_ms;\n}\n',
     ['src/common/errors.c:', 'dynindex_worker_naptime_ms', 'upward (common -> worker)']),
    ('a call between peers (indexes calls streams)',
     'indexes/lsi.c',
     '\nvoid\nDynLayersTestPeer(void)\n{\n\tDynStreamCapture(NULL, NULL, NULL);\n}\n',
     ['src/indexes/lsi.c:', 'DynStreamCapture', 'between peers (indexes -> streams)']),
    ('a lower layer calling the background worker (the circle of issue #27)',
     'write/write.c',
     '\nvoid\nDynLayersTestWorker(void)\n{\n\tDynWorkerInit();\n}\n',
     ['src/write/write.c:', 'DynWorkerInit', 'upward (write -> worker)']),
    ('a circle among the gateway\'s files (the pool calls the standby routing above it)',
     'gateway/pool.c',
     '\nvoid\nlayers_test_circle(void)\n{\n\tstandby_init();\n}\n',
     ['src/gateway/: circle among its files', 'standby_init',
      'src/gateway/pool.c -> src/gateway/standby.c']),
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--src', default=os.path.join(HERE, '..', '..', 'src'))
    args = ap.parse_args()
    src = os.path.normpath(args.src)
    failed = 0

    rc, out = run(src)
    if rc != 0:
        print('FAIL: the tree does not pass the check:\n' + out)
        failed += 1
    else:
        print('ok: the tree passes (%s)' % out.strip().split('\n')[-1])

    for what, rel, text, expect in CASES:
        tmp, dst = copy_src(src)
        try:
            append(os.path.join(dst, rel), text)
            rc, out = run(dst)
            missing = [e for e in expect if e not in out]
            if rc == 0 or missing:
                print('FAIL: %s: exit %d, missing %s in:\n%s' % (what, rc, missing, out))
                failed += 1
            else:
                line = [ln for ln in out.split('\n') if expect[1] in ln][0]
                print('ok: %s fails: %s' % (what, line))
        finally:
            shutil.rmtree(tmp)

    # a name in a comment or a string is no use
    tmp, dst = copy_src(src)
    try:
        append(os.path.join(dst, 'types/types.c'),
               '\n/* DynGsiCapture() */\nconst char *const dyn_layers_test = "DynWorkerInit";\n')
        rc, out = run(dst)
        if rc != 0:
            print('FAIL: names in comments and strings counted as uses:\n' + out)
            failed += 1
        else:
            print('ok: names in comments and strings are not uses')
        # a new subsystem must be placed in a layer
        os.mkdir(os.path.join(dst, 'newthing'))
        append(os.path.join(dst, 'newthing', 'newthing.c'), 'int dyn_layers_new = 1;\n')
        rc, out = run(dst)
        if rc == 0 or 'src/newthing: not in' not in out:
            print('FAIL: a subsystem missing from layers.txt passed:\n' + out)
            failed += 1
        else:
            print('ok: a subsystem missing from layers.txt fails')
    finally:
        shutil.rmtree(tmp)

    print('%d failed' % failed)
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
