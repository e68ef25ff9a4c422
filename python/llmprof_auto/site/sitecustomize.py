"""llmprof's sitecustomize: starts python/llmprof_auto in programs run by `llmprof run -- ...`.

`llmprof run` puts this folder first on the workload's PYTHONPATH when run.auto_stages is on
(docs/nvtx.md, "Programs you did not write for llmprof"). Python imports the first
`sitecustomize` on its path at startup, so this one would hide any other: it therefore loads the
next `sitecustomize` found on sys.path after this folder (the user's, a virtualenv's, Debian's)
and runs it, exactly as site.py would have, then installs the shim's import hooks. Child processes
inherit PYTHONPATH, so they get the same. Nothing here may break the host program: every failure
is swallowed (LLMPROF_AUTO_VERBOSE=1 prints it on stderr).
"""

import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))


def _say(msg):
    if os.environ.get("LLMPROF_AUTO_VERBOSE") == "1":
        sys.stderr.write("llmprof_auto: %s\n" % msg)


def _chain_user_sitecustomize():
    """Runs the next sitecustomize on sys.path (not this one) as site.py would."""
    import importlib.machinery
    import importlib.util
    rest = [p for p in sys.path if os.path.abspath(p or os.getcwd()) != _HERE]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules["sitecustomize"] = module  # `import sitecustomize` gives the user's module
    try:
        spec.loader.exec_module(module)
    except Exception as e:  # what site.execsitecustomize does with a failing sitecustomize
        if sys.flags.verbose:
            sys.excepthook(*sys.exc_info())
        else:
            sys.stderr.write("Error in sitecustomize; set PYTHONVERBOSE for traceback:\n"
                             "%s: %s\n" % (e.__class__.__name__, e))


def _start_shim():
    if os.environ.get("LLMPROF_AUTO_STAGES", "1") == "0":
        return
    root = os.path.dirname(os.path.dirname(_HERE))  # python/: llmprof_auto and llmprof_nvtx
    if root not in sys.path:
        sys.path.append(root)  # last: never shadows the program's own modules
    import llmprof_auto
    llmprof_auto.install()


try:
    _start_shim()
except Exception as _e:  # never take the program down
    _say("not started: %r" % (_e,))
_chain_user_sitecustomize()
