import sys

from .cli import main

if __name__ == "__main__":  # not in the child processes that `multiprocessing` spawns
    sys.exit(main())
