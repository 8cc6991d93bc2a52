"""``python -m memory_layer.engine``: run the engine in the foreground (hooks start it
detached through ``lifecycle.spawn``)."""

import os
import sys

from memory_layer.engine.server import serve

if __name__ == "__main__":
    code = serve()
    sys.stderr.flush()
    # Everything is closed and the lock released: skip interpreter teardown (model
    # threads, atexit hooks), which can take a second and would outlive `engine stop`.
    os._exit(code)
