"""The `hopgemm` console command of the wheel: runs the C++ command-line tool installed in the package."""
import os
import sys


def main():
    exe = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", "hopgemm")
    if not os.access(exe, os.X_OK):
        sys.exit(f"hopgemm: the command-line tool is missing from the package ({exe}); reinstall hopgemm")
    os.execv(exe, ["hopgemm"] + sys.argv[1:])
